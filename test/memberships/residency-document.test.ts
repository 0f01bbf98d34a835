import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newResident, newTerritory, newUser, newVisitor, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { multipartBody, pngOfSize, TINY_JPEG, TINY_PDF, TINY_PNG } from '../factories/multipart.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const upload = (user: TestUser | null, territoryId: string, bytes: Buffer, field = 'file') => {
  const body = multipartBody([{ field, fileName: 'bill.bin', bytes }]);
  return t.app.inject({
    method: 'POST',
    url: `/api/v1/memberships/${territoryId}/verify-residency/document/upload`,
    headers: { ...(user?.headers ?? {}), ...body.headers },
    payload: body.payload,
  });
};

describe('POST /api/v1/memberships/{territoryId}/verify-residency/document/upload', () => {
  it('stores the evidence of the territory and opens a RESIDENCY_VERIFICATION item for its curators (201)', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    for (const bytes of [TINY_PDF, TINY_JPEG, TINY_PNG]) {
      const res = await upload(resident, territory.id, bytes);
      expect(res.statusCode).toBe(201);
      const body = res.json() as { evidenceId: string; workItemId: string; status: string };
      expect(body).toEqual({ evidenceId: expect.any(String), workItemId: expect.any(String), status: 'PENDING' });
      const [evidence] = await t.sql<{ kind: string; territory_id: string; user_id: string }>(
        'select kind, territory_id, user_id from evidence where id = $1',
        [body.evidenceId],
      );
      expect(evidence).toEqual({ kind: 'RESIDENCY_DOCUMENT', territory_id: territory.id, user_id: resident.id });
      const [item] = await t.sql<{ type: string; status: string; territory_id: string; required_capability: string; payload: { evidenceId: string } }>(
        'select type, status, territory_id, required_capability, payload from work_item where id = $1',
        [body.workItemId],
      );
      expect(item).toMatchObject({
        type: 'RESIDENCY_VERIFICATION',
        status: 'PENDING',
        territory_id: territory.id,
        required_capability: 'CURATOR',
        payload: { evidenceId: body.evidenceId },
      });
    }
    // A newer document supersedes the pending one: one open item per membership.
    expect(await countRows(t, 'work_item', "type = 'RESIDENCY_VERIFICATION' and status = 'PENDING' and territory_id = $1", [territory.id])).toBe(1);
    expect(await countRows(t, 'work_item', "type = 'RESIDENCY_VERIFICATION' and status = 'CANCELLED' and territory_id = $1", [territory.id])).toBe(2);
  });

  it('is 403 for a visitor or non-member, 404 for an unknown territory, 400 for a malformed id, 401 without a token', async () => {
    const territory = await newTerritory(t);
    const visitor = await newVisitor(t, territory);
    const stranger = await newUser(t);
    const before = await countRows(t, 'evidence');
    const asVisitor = await upload(visitor, territory.id, TINY_PDF);
    expect(asVisitor.statusCode).toBe(403);
    expect(asVisitor.json()).toMatchObject({ code: 'NOT_RESIDENT' });
    expect((await upload(stranger, territory.id, TINY_PDF)).statusCode).toBe(403);
    expect((await upload(visitor, UNKNOWN_ID, TINY_PDF)).statusCode).toBe(404);
    expect((await upload(visitor, 'bad', TINY_PDF)).statusCode).toBe(400);
    const anonymous = await upload(null, territory.id, TINY_PDF);
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    expect(await countRows(t, 'evidence')).toBe(before);
  });

  it('is 400 for a wrong type, an oversize file, a missing file, or a non-multipart body; nothing written', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const before = await countRows(t, 'evidence');
    const beforeItems = await countRows(t, 'work_item');
    const text = await upload(resident, territory.id, Buffer.from('just some text pretending to be a PDF'));
    expect(text.statusCode).toBe(400);
    expect(text.json()).toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE' });
    const big = await upload(resident, territory.id, pngOfSize(5 * 1024 * 1024 + 1));
    expect(big.statusCode).toBe(400);
    expect(big.json()).toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect((await upload(resident, territory.id, TINY_PDF, 'other')).statusCode).toBe(400);
    const json = await t.app.inject({
      method: 'POST',
      url: `/api/v1/memberships/${territory.id}/verify-residency/document/upload`,
      headers: resident.headers,
      payload: { file: 'x' },
    });
    expect(json.statusCode).toBe(400);
    expect(await countRows(t, 'evidence')).toBe(before);
    expect(await countRows(t, 'work_item')).toBe(beforeItems);
  });
});

