import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/problems.js';
import { decideTerritorySuggestion } from '../../src/routers/territories/territory-suggestion.js';
import { countRows, newAdmin, newTerritory, newUser, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  user = await newUser(t);
});
afterAll(() => t.close());

let seq = 0;
const body = (over: Record<string, unknown> = {}) => ({
  name: `Vila Nova ${++seq}`,
  description: 'Quiet streets by the river',
  city: 'Joinville',
  state: 'SC',
  latitude: -26.3,
  longitude: -48.85,
  ...over,
});
const suggest = (payload: unknown, headers: Record<string, string> = user.headers) =>
  t.app.inject({ method: 'POST', url: '/api/v1/territories/suggestions', headers, payload: payload as object });

const counts = async () => ({ territories: await countRows(t, 'territory'), workItems: await countRows(t, 'work_item') });

describe('POST /api/v1/territories/suggestions', () => {
  it('creates a PENDING territory (201 + Location) and a TERRITORY_SUGGESTION work item for SYSTEM_ADMIN', async () => {
    const payload = body();
    const res = await suggest(payload);
    expect(res.statusCode).toBe(201);
    const created = res.json() as { id: string };
    expect(created).toMatchObject({ ...payload, status: 'PENDING', radiusKm: 5, tags: [], parentTerritoryId: null });
    expect(res.headers.location).toBe(`/api/v1/territories/${created.id}`);

    const [item] = await t.sql(`select * from work_item where subject_id = $1`, [created.id]);
    expect(item).toMatchObject({
      type: 'TERRITORY_SUGGESTION',
      status: 'PENDING',
      subject_type: 'Territory',
      territory_id: created.id,
      required_permission: 'SYSTEM_ADMIN',
      required_capability: null,
      created_by_user_id: user.id,
    });
    expect(item!.payload).toMatchObject({ ...payload, suggestedByUserId: user.id });
    const [row] = await t.sql(`select suggested_by_user_id from territory where id = $1`, [created.id]);
    expect(row!.suggested_by_user_id).toBe(user.id);
    expect(await countRows(t, 'audit_entry', `action = 'territory.suggested' and subject_id = $1`, [created.id])).toBe(1);

    // Visible by id to its suggester, not to others, and never in public lists.
    expect((await t.app.inject({ method: 'GET', url: res.headers.location as string, headers: user.headers })).statusCode).toBe(200);
    const other = await newUser(t);
    expect((await t.app.inject({ method: 'GET', url: res.headers.location as string, headers: other.headers })).statusCode).toBe(404);
    const listed = (await t.app.inject({ method: 'GET', url: `/api/v1/territories/search?q=${encodeURIComponent(payload.name)}` })).json();
    expect(listed).toEqual([]);
    const near = (await t.app.inject({ method: 'GET', url: '/api/v1/territories/nearby?lat=-26.3&lng=-48.85' })).json() as { id: string }[];
    expect(near.map((x) => x.id)).not.toContain(created.id);
  });

  it('sanitizes text: tags stripped, description optional (null)', async () => {
    const res = await suggest(body({ name: '<b>Jardim</b> <script>x</script>Azul', description: undefined }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ name: 'Jardim xAzul', description: null });
  });

  it('needs a token', async () => {
    const before = await counts();
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/territories/suggestions', payload: body() });
    expect(res.statusCode).toBe(401);
    expect(await counts()).toEqual(before);
  });

  it('answers 400 on bad coordinates or missing fields, writing nothing', async () => {
    const before = await counts();
    for (const payload of [
      body({ latitude: 90.5 }),
      body({ latitude: -91 }),
      body({ longitude: 181 }),
      body({ longitude: -180.01 }),
      body({ latitude: '12' }),
      body({ latitude: null }),
      body({ name: '   ' }),
      body({ name: '<p></p>' }),
      body({ city: undefined }),
      body({ state: 'x'.repeat(101) }),
    ]) {
      const res = await suggest(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/v1/territories/suggestions',
          headers: { ...user.headers, 'content-type': 'application/json' },
          payload: '[1]',
        })
      ).statusCode,
    ).toBe(400);
    expect(await counts()).toEqual(before);
  });

  it('answers 409 on a duplicate name + city + state (case-insensitive, trimmed), writing nothing', async () => {
    const first = body({ name: 'Porto Alegre Centro', city: 'Porto Alegre', state: 'RS' });
    expect((await suggest(first)).statusCode).toBe(201);
    await newTerritory(t, { name: 'Moinhos', city: 'Porto Alegre', state: 'RS' });
    const before = await counts();
    const again = await suggest({ ...first, name: '  porto ALEGRE centro ', city: 'PORTO alegre', state: 'rs ' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ status: 409, code: 'DUPLICATE_TERRITORY' });
    // An ACTIVE territory counts too (also for admin creation).
    expect((await suggest(body({ name: 'moinhos', city: 'porto alegre', state: 'RS' }))).statusCode).toBe(409);
    const admin = await newAdmin(t);
    const adminDup = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/territories',
      headers: admin.headers,
      payload: body({ name: 'Moinhos', city: 'Porto Alegre', state: 'RS' }),
    });
    expect(adminDup.statusCode).toBe(409);
    expect(await counts()).toEqual(before);
    // Same name elsewhere is fine.
    expect((await suggest({ ...first, city: 'Canoas' })).statusCode).toBe(201);
  });

  it('allows suggesting again once the earlier suggestion was REJECTED', async () => {
    const payload = body({ name: 'Ilha Rejeitada' });
    const first = (await suggest(payload)).json() as { id: string };
    await t.sql(`update territory set status = 'REJECTED' where id = $1`, [first.id]);
    expect((await suggest(payload)).statusCode).toBe(201);
  });

  it('lets exactly one of two concurrent identical suggestions through', async () => {
    const payload = body({ name: 'Corrida Simultanea' });
    const other = await newUser(t);
    const before = await counts();
    const results = await Promise.all([suggest(payload), suggest(payload, other.headers)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect(await counts()).toEqual({ territories: before.territories + 1, workItems: before.workItems + 1 });
  });
});

