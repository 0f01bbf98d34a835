import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMembership,
  countRows,
  newAdmin,
  newCurator,
  newResident,
  newTerritory,
  newUser,
  newVisitor,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { newId } from '../../src/platform/ids.js';
import { countForks } from '../setup/forks.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let forks: ReturnType<typeof countForks>;

/** Who a request was addressed to, as stored: its requester is never shown the list (finding 11). */
const storedRecipients = async (joinRequestId: string) =>
  (await t.sql<{ id: string }>('select recipient_user_id as id from join_request_recipient where join_request_id = $1 order by 1', [joinRequestId])).map(
    (r) => r.id,
  );
beforeAll(async () => {
  t = await createTestApp();
  forks = countForks(t);
});
afterAll(() => t.close());

interface JoinRequestBody {
  id: string;
  territoryId: string;
  requesterUserId: string;
  recipientUserIds: string[];
  message: string | null;
  status: string;
  createdAtUtc: string;
  decidedAtUtc: string | null;
  decidedByUserId: string | null;
}

const create = (user: TestUser, territoryId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: `/api/v1/territories/${territoryId}/join-requests`, headers: user.headers, payload });
const becomeResident = (user: TestUser, territoryId: string, payload: Record<string, unknown> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/v1/memberships/${territoryId}/become-resident`, headers: user.headers, payload });
const act = (user: TestUser, id: string, action: 'approve' | 'reject' | 'cancel') =>
  t.app.inject({ method: 'POST', url: `/api/v1/join-requests/${id}/${action}`, headers: user.headers });

/** A territory with one curator and a visitor who has asked to become RESIDENT. */
async function pendingRequest() {
  const territory = await newTerritory(t);
  const curator = await newCurator(t, territory);
  const requester = await newVisitor(t, territory);
  const res = await becomeResident(requester, territory.id);
  expect(res.statusCode).toBe(201);
  return { territory, curator, requester, request: res.json() as JoinRequestBody };
}

describe('POST /api/v1/territories/{territoryId}/join-requests', () => {
  it('addresses the eligible named recipients: verified residents, curators, system admins', async () => {
    const territory = await newTerritory(t);
    const verified = await newResident(t, territory, { verified: true });
    const curator = await newCurator(t, territory);
    const admin = await newAdmin(t);
    const requester = await newVisitor(t, territory);
    const res = await create(requester, territory.id, { recipientUserIds: [verified.id, curator.id, admin.id], message: 'Hello' });
    expect(res.statusCode).toBe(201);
    const body = res.json() as JoinRequestBody;
    expect(body).toMatchObject({ territoryId: territory.id, requesterUserId: requester.id, status: 'PENDING', message: 'Hello' });
    expect(body.recipientUserIds).toEqual([]);
    expect(await storedRecipients(body.id)).toEqual([verified.id, curator.id, admin.id].sort());
    expect(res.headers.location).toBe(`/api/v1/join-requests/${body.id}`);
    expect(await countRows(t, 'join_request_recipient', 'join_request_id = $1', [body.id])).toBe(3);
  });

  it('drops ineligible recipients (unverified resident, visitor, unknown user, the requester) and falls back to the curators', async () => {
    const territory = await newTerritory(t);
    const unverified = await newResident(t, territory);
    const visitor = await newVisitor(t, territory);
    const curator = await newCurator(t, territory);
    const requester = await newVisitor(t, territory);
    const res = await create(requester, territory.id, { recipientUserIds: [unverified.id, visitor.id, UNKNOWN_ID] });
    expect(res.statusCode).toBe(201);
    expect(await storedRecipients(res.json().id)).toEqual([curator.id]);
    const self = await newTerritory(t);
    const selfCurator = await newCurator(t, self);
    const selfRequester = await newUser(t);
    const own = await create(selfRequester, self.id, { recipientUserIds: [selfRequester.id] });
    expect(await storedRecipients(own.json().id)).toEqual([selfCurator.id]);
  });

  it('falls back to the system admins when the territory has no curator; the requester never addresses themself', async () => {
    const territory = await newTerritory(t);
    const admin = await newAdmin(t);
    const requesterAdmin = await newAdmin(t);
    const res = await create(requesterAdmin, territory.id, { recipientUserIds: [requesterAdmin.id] });
    expect(res.statusCode).toBe(201);
    expect(res.json().recipientUserIds).toEqual([]);
    const recipients = await storedRecipients(res.json().id);
    expect(recipients).toContain(admin.id);
    expect(recipients).not.toContain(requesterAdmin.id);
    // The requesting admin cannot approve their own request either.
    const selfApprove = await act(requesterAdmin, res.json().id, 'approve');
    expect(selfApprove.statusCode).toBe(403);
  });

  it('notifies the recipients through the outbox (JOIN_REQUEST_RECEIVED), in the same transaction', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const requester = await newVisitor(t, territory);
    const res = await create(requester, territory.id, { recipientUserIds: [curator.id] });
    const id = res.json().id as string;
    const rows = await t.sql<{ type: string; recipient_user_ids: string[]; data: Record<string, unknown> }>(
      'select type, recipient_user_ids, data from outbox_message where source_key = $1',
      [`join-request:${id}:received`],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: 'JOIN_REQUEST_RECEIVED', recipient_user_ids: [curator.id], data: { territoryId: territory.id, joinRequestId: id } });
  });

  it('without named recipients (absent, null or empty) addresses the curators and notifies them, as become-resident does', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const secondCurator = await newCurator(t, territory);
    const curators = [curator.id, secondCurator.id].sort();
    for (const payload of [{}, { recipientUserIds: null, message: 'Hello' }, { recipientUserIds: [] }]) {
      const requester = await newVisitor(t, territory);
      const res = await create(requester, territory.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(201);
      const body = res.json() as JoinRequestBody;
      expect(body).toMatchObject({
        territoryId: territory.id,
        requesterUserId: requester.id,
        recipientUserIds: [],
        status: 'PENDING',
        message: (payload as { message?: string }).message ?? null,
      });
      expect(res.headers.location).toBe(`/api/v1/join-requests/${body.id}`);
      expect(await storedRecipients(body.id)).toEqual(curators);
      const outbox = await t.sql<{ type: string; recipient_user_ids: string[] }>('select type, recipient_user_ids from outbox_message where source_key = $1', [
        `join-request:${body.id}:received`,
      ]);
      expect(outbox).toEqual([{ type: 'JOIN_REQUEST_RECEIVED', recipient_user_ids: curators }]);
      // A curator it was addressed to may decide it.
      expect((await act(curator, body.id, 'approve')).statusCode).toBe(200);
    }
  });

  it('without named recipients and without curators addresses the system admins and notifies them', async () => {
    const territory = await newTerritory(t);
    const admin = await newAdmin(t);
    const requester = await newVisitor(t, territory);
    const res = await create(requester, territory.id, {});
    expect(res.statusCode).toBe(201);
    const id = res.json().id as string;
    const recipients = await storedRecipients(id);
    expect(recipients).toContain(admin.id);
    const [admins] = await t.sql<{ ids: string[] }>(
      `select coalesce(array_agg(p.user_id order by p.user_id), '{}') as ids from user_permission p join app_user u on u.id = p.user_id
        where p.permission = 'SYSTEM_ADMIN' and u.deleted_at_utc is null`,
    );
    expect(recipients).toEqual(admins!.ids);
    const outbox = await t.sql<{ type: string; recipient_user_ids: string[] }>('select type, recipient_user_ids from outbox_message where source_key = $1', [
      `join-request:${id}:received`,
    ]);
    expect(outbox).toEqual([{ type: 'JOIN_REQUEST_RECEIVED', recipient_user_ids: recipients }]);
  });

  it('is 400 with more than 3 recipients or malformed, writing nothing; 404 unknown territory; 401 without a token', async () => {
    const territory = await newTerritory(t);
    const requester = await newUser(t);
    const before = await countRows(t, 'join_request');
    const beforeOutbox = await countRows(t, 'outbox_message');
    for (const payload of [
      { recipientUserIds: [UNKNOWN_ID, UNKNOWN_ID, UNKNOWN_ID, UNKNOWN_ID] },
      { recipientUserIds: 'x' },
      { recipientUserIds: [UNKNOWN_ID], message: 5 },
    ]) {
      const res = await create(requester, territory.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    const tooMany = await create(requester, territory.id, { recipientUserIds: [UNKNOWN_ID, UNKNOWN_ID, UNKNOWN_ID, UNKNOWN_ID] });
    expect(tooMany.json().errors).toEqual([{ field: 'recipientUserIds', message: 'at most 3 recipients' }]);
    expect((await create(requester, UNKNOWN_ID, {})).statusCode).toBe(404);
    const anonymous = await t.app.inject({
      method: 'POST',
      url: `/api/v1/territories/${territory.id}/join-requests`,
      payload: { recipientUserIds: [UNKNOWN_ID] },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(await countRows(t, 'join_request')).toBe(before);
    expect(await countRows(t, 'outbox_message')).toBe(beforeOutbox);
  });
});

describe('join-request creation limit', () => {
  it('the 4th creation (create, cancel, recreate) within the window is 429 with the spec body; older ones do not count', async () => {
    const territory = await newTerritory(t);
    await newCurator(t, territory);
    const user = await newUser(t);
    for (let i = 0; i < 3; i++) {
      const created = i % 2 === 0 ? await becomeResident(user, territory.id) : await create(user, territory.id, { recipientUserIds: [UNKNOWN_ID] });
      expect(created.statusCode).toBe(201);
      expect((await act(user, created.json().id, 'cancel')).statusCode).toBe(200);
    }
    const before = await countRows(t, 'join_request');
    const limited = await becomeResident(user, territory.id);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.json()).toMatchObject({
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit exceeded. Please try again later.',
      instance: `/api/v1/memberships/${territory.id}/become-resident`,
    });
    expect((await create(user, territory.id, { recipientUserIds: [UNKNOWN_ID] })).statusCode).toBe(429);
    expect((await create(user, territory.id, {})).statusCode).toBe(429);
    expect(await countRows(t, 'join_request')).toBe(before);

    // Another territory has its own count.
    const other = await newTerritory(t);
    expect((await becomeResident(user, other.id)).statusCode).toBe(201);

    // Creations older than the window (24 h) no longer count.
    await t.sql(`update join_request set created_at_utc = now() - interval '25 hours' where requester_user_id = $1 and territory_id = $2`, [
      user.id,
      territory.id,
    ]);
    expect((await becomeResident(user, territory.id)).statusCode).toBe(201);
  });

  it('holds under concurrent create/cancel cycles: never more than 3 creations', async () => {
    const territory = await newTerritory(t);
    await newCurator(t, territory);
    const user = await newUser(t);
    const statuses: number[] = [];
    const cycle = async () => {
      const res = await becomeResident(user, territory.id);
      statuses.push(res.statusCode);
      if (res.statusCode === 200 || res.statusCode === 201) statuses.push((await act(user, res.json().id, 'cancel')).statusCode);
    };
    await Promise.all(Array.from({ length: 6 }, () => cycle().then(cycle)));
    expect(statuses.every((s) => [200, 201, 429].includes(s))).toBe(true);
    const rows = await countRows(t, 'join_request', 'requester_user_id = $1 and territory_id = $2', [user.id, territory.id]);
    expect(rows).toBeLessThanOrEqual(3);
    expect(statuses.filter((s) => s === 201)).toHaveLength(rows);

    // Keep trying until refused: exactly 3 creations in all.
    for (let i = 0; i < 5; i++) {
      const res = await becomeResident(user, territory.id);
      if (res.statusCode === 429) break;
      await act(user, res.json().id, 'cancel');
    }
    expect(await countRows(t, 'join_request', 'requester_user_id = $1 and territory_id = $2', [user.id, territory.id])).toBe(3);
    expect((await becomeResident(user, territory.id)).statusCode).toBe(429);
  });

  it('6 concurrent creations make one request: the others get the pending one', async () => {
    const territory = await newTerritory(t);
    await newCurator(t, territory);
    const user = await newUser(t);
    const all = await Promise.all(Array.from({ length: 6 }, () => becomeResident(user, territory.id)));
    expect(all.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(all.map((r) => r.json().id)).size).toBe(1);
  });
});

describe('GET /api/v1/join-requests/incoming (and /paged)', () => {
  it('lists the requests addressed to me or to my territories as curator, newest first, filtered by status', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const verified = await newResident(t, territory, { verified: true });
    const a = await newVisitor(t, territory);
    const b = await newVisitor(t, territory);
    const toVerified = (await create(a, territory.id, { recipientUserIds: [verified.id] })).json() as JoinRequestBody;
    const toCurator = (await becomeResident(b, territory.id)).json() as JoinRequestBody;
    expect((await act(curator, toCurator.id, 'reject')).statusCode).toBe(200);

    const mine = await t.app.inject({ method: 'GET', url: '/api/v1/join-requests/incoming', headers: verified.headers });
    expect(mine.statusCode).toBe(200);
    expect((mine.json() as JoinRequestBody[]).map((r) => r.id)).toEqual([toVerified.id]);

    // The curator sees both: one addressed to them, one in their territory.
    const curatorList = await t.app.inject({ method: 'GET', url: '/api/v1/join-requests/incoming', headers: curator.headers });
    expect((curatorList.json() as JoinRequestBody[]).map((r) => r.id)).toEqual([toCurator.id, toVerified.id]);
    const pendingOnly = await t.app.inject({ method: 'GET', url: '/api/v1/join-requests/incoming?status=PENDING', headers: curator.headers });
    expect((pendingOnly.json() as JoinRequestBody[]).map((r) => r.id)).toEqual([toVerified.id]);
    const rejected = await t.app.inject({ method: 'GET', url: '/api/v1/join-requests/incoming?status=REJECTED&take=1', headers: curator.headers });
    expect(rejected.json()).toMatchObject([{ id: toCurator.id, status: 'REJECTED', decidedByUserId: curator.id }]);

    const paged = await t.app.inject({ method: 'GET', url: '/api/v1/join-requests/incoming/paged?pageSize=1&pageNumber=2', headers: curator.headers });
    expect(paged.statusCode).toBe(200);
    expect(paged.json()).toMatchObject({ pageNumber: 2, pageSize: 1, totalCount: 2, totalPages: 2, hasPreviousPage: true, hasNextPage: false });
    expect(paged.json().items.map((r: JoinRequestBody) => r.id)).toEqual([toVerified.id]);

    // Neither the requester nor a stranger sees them.
    for (const user of [a, await newUser(t)]) {
      const none = await t.app.inject({ method: 'GET', url: '/api/v1/join-requests/incoming', headers: user.headers });
      expect(none.json()).toEqual([]);
    }
  });

  it('is 400 for bad paging or status, 401 without a token', async () => {
    const user = await newUser(t);
    for (const url of [
      '/api/v1/join-requests/incoming?take=101',
      '/api/v1/join-requests/incoming?status=NOPE',
      '/api/v1/join-requests/incoming/paged?pageSize=0',
    ]) {
      expect((await t.app.inject({ method: 'GET', url, headers: user.headers })).statusCode, url).toBe(400);
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/join-requests/incoming' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/join-requests/incoming/paged' })).statusCode).toBe(401);
  });
});

describe('approve / reject / cancel', () => {
  it('approve by a recipient makes the requester RESIDENT (NONE), notifies them, audits; repeating is idempotent', async () => {
    const { territory, curator, requester, request } = await pendingRequest();
    const res = await act(curator, request.id, 'approve');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: request.id, status: 'APPROVED', decidedByUserId: curator.id, decidedAtUtc: expect.any(String) });
    const membership = await t.app.inject({ method: 'GET', url: `/api/v1/memberships/${territory.id}/me`, headers: requester.headers });
    expect(membership.json()).toMatchObject({ role: 'RESIDENT', residencyVerification: 'NONE' });
    const outbox = await t.sql<{ type: string; recipient_user_ids: string[] }>('select type, recipient_user_ids from outbox_message where source_key = $1', [
      `join-request:${request.id}:decided`,
    ]);
    expect(outbox).toEqual([{ type: 'JOIN_REQUEST_DECIDED', recipient_user_ids: [requester.id] }]);
    expect(await countRows(t, 'audit_entry', "action = 'join-request.approved' and subject_id = $1", [request.id])).toBe(1);

    const again = await act(curator, request.id, 'approve');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ status: 'APPROVED', decidedAtUtc: res.json().decidedAtUtc });
    expect(await countRows(t, 'audit_entry', "action = 'join-request.approved' and subject_id = $1", [request.id])).toBe(1);
    const reject = await act(curator, request.id, 'reject');
    expect(reject.statusCode).toBe(409);
    expect(reject.json()).toMatchObject({ code: 'JOIN_REQUEST_ALREADY_DECIDED' });
  });

  it('a curator who is not a recipient and a system admin may decide; a new requester without membership gets one', async () => {
    const territory = await newTerritory(t);
    const verified = await newResident(t, territory, { verified: true });
    const curator = await newCurator(t, territory);
    const requester = await newUser(t);
    const request = (await create(requester, territory.id, { recipientUserIds: [verified.id] })).json() as JoinRequestBody;
    expect((await act(curator, request.id, 'approve')).statusCode).toBe(200);
    expect(await countRows(t, 'territory_membership', "user_id = $1 and territory_id = $2 and role = 'RESIDENT'", [requester.id, territory.id])).toBe(1);

    const other = await pendingRequest();
    const admin = await newAdmin(t);
    expect((await act(admin, other.request.id, 'reject')).statusCode).toBe(200);
  });

  it('reject leaves the membership unchanged; anyone else is 403; unknown 404; malformed 400; no token 401', async () => {
    const { territory, curator, requester, request } = await pendingRequest();
    const stranger = await newUser(t);
    const visitor = await newVisitor(t, territory);
    const unverified = await newResident(t, territory);
    for (const user of [stranger, visitor, unverified, requester]) {
      const res = await act(user, request.id, 'approve');
      expect(res.statusCode).toBe(403);
      expect((await act(user, request.id, 'reject')).statusCode).toBe(403);
    }
    expect((await t.sql<{ status: string }>('select status from join_request where id = $1', [request.id]))[0]?.status).toBe('PENDING');
    expect((await act(curator, UNKNOWN_ID, 'approve')).statusCode).toBe(404);
    expect((await act(curator, 'nope', 'reject')).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/join-requests/${request.id}/approve` })).statusCode).toBe(401);

    const rejected = await act(curator, request.id, 'reject');
    expect(rejected.statusCode).toBe(200);
    expect(rejected.json()).toMatchObject({ status: 'REJECTED' });
    expect((await act(curator, request.id, 'reject')).statusCode).toBe(200);
    expect((await act(curator, request.id, 'approve')).statusCode).toBe(409);
    const membership = await t.app.inject({ method: 'GET', url: `/api/v1/memberships/${territory.id}/me`, headers: requester.headers });
    expect(membership.json()).toMatchObject({ role: 'VISITOR' });
    const decided = await t.sql<{ type: string; data: { status: string } }>('select type, data from outbox_message where source_key = $1', [
      `join-request:${request.id}:decided`,
    ]);
    expect(decided).toMatchObject([{ type: 'JOIN_REQUEST_DECIDED', data: { status: 'REJECTED' } }]);
  });

  it('cancel: creator only, idempotent; a cancelled request cannot be decided, a decided one cannot be cancelled', async () => {
    const { curator, requester, request } = await pendingRequest();
    expect((await act(curator, request.id, 'cancel')).statusCode).toBe(403);
    const cancelled = await act(requester, request.id, 'cancel');
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ status: 'CANCELLED' });
    expect((await act(requester, request.id, 'cancel')).statusCode).toBe(200);
    expect((await act(curator, request.id, 'approve')).statusCode).toBe(409);

    const other = await pendingRequest();
    expect((await act(other.curator, other.request.id, 'approve')).statusCode).toBe(200);
    expect((await act(other.requester, other.request.id, 'cancel')).statusCode).toBe(409);
    expect((await act(other.requester, UNKNOWN_ID, 'cancel')).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/join-requests/${request.id}/cancel` })).statusCode).toBe(401);
  });

  it('concurrent approve and reject: exactly one wins, the other is 409, and the membership matches the winner', async () => {
    for (let round = 0; round < 4; round++) {
      const territory = await newTerritory(t);
      const curatorA = await newCurator(t, territory);
      const curatorB = await newCurator(t, territory);
      const requester = await newVisitor(t, territory);
      const request = (await becomeResident(requester, territory.id)).json() as JoinRequestBody;
      const [approve, reject] = await Promise.all([act(curatorA, request.id, 'approve'), act(curatorB, request.id, 'reject')]);
      const codes = [approve.statusCode, reject.statusCode].sort();
      expect(codes).toEqual([200, 409]);
      const winner = approve.statusCode === 200 ? 'APPROVED' : 'REJECTED';
      const [row] = await t.sql<{ status: string }>('select status from join_request where id = $1', [request.id]);
      expect(row?.status).toBe(winner);
      const [membership] = await t.sql<{ role: string }>('select role from territory_membership where user_id = $1 and territory_id = $2', [
        requester.id,
        territory.id,
      ]);
      expect(membership?.role).toBe(winner === 'APPROVED' ? 'RESIDENT' : 'VISITOR');
      expect(await countRows(t, 'outbox_message', 'source_key = $1', [`join-request:${request.id}:decided`])).toBe(1);
    }
  });

  it('concurrent approvals by two curators: both 200, one decision recorded', async () => {
    const { territory, curator, request } = await pendingRequest();
    const second = await newCurator(t, territory);
    const both = await Promise.all([act(curator, request.id, 'approve'), act(second, request.id, 'approve')]);
    expect(both.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(both[0]?.json().decidedByUserId).toBe(both[1]?.json().decidedByUserId);
    expect(await countRows(t, 'audit_entry', "action = 'join-request.approved' and subject_id = $1", [request.id])).toBe(1);
  });

  it('never produces a feed post: the only effects are the request, its recipients and the outbox row', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const requester = await newUser(t);
    await addMembership(t, requester, territory);
    const tables = await t.sql<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public' and table_name in ('post', 'feed_post')",
    );
    const before = await Promise.all(tables.map((x) => countRows(t, x.table_name)));
    const res = await becomeResident(requester, territory.id);
    expect(await storedRecipients(res.json().id)).toEqual([curator.id]);
    expect(await Promise.all(tables.map((x) => countRows(t, x.table_name)))).toEqual(before);
  });
});

describe('deciding re-checks the recipient eligibility', () => {
  const capability = (admin: TestUser, territoryId: string, userId: string, method: 'PUT' | 'DELETE') =>
    t.app.inject({ method, url: `/api/v1/territories/${territoryId}/capabilities/${userId}/CURATOR`, headers: admin.headers });

  it('a curator made a fallback recipient cannot decide once CURATOR is revoked; another curator and an admin still can', async () => {
    const territory = await newTerritory(t);
    const admin = await newAdmin(t);
    const former = await newVisitor(t, territory);
    expect((await capability(admin, territory.id, former.id, 'PUT')).statusCode).toBe(200);
    const requester = await newVisitor(t, territory);
    const created = await create(requester, territory.id, { recipientUserIds: [UNKNOWN_ID] });
    expect(created.statusCode).toBe(201);
    const request = created.json() as JoinRequestBody;
    expect(await storedRecipients(request.id)).toEqual([former.id]);

    expect((await capability(admin, territory.id, former.id, 'DELETE')).statusCode).toBe(204);
    const approve = await act(former, request.id, 'approve');
    expect(approve.statusCode).toBe(403);
    expect(approve.json()).toMatchObject({ code: 'FORBIDDEN' });
    expect((await act(former, request.id, 'reject')).statusCode).toBe(403);
    const [row] = await t.sql<{ status: string }>('select status from join_request where id = $1', [request.id]);
    expect(row?.status).toBe('PENDING');
    expect(await countRows(t, 'audit_entry', "subject_id = $1 and action like 'join-request.%'", [request.id])).toBe(0);
    expect(await countRows(t, 'territory_membership', "user_id = $1 and role = 'RESIDENT'", [requester.id])).toBe(0);

    // Given CURATOR back, they may decide again; so may a system admin meanwhile.
    expect((await capability(admin, territory.id, former.id, 'PUT')).statusCode).toBe(200);
    expect((await act(former, request.id, 'approve')).statusCode).toBe(200);
    const other = await pendingRequest();
    await t.sql(`update territory_membership set capabilities = '{}' where user_id = $1`, [other.curator.id]);
    expect((await act(other.curator, other.request.id, 'reject')).statusCode).toBe(200); // still a verified resident
    expect((await act(admin, other.request.id, 'reject')).statusCode).toBe(200);
  });

  it('a verified-resident recipient may decide only while RESIDENT with a verification of this territory', async () => {
    const territory = await newTerritory(t);
    const stays = await newResident(t, territory, { verified: true });
    const unverifiedLater = await newResident(t, territory, { verified: true });
    const movedAway = await newResident(t, territory, { verified: true });
    const requester = await newVisitor(t, territory);
    const request = (await create(requester, territory.id, { recipientUserIds: [stays.id, unverifiedLater.id, movedAway.id] })).json() as JoinRequestBody;
    expect(await storedRecipients(request.id)).toHaveLength(3);

    await t.sql('update territory_membership set geo_verified_at_utc = null where user_id = $1', [unverifiedLater.id]);
    await t.sql("update territory_membership set role = 'VISITOR', geo_verified_at_utc = null where user_id = $1", [movedAway.id]);
    for (const user of [unverifiedLater, movedAway]) {
      expect((await act(user, request.id, 'approve')).statusCode).toBe(403);
      expect((await act(user, request.id, 'reject')).statusCode).toBe(403);
    }
    const [row] = await t.sql<{ status: string }>('select status from join_request where id = $1', [request.id]);
    expect(row?.status).toBe('PENDING');

    const approved = await act(stays, request.id, 'approve');
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({ status: 'APPROVED', decidedByUserId: stays.id });
  });

  it('a stored recipient who lost SYSTEM_ADMIN (and holds nothing in the territory) cannot decide', async () => {
    const territory = await newTerritory(t);
    const formerAdmin = await newAdmin(t);
    const admin = await newAdmin(t);
    const requester = await newVisitor(t, territory);
    const request = (await create(requester, territory.id, { recipientUserIds: [formerAdmin.id] })).json() as JoinRequestBody;
    expect(await storedRecipients(request.id)).toEqual([formerAdmin.id]);
    const revoked = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/users/${formerAdmin.id}/permissions/SYSTEM_ADMIN`, headers: admin.headers });
    expect(revoked.statusCode).toBe(204);
    expect((await act(formerAdmin, request.id, 'approve')).statusCode).toBe(403);
  });
});