describe('POST /api/v1/memberships/{territoryId}/verify-residency/document {evidenceId}', () => {
  it('reopens the check for an evidence I uploaded: 201, and 200 with the same item while it is pending', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const first = (await upload(resident, territory.id, TINY_PDF)).json() as { evidenceId: string; workItemId: string };
    const url = `/api/v1/memberships/${territory.id}/verify-residency/document`;

    const same = await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { evidenceId: first.evidenceId } });
    expect(same.statusCode).toBe(200);
    expect(same.json()).toEqual({ evidenceId: first.evidenceId, workItemId: first.workItemId, status: 'PENDING' });

    // After a rejection the same document can be sent again: a new item.
    await t.sql(`update work_item set status = 'COMPLETED', outcome = 'REJECTED' where id = $1`, [first.workItemId]);
    const again = await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { evidenceId: first.evidenceId } });
    expect(again.statusCode).toBe(201);
    expect(again.json().workItemId).not.toBe(first.workItemId);
    expect(
      await countRows(t, 'work_item', "type = 'RESIDENCY_VERIFICATION' and status = 'PENDING' and subject_type = 'TerritoryMembership' and territory_id = $1", [
        territory.id,
      ]),
    ).toBe(1);
  });

  it("is 404 for someone else's or an unknown evidence, 400 for an identity document or another territory's, 403 for a visitor, 401", async () => {
    const territory = await newTerritory(t);
    const other = await newTerritory(t);
    const resident = await newResident(t, territory);
    const neighbour = await newResident(t, territory);
    const theirs = (await upload(neighbour, territory.id, TINY_PDF)).json() as { evidenceId: string };
    const url = `/api/v1/memberships/${territory.id}/verify-residency/document`;
    const before = await countRows(t, 'work_item');

    expect((await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { evidenceId: theirs.evidenceId } })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { evidenceId: UNKNOWN_ID } })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { evidenceId: 'x' } })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: {} })).statusCode).toBe(400);

    await t.sql(
      `insert into evidence (id, created_at_utc, user_id, territory_id, kind, storage_key, mime_type, size_bytes)
       values ($1, now(), $2, null, 'IDENTITY_DOCUMENT', 'x/y.pdf', 'application/pdf', 10), ($3, now(), $2, $4, 'RESIDENCY_DOCUMENT', 'x/z.pdf', 'application/pdf', 10)`,
      ['0190a4f6-0000-7000-8000-0000000000a1', resident.id, '0190a4f6-0000-7000-8000-0000000000a2', other.id],
    );
    const identity = await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { evidenceId: '0190a4f6-0000-7000-8000-0000000000a1' } });
    expect(identity.statusCode).toBe(400);
    expect(identity.json()).toMatchObject({ code: 'WRONG_EVIDENCE_KIND' });
    const elsewhere = await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { evidenceId: '0190a4f6-0000-7000-8000-0000000000a2' } });
    expect(elsewhere.statusCode).toBe(400);

    const visitor = await newVisitor(t, territory);
    expect((await t.app.inject({ method: 'POST', url, headers: visitor.headers, payload: { evidenceId: theirs.evidenceId } })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'POST', url, payload: { evidenceId: theirs.evidenceId } })).statusCode).toBe(401);
    expect(await countRows(t, 'work_item')).toBe(before);
  });
});
