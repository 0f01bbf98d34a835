import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import {
  countRows,
  newAdmin,
  newCurator,
  newModerator,
  newResident,
  newTerritory,
  newUser,
  newVisitor,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { multipartBody, TINY_PDF } from '../factories/multipart.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A resident's uploaded residency document: its evidence and the curators' work item. */
async function residencySubmission(territoryId: string, resident: TestUser) {
  const body = multipartBody([{ field: 'file', fileName: 'bill.pdf', bytes: TINY_PDF }]);
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/memberships/${territoryId}/verify-residency/document/upload`,
    headers: { ...resident.headers, ...body.headers },
    payload: body.payload,
  });
  expect(res.statusCode).toBe(201);
  return res.json() as { evidenceId: string; workItemId: string };
}

/** A moderation item of the territory (its queue holds more than residency checks). */
async function moderationItem(territoryId: string) {
  const id = newId();
  await t.sql(
    `insert into work_item (id, created_at_utc, type, status, territory_id, subject_type, subject_id, payload, required_capability)
     values ($1, now(), 'MODERATION_CASE', 'PENDING', $2, 'Post', $3, '{}', 'MODERATOR')`,
    [id, territoryId, newId()],
  );
  return id;
}

const queue = (user: TestUser | null, territoryId: string, query = '') =>
  t.app.inject({ method: 'GET', url: `/api/v1/territories/${territoryId}/work-items${query}`, headers: user?.headers ?? {} });
const pagedQueue = (user: TestUser | null, territoryId: string, query = '') =>
  t.app.inject({ method: 'GET', url: `/api/v1/territories/${territoryId}/work-items/paged${query}`, headers: user?.headers ?? {} });
const complete = (user: TestUser | null, territoryId: string, workItemId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: `/api/v1/territories/${territoryId}/work-items/${workItemId}/complete`, headers: user?.headers ?? {}, payload });
const decide = (user: TestUser | null, territoryId: string, workItemId: string, payload: Record<string, unknown>) =>
  t.app.inject({
    method: 'POST',
    url: `/api/v1/territories/${territoryId}/verification/residency/${workItemId}/decide`,
    headers: user?.headers ?? {},
    payload,
  });

describe('GET /api/v1/territories/{territoryId}/work-items', () => {
  it("lists the territory's items to its curators, moderators and admins (skip/take, filtered by type and status)", async () => {
    const territory = await newTerritory(t);
    const other = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const moderator = await newModerator(t, territory);
    const resident = await newResident(t, territory);
    const { workItemId } = await residencySubmission(territory.id, resident);
    const caseId = await moderationItem(territory.id);
    await residencySubmission(other.id, await newResident(t, other));

    for (const user of [curator, moderator, await newAdmin(t)]) {
      const res = await queue(user, territory.id);
      expect(res.statusCode).toBe(200);
      expect(res.json().map((i: { id: string }) => i.id)).toEqual([caseId, workItemId]);
    }
    const residency = await queue(curator, territory.id, '?type=RESIDENCY_VERIFICATION');
    expect(residency.json()).toMatchObject([
      {
        id: workItemId,
        type: 'RESIDENCY_VERIFICATION',
        status: 'PENDING',
        territoryId: territory.id,
        subjectType: 'TerritoryMembership',
        requiredCapability: 'CURATOR',
        requiredPermission: null,
        outcome: null,
        completedAtUtc: null,
      },
    ]);
    const completed = await queue(curator, territory.id, '?status=COMPLETED');
    expect(completed.json()).toEqual([]);
    expect((await queue(curator, territory.id, '?skip=1&take=1')).json().map((i: { id: string }) => i.id)).toEqual([workItemId]);
    expect((await queue(curator, territory.id, '?take=1')).json().map((i: { id: string }) => i.id)).toEqual([caseId]);

    const many = await newTerritory(t);
    for (let i = 0; i < 22; i++) await moderationItem(many.id);
    const manyCurator = await newCurator(t, many);
    const all = (await queue(manyCurator, many.id, '?take=100')).json() as { id: string }[];
    expect(all).toHaveLength(22);
    expect((await queue(manyCurator, many.id)).json()).toHaveLength(20);
    const window = await queue(manyCurator, many.id, '?skip=2&take=3');
    expect(window.json().map((i: { id: string }) => i.id)).toEqual(all.slice(2, 5).map((i) => i.id));
  });

  it('is 403 for a resident, visitor or stranger, 404 unknown territory, 400 bad input, 401 without a token', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    for (const list of [queue, pagedQueue]) {
      for (const user of [await newResident(t, territory, { verified: true }), await newVisitor(t, territory), await newUser(t)]) {
        expect((await list(user, territory.id)).statusCode).toBe(403);
      }
      // A curator of another territory has no access here.
      expect((await list(await newCurator(t, await newTerritory(t)), territory.id)).statusCode).toBe(403);
      expect((await list(curator, UNKNOWN_ID)).statusCode).toBe(404);
      expect((await list(curator, 'nope')).statusCode).toBe(400);
      expect((await list(curator, territory.id, '?type=NOPE')).statusCode).toBe(400);
      const anonymous = await list(null, territory.id);
      expect(anonymous.statusCode).toBe(401);
    }
    for (const query of ['?take=101', '?take=0', '?skip=-1', '?skip=10000001']) expect((await queue(curator, territory.id, query)).statusCode, query).toBe(400);
    for (const query of ['?pageSize=101', '?pageSize=0', '?pageNumber=0']) expect((await pagedQueue(curator, territory.id, query)).statusCode, query).toBe(400);
  });
});

describe('GET /api/v1/territories/{territoryId}/work-items/paged', () => {
  it("pages the territory's items to its curators, moderators and admins (filtered by type and status)", async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const moderator = await newModerator(t, territory);
    const { workItemId } = await residencySubmission(territory.id, await newResident(t, territory));
    const caseId = await moderationItem(territory.id);

    for (const user of [curator, moderator, await newAdmin(t)]) {
      const res = await pagedQueue(user, territory.id);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ pageNumber: 1, pageSize: 20, totalCount: 2, totalPages: 1, hasPreviousPage: false, hasNextPage: false });
      expect(res.json().items.map((i: { id: string }) => i.id)).toEqual([caseId, workItemId]);
    }
    const residency = await pagedQueue(curator, territory.id, '?type=residency_verification');
    expect(residency.json()).toMatchObject({ totalCount: 1, items: [{ id: workItemId, type: 'RESIDENCY_VERIFICATION' }] });
    expect((await pagedQueue(curator, territory.id, '?status=COMPLETED')).json()).toMatchObject({ items: [], totalCount: 0 });
    const paged = await pagedQueue(curator, territory.id, '?pageSize=1&pageNumber=2');
    expect(paged.json()).toMatchObject({ totalCount: 2, totalPages: 2, hasPreviousPage: true, hasNextPage: false, items: [{ id: workItemId }] });
  });
});

describe('POST /api/v1/territories/{territoryId}/work-items/{workItemId}/complete', () => {
  it('a curator completes a residency item (APPROVED: DOCUMENTVERIFIED); a moderator completes a moderation case', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const moderator = await newModerator(t, territory);
    const resident = await newResident(t, territory);
    const { workItemId } = await residencySubmission(territory.id, resident);

    // The item itself requires CURATOR: a moderator may not decide it.
    const byModerator = await complete(moderator, territory.id, workItemId, { outcome: 'APPROVED' });
    expect(byModerator.statusCode).toBe(403);

    const res = await complete(curator, territory.id, workItemId, { outcome: 'APPROVED', notes: 'Bill matches <i>the</i> address' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: workItemId,
      status: 'COMPLETED',
      outcome: 'APPROVED',
      notes: 'Bill matches the address',
      completedByUserId: curator.id,
    });
    const me = await t.app.inject({ method: 'GET', url: `/api/v1/memberships/${territory.id}/me`, headers: resident.headers });
    expect(me.json()).toMatchObject({ role: 'RESIDENT', residencyVerification: 'DOCUMENTVERIFIED' });
    expect((await complete(curator, territory.id, workItemId, { outcome: 'REJECTED' })).statusCode).toBe(409);

    const caseId = await moderationItem(territory.id);
    const moderated = await complete(moderator, territory.id, caseId, { outcome: 'NOACTION' });
    expect(moderated.statusCode).toBe(200);
    expect(moderated.json()).toMatchObject({ type: 'MODERATION_CASE', outcome: 'NOACTION' });
  });

  it("is 404 for another territory's item or an unknown one, 400 for a bad outcome, 403 for a visitor, 401; nothing changes", async () => {
    const territory = await newTerritory(t);
    const other = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const { workItemId: foreign } = await residencySubmission(other.id, await newResident(t, other));
    const { workItemId } = await residencySubmission(territory.id, await newResident(t, territory));
    expect((await complete(curator, territory.id, foreign, { outcome: 'APPROVED' })).statusCode).toBe(404);
    expect((await complete(curator, territory.id, UNKNOWN_ID, { outcome: 'APPROVED' })).statusCode).toBe(404);
    expect((await complete(curator, territory.id, workItemId, { outcome: 'MAYBE' })).statusCode).toBe(400);
    expect((await complete(curator, territory.id, workItemId, {})).statusCode).toBe(400);
    expect((await complete(curator, territory.id, 'x', { outcome: 'APPROVED' })).statusCode).toBe(400);
    expect((await complete(await newVisitor(t, territory), territory.id, workItemId, { outcome: 'APPROVED' })).statusCode).toBe(403);
    expect((await complete(null, territory.id, workItemId, { outcome: 'APPROVED' })).statusCode).toBe(401);
    expect(await countRows(t, 'work_item', "status = 'PENDING' and id in ($1, $2)", [foreign, workItemId])).toBe(2);
  });
});

describe('POST /api/v1/territories/{territoryId}/verification/residency/{workItemId}/decide', () => {
  it('APPROVED sets DOCUMENTVERIFIED; REJECTED leaves NONE; deciding twice is 409', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const approvedResident = await newResident(t, territory);
    const rejectedResident = await newResident(t, territory);
    const approved = await residencySubmission(territory.id, approvedResident);
    const rejected = await residencySubmission(territory.id, rejectedResident);

    const ok = await decide(curator, territory.id, approved.workItemId, { outcome: 'APPROVED' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ id: approved.workItemId, type: 'RESIDENCY_VERIFICATION', status: 'COMPLETED', outcome: 'APPROVED', notes: null });
    const [row] = await t.sql<{ document_verified_at_utc: Date | null }>('select document_verified_at_utc from territory_membership where user_id = $1', [
      approvedResident.id,
    ]);
    expect(row?.document_verified_at_utc).not.toBeNull();
    expect(await countRows(t, 'audit_entry', "action = 'work_item.completed' and subject_id = $1", [approved.workItemId])).toBe(1);

    const no = await decide(curator, territory.id, rejected.workItemId, { outcome: 'REJECTED', notes: 'Unreadable' });
    expect(no.statusCode).toBe(200);
    const me = await t.app.inject({ method: 'GET', url: `/api/v1/memberships/${territory.id}/me`, headers: rejectedResident.headers });
    expect(me.json()).toMatchObject({ residencyVerification: 'NONE' });
    expect((await decide(curator, territory.id, rejected.workItemId, { outcome: 'APPROVED' })).statusCode).toBe(409);
  });

  it("no one decides their own request: a curator's own residency document is 403 OWN_REQUEST on both routes, nothing changes; another curator decides it", async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    await t.sql('update territory_membership set geo_verified_at_utc = null where user_id = $1', [curator.id]);
    const { workItemId } = await residencySubmission(territory.id, curator);
    for (const res of [
      await decide(curator, territory.id, workItemId, { outcome: 'APPROVED' }),
      await complete(curator, territory.id, workItemId, { outcome: 'APPROVED' }),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('OWN_REQUEST');
    }
    expect(await t.sql('select status from work_item where id = $1', [workItemId])).toEqual([{ status: 'PENDING' }]);
    const me = await t.app.inject({ method: 'GET', url: `/api/v1/memberships/${territory.id}/me`, headers: curator.headers });
    expect(me.json().residencyVerification).toBe('NONE');
    expect((await decide(await newCurator(t, territory), territory.id, workItemId, { outcome: 'APPROVED' })).statusCode).toBe(200);
  });

  it('is 403 for a moderator, 404 for another type or territory, 400 for NOACTION or a malformed id, 401', async () => {
    const territory = await newTerritory(t);
    const other = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const moderator = await newModerator(t, territory);
    const { workItemId } = await residencySubmission(territory.id, await newResident(t, territory));
    const caseId = await moderationItem(territory.id);
    expect((await decide(moderator, territory.id, workItemId, { outcome: 'APPROVED' })).statusCode).toBe(403);
    expect((await decide(curator, territory.id, caseId, { outcome: 'APPROVED' })).statusCode).toBe(404);
    expect((await decide(curator, other.id, workItemId, { outcome: 'APPROVED' })).statusCode).toBe(403);
    expect((await decide(await newCurator(t, other), other.id, workItemId, { outcome: 'APPROVED' })).statusCode).toBe(404);
    expect((await decide(curator, territory.id, workItemId, { outcome: 'NOACTION' })).statusCode).toBe(400);
    expect((await decide(curator, territory.id, 'x', { outcome: 'APPROVED' })).statusCode).toBe(400);
    expect((await decide(null, territory.id, workItemId, { outcome: 'APPROVED' })).statusCode).toBe(401);
    expect(await countRows(t, 'work_item', "status = 'PENDING' and id = $1", [workItemId])).toBe(1);
  });

  it("a transfer cancels the old membership's pending document check", async () => {
    const home = await newTerritory(t);
    const target = await newTerritory(t);
    const homeCurator = await newCurator(t, home);
    const targetCurator = await newCurator(t, target);
    const resident = await newResident(t, home);
    const { workItemId } = await residencySubmission(home.id, resident);
    const transfer = await t.app.inject({
      method: 'POST',
      url: '/api/v1/memberships/transfer-residency',
      headers: resident.headers,
      payload: { toTerritoryId: target.id },
    });
    expect(transfer.statusCode).toBe(201);
    expect(
      (await t.app.inject({ method: 'POST', url: `/api/v1/join-requests/${transfer.json().id}/approve`, headers: targetCurator.headers })).statusCode,
    ).toBe(200);
    const [item] = await t.sql<{ status: string }>('select status from work_item where id = $1', [workItemId]);
    expect(item?.status).toBe('CANCELLED');
    expect((await decide(homeCurator, home.id, workItemId, { outcome: 'APPROVED' })).statusCode).toBe(409);
  });
});

describe('GET /api/v1/territories/{territoryId}/evidences/{evidenceId}/download', () => {
  it('streams the file to a curator or moderator of the territory and audits the read', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const moderator = await newModerator(t, territory);
    const { evidenceId } = await residencySubmission(territory.id, await newResident(t, territory));
    for (const user of [curator, moderator]) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/territories/${territory.id}/evidences/${evidenceId}/download`, headers: user.headers });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/pdf');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${evidenceId}.pdf"`);
      expect(res.rawPayload.equals(TINY_PDF)).toBe(true);
    }
    expect(await countRows(t, 'audit_entry', "action = 'evidence.downloaded' and subject_id = $1", [evidenceId])).toBe(2);
  });

  it("is 403 for others, 404 for another territory's or unknown evidence, 400 malformed, 401 without a token", async () => {
    const territory = await newTerritory(t);
    const other = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const { evidenceId } = await residencySubmission(territory.id, await newResident(t, territory));
    const { evidenceId: foreign } = await residencySubmission(other.id, await newResident(t, other));
    const url = (territoryId: string, id: string) => `/api/v1/territories/${territoryId}/evidences/${id}/download`;
    for (const user of [await newVisitor(t, territory), await newResident(t, territory, { verified: true }), await newUser(t)]) {
      expect((await t.app.inject({ method: 'GET', url: url(territory.id, evidenceId), headers: user.headers })).statusCode).toBe(403);
    }
    expect((await t.app.inject({ method: 'GET', url: url(territory.id, foreign), headers: curator.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: url(territory.id, UNKNOWN_ID), headers: curator.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: url(UNKNOWN_ID, evidenceId), headers: curator.headers })).statusCode).toBe(404);
    const malformed = await t.app.inject({ method: 'GET', url: url(territory.id, 'nope'), headers: curator.headers });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'evidenceId' }] });
    const anonymous = await t.app.inject({ method: 'GET', url: url(territory.id, evidenceId) });
    expect(anonymous.statusCode).toBe(401);
    expect(await countRows(t, 'audit_entry', "action = 'evidence.downloaded' and subject_id in ($1, $2)", [evidenceId, foreign])).toBe(0);
  });
});