describe('decideTerritorySuggestion', () => {
  async function pendingSuggestion() {
    const res = await suggest(body());
    return (res.json() as { id: string }).id;
  }
  const decide = (id: string, outcome: 'APPROVED' | 'REJECTED' | 'NOACTION', actor: string) =>
    t.deps.orm.em.fork().transactional((tx) => decideTerritorySuggestion(tx as EntityManager, { subjectId: id }, outcome, actor));
  const statusOf = async (id: string) => (await t.sql<{ status: string }>(`select status from territory where id = $1`, [id]))[0]?.status;

  it('APPROVED activates, REJECTED rejects, each audited; NOACTION is a 400 that changes nothing (it would leave the territory PENDING with nothing left to decide it)', async () => {
    const admin = await newAdmin(t);
    const approved = await pendingSuggestion();
    await decide(approved, 'APPROVED', admin.id);
    expect(await statusOf(approved)).toBe('ACTIVE');
    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/territories?take=100' })).json() as { id: string }[];
    expect(listed.map((x) => x.id)).toContain(approved);

    const rejected = await pendingSuggestion();
    await decide(rejected, 'REJECTED', admin.id);
    expect(await statusOf(rejected)).toBe('REJECTED');

    const untouched = await pendingSuggestion();
    await expect(decide(untouched, 'NOACTION', admin.id)).rejects.toSatisfy((e) => e instanceof AppError && e.problemCode === 'VALIDATION_FAILED');
    expect(await statusOf(untouched)).toBe('PENDING');
    // Through the admin queue: the item stays PENDING, so the suggestion can still be decided.
    const [item] = await t.sql<{ id: string }>(`select id from work_item where type = 'TERRITORY_SUGGESTION' and subject_id = $1`, [untouched]);
    const complete = (outcome: string) =>
      t.app.inject({ method: 'POST', url: `/api/v1/admin/work-items/${item!.id}/complete`, headers: admin.headers, payload: { outcome } });
    expect((await complete('NOACTION')).statusCode).toBe(400);
    expect(await t.sql('select status from work_item where id = $1', [item!.id])).toEqual([{ status: 'PENDING' }]);
    expect((await complete('APPROVED')).statusCode).toBe(200);
    expect(await statusOf(untouched)).toBe('ACTIVE');

    const audits = await t.sql<{ subject_id: string; actor_user_id: string; data: { outcome: string } }>(
      `select subject_id, actor_user_id, data from audit_entry where action = 'territory.suggestion.decided' order by created_at_utc`,
    );
    expect(audits.map((a) => [a.subject_id, a.actor_user_id, a.data.outcome])).toEqual([
      [approved, admin.id, 'APPROVED'],
      [rejected, admin.id, 'REJECTED'],
      [untouched, admin.id, 'APPROVED'],
    ]);
  });

  it('refuses a territory that is no longer PENDING (409) or unknown (404), changing nothing', async () => {
    const admin = await newAdmin(t);
    const id = await pendingSuggestion();
    await decide(id, 'REJECTED', admin.id);
    await expect(decide(id, 'APPROVED', admin.id)).rejects.toSatisfy((e) => e instanceof AppError && e.code === 'CONFLICT');
    expect(await statusOf(id)).toBe('REJECTED');
    await expect(decide(UNKNOWN_ID, 'APPROVED', admin.id)).rejects.toSatisfy((e) => e instanceof AppError && e.code === 'NOT_FOUND');
  });
});
