import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { territoryNaturalAssetsQuery } from '../../src/routers/natural-assets/natural-assets.queries.js';
import {
  countRows,
  newAdmin,
  newCurator,
  newResident,
  newTerritory,
  newUser,
  newVisitor,
  type TestTerritory,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { expectIndexedRead } from '../factories/query-plan.js';
import { countForks } from '../setup/forks.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let forks: ReturnType<typeof countForks>;
beforeAll(async () => {
  t = await createTestApp();
  forks = countForks(t);
});
afterAll(() => t.close());

interface NaturalAssetBody {
  id: string;
  territoryId: string;
  type: string;
  name: string;
  description: string | null;
  latitude: number;
  longitude: number;
  status: string;
  createdByUserId: string;
  createdAtUtc: string;
  publishedAtUtc: string | null;
}

const body = (extra: Record<string, unknown> = {}) => ({
  type: 'SPRING',
  name: 'Bica da Serra',
  description: 'Clear water all year',
  latitude: -23.56,
  longitude: -46.66,
  ...extra,
});

const base = (territoryId: string) => `/api/v1/territories/${territoryId}/natural-assets`;
const create = (user: TestUser | null, territoryId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: base(territoryId), headers: user?.headers ?? {}, payload });
const list = (user: TestUser | null, territoryId: string, query = '') =>
  t.app.inject({ method: 'GET', url: `${base(territoryId)}${query}`, headers: user?.headers ?? {} });
const publish = (user: TestUser | null, territoryId: string, id: string) =>
  t.app.inject({ method: 'POST', url: `${base(territoryId)}/${id}/publish`, headers: user?.headers ?? {} });

async function created(user: TestUser, territoryId: string, extra: Record<string, unknown> = {}) {
  const res = await create(user, territoryId, body(extra));
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as NaturalAssetBody;
}

describe('POST /api/v1/territories/{territoryId}/natural-assets', () => {
  let territory: TestTerritory;
  beforeAll(async () => {
    territory = await newTerritory(t);
  });

  it('lets a verified resident register one: 201, PENDING', async () => {
    const resident = await newResident(t, territory, { verified: true });
    const res = await create(resident, territory.id, body());
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      territoryId: territory.id,
      type: 'SPRING',
      name: 'Bica da Serra',
      description: 'Clear water all year',
      latitude: -23.56,
      longitude: -46.66,
      status: 'PENDING',
      createdByUserId: resident.id,
      publishedAtUtc: null,
    });
  });

  it('lets a curator or an admin register one; types are case-insensitive', async () => {
    expect(await created(await newCurator(t, territory), territory.id, { type: 'potable_water', description: undefined })).toMatchObject({
      type: 'POTABLE_WATER',
      description: null,
    });
    expect(await created(await newAdmin(t), territory.id, { type: 'Waterfall' })).toMatchObject({ type: 'WATERFALL' });
  });

  it('is 401 without a token, 403 for an unverified resident, a visitor or a non-member, 404 unknown territory', async () => {
    const before = await countRows(t, 'natural_asset');
    expect((await create(null, territory.id, body())).statusCode).toBe(401);
    for (const user of [await newResident(t, territory), await newVisitor(t, territory), await newUser(t)]) {
      const res = await create(user, territory.id, body());
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'NOT_VERIFIED_RESIDENT' });
    }
    expect((await create(await newAdmin(t), UNKNOWN_ID, body())).statusCode).toBe(404);
    expect(await countRows(t, 'natural_asset')).toBe(before);
  });

  it('is 400 for bad input, writing nothing', async () => {
    const resident = await newResident(t, territory, { verified: true });
    const before = await countRows(t, 'natural_asset');
    for (const extra of [
      { type: 'RIVER' },
      { type: undefined },
      { name: '' },
      { name: 'x'.repeat(201) },
      { description: 'x'.repeat(1001) },
      { latitude: -91 },
      { longitude: undefined },
    ]) {
      const res = await create(resident, territory.id, body(extra));
      expect(res.statusCode, JSON.stringify(extra)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect((await create(resident, 'nope', body())).statusCode).toBe(400);
    expect(await countRows(t, 'natural_asset')).toBe(before);
  });
});

