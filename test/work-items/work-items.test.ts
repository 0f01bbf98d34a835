import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { countRows, newAdmin, newTerritory, newUser, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const LIST = '/api/v1/admin/work-items';
const PAGED = '/api/v1/admin/work-items/paged';
const completeUrl = (id: string) => `/api/v1/admin/work-items/${id}/complete`;

/** A work item written directly, for types whose producers are other domains. */
async function insertWorkItem(opts: { type: string; status?: string; subjectId?: string; territoryId?: string | null; createdAt?: string }) {
  const id = newId();
  await t.sql(
    `insert into work_item (id, created_at_utc, type, status, territory_id, subject_type, subject_id, payload, required_permission)
     values ($1, $2, $3, $4, $5, 'Thing', $6, '{"k":1}', 'SYSTEM_ADMIN')`,
    [id, opts.createdAt ?? new Date().toISOString(), opts.type, opts.status ?? 'PENDING', opts.territoryId ?? null, opts.subjectId ?? newId()],
  );
  return id;
}

async function suggestTerritory(name: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/territories/suggestions',
    headers: (await newUser(t)).headers,
    payload: { name, description: 'Suggested', city: 'Belo Horizonte', state: 'MG', latitude: -19.92, longitude: -43.94 },
  });
  expect(res.statusCode).toBe(201);
  const territoryId = res.json().id as string;
  const [item] = await t.sql<{ id: string }>("select id from work_item where subject_id = $1 and type = 'TERRITORY_SUGGESTION'", [territoryId]);
  return { territoryId, workItemId: item!.id };
}

const territoryStatus = async (id: string) => (await t.sql<{ status: string }>('select status from territory where id = $1', [id]))[0]?.status;

describe('GET /api/v1/admin/work-items', () => {
  it('lists newest first with skip and take (default 20) and filters by type and status', async () => {
    const older = await insertWorkItem({ type: 'MODERATION_CASE', createdAt: '2030-01-01T00:00:00Z' });
    const newer = await insertWorkItem({ type: 'MODERATION_CASE', createdAt: '2030-01-02T00:00:00Z' });
    const done = await insertWorkItem({ type: 'MODERATION_CASE', status: 'COMPLETED', createdAt: '2030-01-03T00:00:00Z' });
    await insertWorkItem({ type: 'ASSET_CURATION', createdAt: '2030-01-04T00:00:00Z' });

    const res = await t.app.inject({ method: 'GET', url: `${LIST}?type=MODERATION_CASE&status=PENDING&take=1`, headers: admin.headers });
    expect(res.statusCode).toBe(200);
    const items = res.json();
    expect(Array.isArray(items)).toBe(true);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      id: newer,
      type: 'MODERATION_CASE',
      status: 'PENDING',
      territoryId: null,
      subjectType: 'Thing',
      payload: { k: 1 },
      requiredPermission: 'SYSTEM_ADMIN',
      requiredCapability: null,
      outcome: null,
      notes: null,
      completedAtUtc: null,
      completedByUserId: null,
      createdAtUtc: '2030-01-02T00:00:00.000Z',
    });
    const second = await t.app.inject({ method: 'GET', url: `${LIST}?type=MODERATION_CASE&status=PENDING&skip=1&take=1`, headers: admin.headers });
    expect(second.json().map((i: { id: string }) => i.id)).toEqual([older]);

    const all = await t.app.inject({ method: 'GET', url: `${LIST}?take=100`, headers: admin.headers });
    const ids = all.json().map((i: { id: string }) => i.id);
    expect(ids.indexOf(done)).toBeLessThan(ids.indexOf(newer));
    expect(ids).toContain(done);

    for (let i = 0; i < 21; i++) await insertWorkItem({ type: 'ASSET_CURATION', createdAt: '2029-01-01T00:00:00Z' });
    const first = await t.app.inject({ method: 'GET', url: LIST, headers: admin.headers });
    expect(first.json()).toHaveLength(20);
    const window = await t.app.inject({ method: 'GET', url: `${LIST}?skip=2&take=3`, headers: admin.headers });
    expect(window.json().map((i: { id: string }) => i.id)).toEqual(
      first
        .json()
        .slice(2, 5)
        .map((i: { id: string }) => i.id),
    );
  });

  it('is 400 for out-of-range skip/take, paging keys of the /paged variant are not its own, or unknown enum values', async () => {
    for (const query of ['take=101', 'take=0', 'skip=-1', 'skip=10000001', 'take=%20', 'skip=0x10', 'type=NOPE', 'status=pendings']) {
      const res = await t.app.inject({ method: 'GET', url: `${LIST}?${query}`, headers: admin.headers });
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
  });

  it('takes the status and type filters in any letter case and answers the canonical spelling (DESIGN 4)', async () => {
    const upper = await t.app.inject({ method: 'GET', url: `${LIST}?status=PENDING`, headers: admin.headers });
    for (const query of ['status=pending', 'status=Pending', 'status=%20pending%20']) {
      const res = await t.app.inject({ method: 'GET', url: `${LIST}?${query}`, headers: admin.headers });
      expect(res.statusCode, query).toBe(200);
      expect(res.json(), query).toEqual(upper.json());
    }
    for (const item of upper.json() as { status: string }[]) expect(item.status).toBe('PENDING');
    const typed = await t.app.inject({ method: 'GET', url: `${LIST}?type=moderation_case&status=completed`, headers: admin.headers });
    expect(typed.statusCode).toBe(200);
  });

  it('is 401 without a token and 403 for a non-admin', async () => {
    const user = await newUser(t);
    for (const url of [LIST, PAGED]) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
      const res = await t.app.inject({ method: 'GET', url, headers: user.headers });
      expect(res.statusCode, url).toBe(403);
      expect(res.json()).toMatchObject({ code: 'FORBIDDEN' });
    }
  });
});