describe('GET /api/v1/join-requests/{id}', () => {
  const get = (user: TestUser | null, id: string) => t.app.inject({ method: 'GET', url: `/api/v1/join-requests/${id}`, headers: user ? user.headers : {} });

  it('answers the JoinRequest to its requester, its recipients, curators of the territory and system admins', async () => {
    const territory = await newTerritory(t);
    const recipient = await newResident(t, territory, { verified: true });
    const curator = await newCurator(t, territory);
    const admin = await newAdmin(t);
    const requester = await newVisitor(t, territory);
    const created = await create(requester, territory.id, { recipientUserIds: [recipient.id], message: 'Number 7' });
    expect(created.statusCode).toBe(201);
    const body = created.json() as JoinRequestBody;
    expect(created.headers.location).toBe(`/api/v1/join-requests/${body.id}`);

    for (const user of [requester, recipient, curator, admin]) {
      const res = await t.app.inject({ method: 'GET', url: created.headers.location as string, headers: user.headers });
      expect(res.statusCode).toBe(200);
      // Everyone but the requester sees whom it was addressed to.
      expect(res.json()).toEqual({ ...body, recipientUserIds: user === requester ? [] : [recipient.id] });
    }
    expect(body).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      requesterUserId: requester.id,
      recipientUserIds: [],
      message: 'Number 7',
      status: 'PENDING',
      createdAtUtc: expect.any(String),
      decidedAtUtc: null,
      decidedByUserId: null,
    });

    // After the decision it shows the decided state; a recipient who lost eligibility may still read it.
    expect((await act(curator, body.id, 'reject')).statusCode).toBe(200);
    await t.sql("update territory_membership set role = 'VISITOR', geo_verified_at_utc = null where user_id = $1", [recipient.id]);
    const decided = await get(recipient, body.id);
    expect(decided.statusCode).toBe(200);
    expect(decided.json()).toMatchObject({ status: 'REJECTED', decidedByUserId: curator.id, decidedAtUtc: expect.any(String) });
  });

  it('is 404 for anyone else (as for an unknown id), 400 for a malformed id, 401 without a token', async () => {
    const { territory, request } = await pendingRequest();
    const stranger = await newUser(t);
    const visitor = await newVisitor(t, territory);
    const unverified = await newResident(t, territory);
    const otherTerritory = await newTerritory(t);
    const curatorElsewhere = await newCurator(t, otherTerritory);
    for (const user of [stranger, visitor, unverified, curatorElsewhere]) {
      const res = await get(user, request.id);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    }
    const unknown = await get(stranger, UNKNOWN_ID);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().detail).toBe((await get(stranger, request.id)).json().detail);
    const malformed = await get(stranger, 'nope');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await get(null, request.id)).statusCode).toBe(401);
    // The static listing path is not taken for an id.
    expect((await get(stranger, 'incoming')).statusCode).toBe(200);
  });
});