describe('GET /api/v1/territories/{territoryId}/natural-assets', () => {
  let territory: TestTerritory;
  let creator: TestUser;
  let curator: TestUser;
  let published: NaturalAssetBody;
  let pending: NaturalAssetBody;
  let othersPending: NaturalAssetBody;
  beforeAll(async () => {
    territory = await newTerritory(t);
    creator = await newResident(t, territory, { verified: true });
    curator = await newCurator(t, territory);
    published = await created(creator, territory.id, { name: 'Published' });
    pending = await created(creator, territory.id, { name: 'Mine pending' });
    othersPending = await created(curator, territory.id, { name: 'Curator pending' });
    await t.sql(`update natural_asset set status = 'PUBLISHED' where id = $1`, [published.id]);
  });
  const ids = async (user: TestUser, query = '') => {
    const res = await list(user, territory.id, query);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as NaturalAssetBody[]).map((a) => a.id);
  };

  it('shows PUBLISHED ones to anyone; PENDING ones to curators (all) and to their creator (own), newest first', async () => {
    expect(await ids(await newUser(t))).toEqual([published.id]);
    expect(await ids(creator)).toEqual([pending.id, published.id]);
    expect(await ids(curator)).toEqual([othersPending.id, pending.id, published.id]);
    expect(await ids(curator, '?status=pending')).toEqual([othersPending.id, pending.id]);
    expect(await ids(creator, '?status=PENDING')).toEqual([pending.id]);
    expect(await ids(curator, '?take=1&skip=1')).toEqual([pending.id]);
  });

  it('reads on the pool: no fork', async () => {
    const url = base(territory.id);
    await forks.expectReadsWithoutFork(creator, [
      [url, (b) => expect(b).toEqual([pending, { ...published, status: 'PUBLISHED' }])],
      [`${url}?status=published`, (b) => expect(b).toEqual([{ ...published, status: 'PUBLISHED' }])],
    ]);
    await forks.expectReadsWithoutFork(curator, [
      [url, (b) => expect((b as NaturalAssetBody[]).map((a) => a.id)).toEqual([othersPending.id, pending.id, published.id])],
    ]);
  });

  it('is 401 without a token, 400 for a bad status or paging, 404 unknown territory', async () => {
    const user = await newUser(t);
    expect((await list(null, territory.id)).statusCode).toBe(401);
    expect((await list(user, territory.id, '?status=GONE')).statusCode).toBe(400);
    expect((await list(user, territory.id, '?take=101')).statusCode).toBe(400);
    expect((await list(user, UNKNOWN_ID)).statusCode).toBe(404);
    expect((await list(user, 'nope')).statusCode).toBe(400);
  });
});

describe('POST /api/v1/territories/{territoryId}/natural-assets/{id}/publish', () => {
  let territory: TestTerritory;
  let creator: TestUser;
  let curator: TestUser;
  beforeAll(async () => {
    territory = await newTerritory(t);
    creator = await newResident(t, territory, { verified: true });
    curator = await newCurator(t, territory);
  });

  it('a curator publishes a PENDING one (audited); publishing again is 409', async () => {
    const asset = await created(creator, territory.id);
    const res = await publish(curator, territory.id, asset.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: asset.id, status: 'PUBLISHED', publishedAtUtc: expect.any(String) });
    expect(await countRows(t, 'audit_entry', `action = 'natural_asset.published' and subject_id = $1`, [asset.id])).toBe(1);
    expect((await list(await newUser(t), territory.id)).json().map((a: NaturalAssetBody) => a.id)).toContain(asset.id);
    const again = await publish(curator, territory.id, asset.id);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'NATURAL_ASSET_NOT_PENDING' });
  });

  it('of two concurrent publications exactly one succeeds', async () => {
    const asset = await created(creator, territory.id);
    const results = await Promise.all([publish(curator, territory.id, asset.id), publish(curator, territory.id, asset.id)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
  });

  it('is 401 without a token, 403 for a resident or another territory curator, 404 unknown or of another territory, 400 malformed', async () => {
    const asset = await created(creator, territory.id);
    expect((await publish(null, territory.id, asset.id)).statusCode).toBe(401);
    expect((await publish(creator, territory.id, asset.id)).statusCode).toBe(403);
    const other = await newTerritory(t);
    const otherCurator = await newCurator(t, other);
    expect((await publish(otherCurator, territory.id, asset.id)).statusCode).toBe(403);
    expect((await publish(otherCurator, other.id, asset.id)).statusCode).toBe(404);
    expect((await publish(curator, territory.id, UNKNOWN_ID)).statusCode).toBe(404);
    expect((await publish(curator, territory.id, 'nope')).statusCode).toBe(400);
    expect((await publish(curator, UNKNOWN_ID, asset.id)).statusCode).toBe(404);
    const [row] = await t.sql<{ status: string }>('select status from natural_asset where id = $1', [asset.id]);
    expect(row?.status).toBe('PENDING');
  });
});

describe('the natural-asset list uses its index (EXPLAIN on 6000 natural assets)', () => {
  let territoryId: string;
  let creatorId: string;
  beforeAll(async () => {
    creatorId = (await newUser(t)).id;
    await t.sql(`
      insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
      select gen_random_uuid(), now(), 'Natural ' || lpad(i::text, 2, '0'), null, 'City', 'ST', -20, -50, 5, 'ACTIVE', '{}', '{}'
        from generate_series(0, 19) as i`);
    // 300 natural assets a territory, half of them PENDING.
    await t.sql(
      `insert into natural_asset (id, created_at_utc, territory_id, created_by_user_id, type, name, description, latitude, longitude, status)
       select gen_random_uuid(), now() - make_interval(mins => i), t.id, $1, 'SPRING', 'Spring ' || i, null, -20, -50,
              case when i % 2 = 0 then 'PUBLISHED' else 'PENDING' end
         from generate_series(1, 300) as i, territory t where t.name like 'Natural %'`,
      [creatorId],
    );
    await t.sql('vacuum analyze territory, natural_asset');
    territoryId = (await t.sql<{ id: string }>(`select id from territory where name = 'Natural 00'`))[0]!.id;
  });

  it("a territory's natural assets, newest first, as a curator and as anyone else sees them: natural_asset_territory_idx", async () => {
    for (const visible of [
      { statuses: ['PENDING' as const, 'PUBLISHED' as const] },
      { statuses: ['PENDING' as const, 'PUBLISHED' as const], pendingOnlyOf: creatorId },
      { statuses: ['PUBLISHED' as const], pendingOnlyOf: creatorId },
    ]) {
      await expectIndexedRead(t, territoryNaturalAssetsQuery(territoryId, visible, 20, 20), ['natural_asset'], /^natural_asset_territory_idx$/);
    }
  });
});