describe('GET /api/v1/admin/work-items/paged', () => {
  it('pages newest first with the envelope and filters by type and status', async () => {
    const older = await insertWorkItem({ type: 'ASSET_CURATION', status: 'CANCELLED', createdAt: '2099-01-01T00:00:00Z' });
    const newer = await insertWorkItem({ type: 'ASSET_CURATION', status: 'CANCELLED', createdAt: '2099-01-02T00:00:00Z' });
    await insertWorkItem({ type: 'ASSET_CURATION', status: 'COMPLETED', createdAt: '2099-01-03T00:00:00Z' });
    const total = await countRows(t, 'work_item', "type = 'ASSET_CURATION' and status = 'CANCELLED'");

    const res = await t.app.inject({ method: 'GET', url: `${PAGED}?type=asset_curation&status=cancelled&pageSize=1`, headers: admin.headers });
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(page).toMatchObject({ pageNumber: 1, pageSize: 1, totalCount: total, totalPages: total, hasPreviousPage: false, hasNextPage: true });
    expect(page.items.map((i: { id: string }) => i.id)).toEqual([newer]);
    const second = await t.app.inject({ method: 'GET', url: `${PAGED}?type=ASSET_CURATION&status=CANCELLED&pageSize=1&pageNumber=2`, headers: admin.headers });
    expect(second.json()).toMatchObject({ pageNumber: 2, hasPreviousPage: true, items: [{ id: older }] });
    // The listing and its /paged variant read the same query.
    const listed = await t.app.inject({ method: 'GET', url: `${LIST}?type=ASSET_CURATION&status=CANCELLED&take=100`, headers: admin.headers });
    const paged = await t.app.inject({ method: 'GET', url: `${PAGED}?type=ASSET_CURATION&status=CANCELLED&pageSize=100`, headers: admin.headers });
    expect(paged.json().items).toEqual(listed.json());
    const defaults = await t.app.inject({ method: 'GET', url: PAGED, headers: admin.headers });
    expect(defaults.json()).toMatchObject({ pageNumber: 1, pageSize: 20 });
  });

  it('is 400 for out-of-range paging or unknown enum values', async () => {
    for (const query of [
      'pageSize=101',
      'pageSize=0',
      'pageNumber=0',
      'pageNumber=100001',
      'pageSize=%20',
      'pageNumber=0x10',
      'type=NOPE',
      'status=pendings',
    ]) {
      const res = await t.app.inject({ method: 'GET', url: `${PAGED}?${query}`, headers: admin.headers });
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
  });
});

describe('POST /api/v1/admin/work-items/{workItemId}/complete', () => {
  it('APPROVED on a territory suggestion activates the territory (200 with the completed item)', async () => {
    const { territoryId, workItemId } = await suggestTerritory('Savassi');
    const res = await t.app.inject({ method: 'POST', url: completeUrl(workItemId), headers: admin.headers, payload: { outcome: 'APPROVED', notes: 'ok' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: workItemId,
      type: 'TERRITORY_SUGGESTION',
      status: 'COMPLETED',
      territoryId,
      subjectId: territoryId,
      outcome: 'APPROVED',
      notes: 'ok',
      completedByUserId: admin.id,
      completedAtUtc: expect.any(String),
    });
    expect(await territoryStatus(territoryId)).toBe('ACTIVE');
    const [row] = await t.sql<{ status: string; outcome: string; completed_by_user_id: string }>(
      'select status, outcome, completed_by_user_id from work_item where id = $1',
      [workItemId],
    );
    expect(row).toEqual({ status: 'COMPLETED', outcome: 'APPROVED', completed_by_user_id: admin.id });
    expect(await countRows(t, 'audit_entry', "action = 'work_item.completed' and subject_id = $1", [workItemId])).toBe(1);
  });

  it('REJECTED on a territory suggestion rejects the territory', async () => {
    const { territoryId, workItemId } = await suggestTerritory('Lourdes');
    const res = await t.app.inject({ method: 'POST', url: completeUrl(workItemId), headers: admin.headers, payload: { outcome: 'REJECTED' } });
    expect(res.statusCode).toBe(200);
    expect(await territoryStatus(territoryId)).toBe('REJECTED');
  });

  it('an effect that fails rolls the completion back', async () => {
    const { territoryId, workItemId } = await suggestTerritory('Funcionarios');
    await t.sql("update territory set status = 'ACTIVE' where id = $1", [territoryId]);
    const res = await t.app.inject({ method: 'POST', url: completeUrl(workItemId), headers: admin.headers, payload: { outcome: 'REJECTED' } });
    expect(res.statusCode).toBe(409);
    expect(await countRows(t, 'work_item', "id = $1 and status = 'PENDING'", [workItemId])).toBe(1);
    expect(await countRows(t, 'audit_entry', 'subject_id = $1', [workItemId])).toBe(0);
  });

  it('applies the identity decision for IDENTITY_VERIFICATION items', async () => {
    const user = await newUser(t, { identity: 'Pending' });
    const id = await insertWorkItem({ type: 'IDENTITY_VERIFICATION', subjectId: user.id });
    const res = await t.app.inject({ method: 'POST', url: completeUrl(id), headers: admin.headers, payload: { outcome: 'APPROVED' } });
    expect(res.statusCode).toBe(200);
    const [row] = await t.sql<{ s: string }>('select identity_verification_status as s from app_user where id = $1', [user.id]);
    expect(row?.s).toBe('Verified');
  });

  it('records the outcome only for types without an effect (NOACTION allowed)', async () => {
    const territory = await newTerritory(t);
    const id = await insertWorkItem({ type: 'MODERATION_CASE', territoryId: territory.id });
    const res = await t.app.inject({ method: 'POST', url: completeUrl(id), headers: admin.headers, payload: { outcome: 'NOACTION', notes: null } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'COMPLETED', outcome: 'NOACTION', territoryId: territory.id, notes: null });
  });

  it('is 409 for an item that is not PENDING', async () => {
    for (const status of ['COMPLETED', 'CANCELLED']) {
      const id = await insertWorkItem({ type: 'ASSET_CURATION', status });
      const res = await t.app.inject({ method: 'POST', url: completeUrl(id), headers: admin.headers, payload: { outcome: 'APPROVED' } });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ status: 409, code: 'WORK_ITEM_NOT_PENDING' });
    }
  });

  it('two concurrent completions: one 200, one 409, the effect applied once', async () => {
    const { territoryId, workItemId } = await suggestTerritory('Santa Efigenia');
    const results = await Promise.all(
      ['APPROVED', 'REJECTED', 'APPROVED'].map((outcome) =>
        t.app.inject({ method: 'POST', url: completeUrl(workItemId), headers: admin.headers, payload: { outcome } }),
      ),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([200, 409, 409]);
    const winner = results.find((r) => r.statusCode === 200)!.json();
    expect(await territoryStatus(territoryId)).toBe(winner.outcome === 'APPROVED' ? 'ACTIVE' : 'REJECTED');
    expect(await countRows(t, 'audit_entry', "action = 'work_item.completed' and subject_id = $1", [workItemId])).toBe(1);
  });

  it('is 404 for an unknown item and 400 for a malformed id or body, writing nothing', async () => {
    const missing = await t.app.inject({ method: 'POST', url: completeUrl(UNKNOWN_ID), headers: admin.headers, payload: { outcome: 'APPROVED' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'NOT_FOUND' });

    const id = await insertWorkItem({ type: 'ASSET_CURATION' });
    const auditsBefore = await countRows(t, 'audit_entry');
    const malformed = await t.app.inject({ method: 'POST', url: completeUrl('123'), headers: admin.headers, payload: { outcome: 'APPROVED' } });
    expect(malformed.statusCode).toBe(400);
    for (const payload of [{}, { outcome: 'approved!' }, { outcome: 'APPROVED', notes: 'n'.repeat(2001) }, { outcome: 'APPROVED', notes: 5 }]) {
      const res = await t.app.inject({ method: 'POST', url: completeUrl(id), headers: admin.headers, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(await countRows(t, 'work_item', "id = $1 and status = 'PENDING'", [id])).toBe(1);
    expect(await countRows(t, 'audit_entry')).toBe(auditsBefore);
  });

  it('is 401 without a token and 403 for a non-admin, writing nothing', async () => {
    const id = await insertWorkItem({ type: 'ASSET_CURATION' });
    expect((await t.app.inject({ method: 'POST', url: completeUrl(id), payload: { outcome: 'APPROVED' } })).statusCode).toBe(401);
    const user = await newUser(t);
    const res = await t.app.inject({ method: 'POST', url: completeUrl(id), headers: user.headers, payload: { outcome: 'APPROVED' } });
    expect(res.statusCode).toBe(403);
    expect(await countRows(t, 'work_item', "id = $1 and status = 'PENDING'", [id])).toBe(1);
  });
});