describe('the GETs read on the pool', () => {
  it('incoming (listed and paged) and a request by id make no fork, for each reader', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const recipient = await newResident(t, territory, { verified: true });
    const admin = await newAdmin(t);
    const requester = await newVisitor(t, territory);
    const other = await newVisitor(t, territory);
    // Written directly: the API's notifications would start outbox jobs, whose own forks would be counted.
    const stored = async (
      requesterUserId: string,
      fields: Pick<JoinRequestBody, 'createdAtUtc'> & Partial<JoinRequestBody>,
      recipientUserIds: string[] = [],
    ) => {
      const request: JoinRequestBody = {
        id: newId(),
        territoryId: territory.id,
        requesterUserId,
        recipientUserIds,
        message: null,
        status: 'PENDING',
        decidedAtUtc: null,
        decidedByUserId: null,
        ...fields,
      };
      await t.sql(
        `insert into join_request (id, created_at_utc, territory_id, requester_user_id, message, status, decided_at_utc, decided_by_user_id)
         values ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [request.id, request.createdAtUtc, territory.id, requesterUserId, request.message, request.status, request.decidedAtUtc, request.decidedByUserId],
      );
      for (const id of recipientUserIds)
        await t.sql('insert into join_request_recipient (join_request_id, recipient_user_id) values ($1, $2)', [request.id, id]);
      return request;
    };
    const addressed = await stored(requester.id, { message: 'Hello', createdAtUtc: '2026-01-02T03:04:05.678Z' }, [recipient.id]);
    const rejected = await stored(other.id, {
      status: 'REJECTED',
      createdAtUtc: '2026-01-03T00:00:00.500Z',
      decidedAtUtc: '2026-01-03T01:00:00.000Z',
      decidedByUserId: curator.id,
    });
    const ids = (b: unknown) => (b as JoinRequestBody[]).map((r) => r.id);

    await forks.expectReadsWithoutFork(curator, [
      ['/api/v1/join-requests/incoming', (b) => expect(b).toEqual([rejected, addressed])],
      ['/api/v1/join-requests/incoming?status=REJECTED', (b) => expect(b).toEqual([rejected])],
      [
        '/api/v1/join-requests/incoming/paged?pageSize=1&pageNumber=2',
        (b) => expect(b).toEqual({ items: [addressed], pageNumber: 2, pageSize: 1, totalCount: 2, totalPages: 2, hasPreviousPage: true, hasNextPage: false }),
      ],
      [`/api/v1/join-requests/${addressed.id}`, (b) => expect(b).toEqual(addressed)],
      [`/api/v1/join-requests/${rejected.id}`, (b) => expect(b).toEqual(rejected)],
    ]);
    await forks.expectReadsWithoutFork(recipient, [
      ['/api/v1/join-requests/incoming', (b) => expect(ids(b)).toEqual([addressed.id])],
      [`/api/v1/join-requests/${addressed.id}`, (b) => expect(b).toEqual(addressed)],
    ]);
    // Its requester is never shown whom it was addressed to.
    await forks.expectReadsWithoutFork(requester, [
      [`/api/v1/join-requests/${addressed.id}`, (b) => expect(b).toEqual({ ...addressed, recipientUserIds: [] })],
    ]);
    await forks.expectReadsWithoutFork(admin, [[`/api/v1/join-requests/${rejected.id}`, (b) => expect(b).toEqual(rejected)]]);
  });
});

describe('OpenAPI document', () => {
  it('documents 201 with Location and the 200 idempotent repeat for the creations that answer both; GET by id exists', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    type Responses = Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
    const paths = res.json().paths as Record<string, Record<string, { responses: Responses }>>;
    for (const path of [
      '/api/v1/territories/{territoryId}/join-requests',
      '/api/v1/memberships/{territoryId}/become-resident',
      '/api/v1/memberships/transfer-residency',
      '/api/v1/memberships/{territoryId}/verify-residency/document',
    ]) {
      const responses = paths[path]?.post?.responses;
      expect(responses, path).toBeDefined();
      expect(responses?.['201']?.headers, path).toHaveProperty('Location');
      expect(responses?.['200']?.content?.['application/json']?.schema, path).toEqual(responses?.['201']?.content?.['application/json']?.schema);
    }
    const byId = paths['/api/v1/join-requests/{id}']?.get?.responses;
    expect(byId?.['200']?.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/JoinRequest' });
    expect(byId).toHaveProperty('404');
  });
});
