import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlQuery } from '../../src/db/sql.js';
import { assetCountQuery, assetListQuery, type AssetListWhere } from '../../src/routers/assets/assets.queries.js';
import {
  addMembership,
  commitDuring,
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

interface AssetBody {
  id: string;
  territoryId: string;
  type: string;
  subtype: string | null;
  name: string;
  description: string | null;
  geoAnchors: { latitude: number; longitude: number }[];
  status: string;
  createdByUserId: string;
  validationCount: number;
  validationPercentage: number;
  createdAtUtc: string;
  updatedAtUtc: string;
}

const assetBody = (territory: { id: string }, extra: Record<string, unknown> = {}) => ({
  territoryId: territory.id,
  type: 'natural',
  subtype: 'river',
  name: 'Rio Verde',
  description: 'The river crossing the valley',
  geoAnchors: [
    { latitude: -23.54, longitude: -46.64 },
    { latitude: -23.55, longitude: -46.65 },
  ],
  ...extra,
});

const call = (method: 'GET' | 'POST' | 'PATCH', url: string, user: TestUser | null, payload?: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method, url, headers: { ...(user?.headers ?? {}), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });

async function created(user: TestUser, territory: { id: string }, extra: Record<string, unknown> = {}) {
  const res = await call('POST', '/api/v1/assets', user, assetBody(territory, extra));
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as AssetBody;
}

const statusOf = async (id: string) => (await t.sql<{ status: string }>('select status from territory_asset where id = $1', [id]))[0]?.status;
const writes = async () => ({
  assets: await countRows(t, 'territory_asset'),
  items: await countRows(t, 'work_item'),
  validations: await countRows(t, 'asset_validation'),
});

describe('POST /api/v1/assets', () => {
  let territory: TestTerritory;
  beforeAll(async () => {
    territory = await newTerritory(t);
  });

  it('lets a verified resident register an asset: 201 + Location, Suggested, and an ASSET_CURATION work item for curators', async () => {
    const resident = await newResident(t, territory, { verified: true });
    const res = await call('POST', '/api/v1/assets', resident, assetBody(territory, { type: 'Natural', subtype: 'Potable_Water' }));
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json() as AssetBody;
    expect(res.headers.location).toBe(`/api/v1/assets/${body.id}`);
    expect(body).toMatchObject({
      territoryId: territory.id,
      type: 'natural',
      subtype: 'potable_water',
      name: 'Rio Verde',
      description: 'The river crossing the valley',
      geoAnchors: assetBody(territory).geoAnchors,
      status: 'Suggested',
      createdByUserId: resident.id,
      validationCount: 0,
      validationPercentage: 0,
    });
    expect(Object.keys(body)).not.toContain('price');
    const [item] = await t.sql<{ type: string; status: string; territory_id: string; required_capability: string; subject_type: string }>(
      'select type, status, territory_id, required_capability, subject_type from work_item where subject_id = $1',
      [body.id],
    );
    expect(item).toEqual({
      type: 'ASSET_CURATION',
      status: 'PENDING',
      territory_id: territory.id,
      required_capability: 'CURATOR',
      subject_type: 'TerritoryAsset',
    });
  });

  it('lets a curator (and a SYSTEM_ADMIN) register one; other types carry no subtype', async () => {
    const curator = await newCurator(t, territory);
    expect(await created(curator, territory, { type: 'cultural', subtype: undefined, description: undefined })).toMatchObject({
      type: 'cultural',
      subtype: null,
      description: null,
    });
    // A curator who is only a VISITOR still may.
    const visitorCurator = await newUser(t);
    await addMembership(t, visitorCurator, territory, { role: 'VISITOR', capabilities: ['CURATOR'] });
    await created(visitorCurator, territory, { subtype: null });
    await created(await newAdmin(t), territory);
  });

  it('takes the territory from the X-Session-Id selection', async () => {
    const resident = await newResident(t, territory, { verified: true });
    await t.sql('insert into territory_selection (user_id, session_id, territory_id, updated_at_utc) values ($1, $2, $3, now())', [
      resident.id,
      'assets',
      territory.id,
    ]);
    const { territoryId: _omit, ...body } = assetBody(territory);
    const res = await call('POST', '/api/v1/assets', resident, body, { 'x-session-id': 'assets' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().territoryId).toBe(territory.id);
  });

  it('is 401 without a token; 403 for an unverified resident, a visitor, a non-member or another territory curator; 404 unknown territory', async () => {
    const before = await writes();
    expect((await call('POST', '/api/v1/assets', null, assetBody(territory))).statusCode).toBe(401);
    const otherCurator = await newCurator(t, await newTerritory(t));
    for (const user of [await newResident(t, territory), await newVisitor(t, territory), await newUser(t), otherCurator]) {
      const res = await call('POST', '/api/v1/assets', user, assetBody(territory));
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'NOT_VERIFIED_RESIDENT' });
    }
    expect((await call('POST', '/api/v1/assets', await newAdmin(t), assetBody({ id: UNKNOWN_ID }))).statusCode).toBe(404);
    expect(await writes()).toEqual(before);
  });

  it('is 400 for bad input (subtype rules, limits, geo anchors), writing nothing', async () => {
    const resident = await newResident(t, territory, { verified: true });
    const before = await writes();
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'cultural', subtype: 'river' }, 'subtype'],
      [{ subtype: 'lake' }, 'subtype'],
      [{ subtype: 'x'.repeat(41) }, 'subtype'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: '' }, 'name'],
      [{ description: 'x'.repeat(1001) }, 'description'],
      [{ geoAnchors: [] }, 'geoAnchors'],
      [{ geoAnchors: undefined }, 'geoAnchors'],
      [{ geoAnchors: [{ latitude: 95, longitude: 0 }] }, 'geoAnchors.0.latitude'],
      [{ type: '' }, 'type'],
      [{ type: undefined }, 'type'],
    ];
    for (const [extra, field] of cases) {
      const res = await call('POST', '/api/v1/assets', resident, assetBody(territory, extra));
      expect(res.statusCode, JSON.stringify(extra)).toBe(400);
      expect(
        res.json().errors.map((e: { field: string }) => e.field),
        JSON.stringify(extra),
      ).toContain(field);
    }
    expect(await writes()).toEqual(before);
  });
});

describe('GET /api/v1/assets (+ /paged) and GET /api/v1/assets/{assetId}', () => {
  let territory: TestTerritory;
  let river: AssetBody;
  let spring: AssetBody;
  let cultural: AssetBody;
  let archived: AssetBody;
  let rejected: AssetBody;
  beforeAll(async () => {
    territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    river = await created(curator, territory, { name: 'River' });
    spring = await created(curator, territory, { name: 'Spring', subtype: 'spring' });
    cultural = await created(curator, territory, { name: 'Church', type: 'cultural', subtype: null });
    archived = await created(curator, territory, { name: 'Old well', subtype: 'well' });
    rejected = await created(curator, territory, { name: 'Nope', type: 'cultural', subtype: null });
    await t.sql(`update territory_asset set status = 'Archived' where id = $1`, [archived.id]);
    await t.sql(`update territory_asset set status = 'Rejected' where id = $1`, [rejected.id]);
    await t.sql(`update territory_asset set status = 'Active' where id = $1`, [spring.id]);
  });
  const list = async (user: TestUser, query: string) => {
    const res = await call('GET', `/api/v1/assets?territoryId=${territory.id}${query}`, user);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as AssetBody[]).map((a) => a.id);
  };

  it('lists Suggested and Active assets newest first to any signed-in user, with filters', async () => {
    const stranger = await newUser(t);
    expect(await list(stranger, '')).toEqual([cultural.id, spring.id, river.id]);
    expect(await list(stranger, '&type=NATURAL')).toEqual([spring.id, river.id]);
    expect(await list(stranger, '&types=cultural,natural')).toEqual([cultural.id, spring.id, river.id]);
    // `types` compares the type only: a subtype matches nothing.
    expect(await list(stranger, '&types=spring')).toEqual([]);
    expect(await list(stranger, `&assetId=${river.id}`)).toEqual([river.id]);
    expect(await list(stranger, '&status=archived')).toEqual([archived.id]);
    expect(await list(stranger, '&status=Rejected')).toEqual([rejected.id]);
    expect(await list(stranger, '&skip=1&take=1')).toEqual([spring.id]);
  });

  it('pages with the envelope', async () => {
    const res = await call('GET', `/api/v1/assets/paged?territoryId=${territory.id}&pageSize=2&pageNumber=2`, await newUser(t));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ pageNumber: 2, pageSize: 2, totalCount: 3, totalPages: 2, hasPreviousPage: true, hasNextPage: false });
    expect(res.json().items.map((a: AssetBody) => a.id)).toEqual([river.id]);
  });

  it('takes the territory from the X-Session-Id selection', async () => {
    const user = await newUser(t);
    await t.sql('insert into territory_selection (user_id, session_id, territory_id, updated_at_utc) values ($1, $2, $3, now())', [
      user.id,
      'list',
      territory.id,
    ]);
    const res = await call('GET', '/api/v1/assets', user, undefined, { 'x-session-id': 'list' });
    expect(res.json()).toHaveLength(3);
  });

  it('gets one asset by id (any status); 404 unknown, 400 malformed, 401 without a token', async () => {
    const user = await newUser(t);
    const res = await call('GET', `/api/v1/assets/${archived.id}`, user);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: archived.id, status: 'Archived', subtype: 'well' });
    expect((await call('GET', `/api/v1/assets/${UNKNOWN_ID}`, user)).statusCode).toBe(404);
    expect((await call('GET', '/api/v1/assets/nope', user)).statusCode).toBe(400);
    expect((await call('GET', `/api/v1/assets/${river.id}`, null)).statusCode).toBe(401);
  });

  it('reads on the pool: the list, a page and an asset make no fork', async () => {
    const ids = (items: AssetBody[]) => items.map((a) => a.id);
    await forks.expectReadsWithoutFork(await newUser(t), [
      [`/api/v1/assets?territoryId=${territory.id}`, (b) => expect(ids(b as AssetBody[])).toEqual([cultural.id, spring.id, river.id])],
      [`/api/v1/assets?territoryId=${territory.id}&type=natural&types=cultural&status=active`, (b) => expect(ids(b as AssetBody[])).toEqual([spring.id])],
      [`/api/v1/assets?territoryId=${territory.id}&assetId=${river.id}`, (b) => expect(b).toEqual([river])],
      [
        `/api/v1/assets/paged?territoryId=${territory.id}&pageSize=2`,
        (b) => expect(b).toMatchObject({ totalCount: 3, items: [{ id: cultural.id }, { id: spring.id }] }),
      ],
      [`/api/v1/assets/${archived.id}`, (b) => expect(b).toEqual({ ...archived, status: 'Archived' })],
    ]);
  });

  it('is 401 without a token, 400 for bad filters or paging, 404 for an unknown territory', async () => {
    const user = await newUser(t);
    expect((await call('GET', `/api/v1/assets?territoryId=${territory.id}`, null)).statusCode).toBe(401);
    expect((await call('GET', `/api/v1/assets?territoryId=${territory.id}&status=Gone`, user)).statusCode).toBe(400);
    expect((await call('GET', `/api/v1/assets?territoryId=${territory.id}&take=101`, user)).statusCode).toBe(400);
    expect((await call('GET', `/api/v1/assets/paged?territoryId=${territory.id}&pageSize=0`, user)).statusCode).toBe(400);
    expect((await call('GET', `/api/v1/assets?territoryId=${territory.id}&assetId=x`, user)).statusCode).toBe(400);
    expect((await call('GET', `/api/v1/assets?territoryId=${UNKNOWN_ID}`, user)).statusCode).toBe(404);
    expect((await call('GET', '/api/v1/assets', user)).json()).toMatchObject({ code: 'NO_TERRITORY_SELECTED' });
  });
});

describe('PATCH /api/v1/assets/{assetId}', () => {
  let territory: TestTerritory;
  let creator: TestUser;
  beforeAll(async () => {
    territory = await newTerritory(t);
    creator = await newResident(t, territory, { verified: true });
  });
  const patch = (user: TestUser | null, id: string, body: Record<string, unknown>) => call('PATCH', `/api/v1/assets/${id}`, user, body);

  it('subtype is tri-state: omitted keeps it, a value replaces it, null removes it', async () => {
    const asset = await created(creator, territory);
    const renamed = await patch(creator, asset.id, { name: 'Rio Azul' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'Rio Azul', type: 'natural', subtype: 'river' });
    expect((await patch(creator, asset.id, { subtype: 'Waterfall' })).json()).toMatchObject({ subtype: 'waterfall' });
    expect((await patch(creator, asset.id, { subtype: null })).json()).toMatchObject({ subtype: null });
    expect((await patch(creator, asset.id, {})).json()).toMatchObject({ subtype: null, name: 'Rio Azul' });
  });

  it('changing the type away from natural clears the subtype; a subtype with such a type is a 400 that changes nothing', async () => {
    const asset = await created(creator, territory);
    const bad = await patch(creator, asset.id, { type: 'cultural', subtype: 'river' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'subtype' }] });
    expect(await statusOf(asset.id)).toBe('Suggested');
    const [still] = await t.sql<{ type: string; subtype: string }>('select type, subtype from territory_asset where id = $1', [asset.id]);
    expect(still).toEqual({ type: 'natural', subtype: 'river' });

    const changed = await patch(creator, asset.id, { type: 'cultural' });
    expect(changed.json()).toMatchObject({ type: 'cultural', subtype: null });
    // Back to natural: no subtype until one is given.
    expect((await patch(creator, asset.id, { type: 'natural' })).json()).toMatchObject({ type: 'natural', subtype: null });
    expect((await patch(creator, asset.id, { type: 'natural', subtype: 'stream' })).json()).toMatchObject({ subtype: 'stream' });
  });

  it('edits description (null clears) and geo anchors', async () => {
    const asset = await created(creator, territory);
    const res = await patch(creator, asset.id, { description: null, geoAnchors: [{ latitude: 1, longitude: 2 }] });
    expect(res.json()).toMatchObject({ description: null, geoAnchors: [{ latitude: 1, longitude: 2 }] });
  });

  it('lets a curator edit; 403 for anyone else; 401; 404; 400 for bad fields', async () => {
    const asset = await created(creator, territory);
    expect((await patch(await newCurator(t, territory), asset.id, { name: 'By curator' })).json()).toMatchObject({ name: 'By curator' });
    const other = await newResident(t, territory, { verified: true });
    expect((await patch(other, asset.id, { name: 'Hijack' })).statusCode).toBe(403);
    expect((await patch(null, asset.id, { name: 'x' })).statusCode).toBe(401);
    expect((await patch(creator, UNKNOWN_ID, { name: 'x' })).statusCode).toBe(404);
    for (const body of [{ geoAnchors: [] }, { subtype: 'lake' }, { name: 'x'.repeat(201) }, { description: 'x'.repeat(1001) }, { type: '' }]) {
      expect((await patch(creator, asset.id, body)).statusCode, JSON.stringify(body)).toBe(400);
    }
    const [row] = await t.sql<{ name: string }>('select name from territory_asset where id = $1', [asset.id]);
    expect(row?.name).toBe('By curator');
  });

  const auditsOf = (assetId: string) =>
    t.sql<{ actor_user_id: string; territory_id: string; data: { fields: string[]; before: Record<string, unknown>; after: Record<string, unknown> } }>(
      `select actor_user_id, territory_id, data from audit_entry where action = 'asset.updated' and subject_id = $1 order by created_at_utc, id`,
      [assetId],
    );

  it('audits an edit with the before/after values of the changed fields only; an edit changing nothing is not audited', async () => {
    const asset = await created(creator, territory);
    const res = await patch(creator, asset.id, { name: 'Rio Claro', subtype: 'stream', description: 'The river crossing the valley' });
    expect(res.statusCode, res.body).toBe(200);
    const audits = await auditsOf(asset.id);
    expect(audits).toHaveLength(1);
    expect(audits[0]).toEqual({
      actor_user_id: creator.id,
      territory_id: territory.id,
      data: { fields: ['subtype', 'name'], before: { subtype: 'river', name: 'Rio Verde' }, after: { subtype: 'stream', name: 'Rio Claro' } },
    });
    expect((await patch(creator, asset.id, { name: 'Rio Claro' })).statusCode).toBe(200);
    expect(await auditsOf(asset.id)).toHaveLength(1);
  });

  it('is 409 ASSET_NOT_EDITABLE for an Archived or a Rejected asset, changing nothing and auditing nothing', async () => {
    const curator = await newCurator(t, territory);
    const archived = await created(creator, territory);
    expect((await call('POST', `/api/v1/assets/${archived.id}/archive`, curator)).statusCode).toBe(200);
    const rejected = await created(creator, territory);
    expect((await call('POST', `/api/v1/assets/${rejected.id}/curate`, curator, { outcome: 'REJECTED' })).statusCode).toBe(200);
    for (const [asset, status] of [
      [archived, 'Archived'],
      [rejected, 'Rejected'],
    ] as const) {
      for (const user of [creator, curator]) {
        const res = await patch(user, asset.id, { name: 'Too late' });
        expect(res.statusCode, res.body).toBe(409);
        expect(res.json()).toMatchObject({ code: 'ASSET_NOT_EDITABLE' });
      }
      const [row] = await t.sql<{ name: string; status: string }>('select name, status from territory_asset where id = $1', [asset.id]);
      expect(row).toEqual({ name: 'Rio Verde', status });
      expect(await auditsOf(asset.id)).toHaveLength(0);
    }
    // A stranger still learns nothing about the state: 403 before 409.
    expect((await patch(await newResident(t, territory, { verified: true }), archived.id, { name: 'x' })).statusCode).toBe(403);
  });

  it('applies concurrent edits of different fields one after the other: both changes stay', async () => {
    const asset = await created(creator, territory);
    const curator = await newCurator(t, territory);
    const anchors = [{ latitude: 3, longitude: 4 }];
    const results = await Promise.all([
      patch(creator, asset.id, { name: 'Rio Novo' }),
      patch(curator, asset.id, { description: 'Edited concurrently' }),
      patch(creator, asset.id, { geoAnchors: anchors }),
      patch(curator, asset.id, { subtype: 'spring' }),
    ]);
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    const [row] = await t.sql<{ name: string; description: string; geo_anchors: unknown; subtype: string }>(
      'select name, description, geo_anchors, subtype from territory_asset where id = $1',
      [asset.id],
    );
    expect(row).toEqual({ name: 'Rio Novo', description: 'Edited concurrently', geo_anchors: anchors, subtype: 'spring' });
    expect(await auditsOf(asset.id)).toHaveLength(4);
    expect((await call('GET', `/api/v1/assets/${asset.id}`, creator)).json()).toMatchObject({
      name: 'Rio Novo',
      description: 'Edited concurrently',
      geoAnchors: anchors,
      subtype: 'spring',
    });
  });

  it("never lets concurrent edits leave a subtype on a non-natural asset (each edit sees the other's result)", async () => {
    for (let round = 0; round < 5; round++) {
      const asset = await created(creator, territory);
      const [toCultural, toSpring] = await Promise.all([patch(creator, asset.id, { type: 'cultural' }), patch(creator, asset.id, { subtype: 'spring' })]);
      expect(toCultural.statusCode, toCultural.body).toBe(200);
      // Applied after the type change, a subtype is a 400; applied before, the type change clears it.
      expect([200, 400]).toContain(toSpring.statusCode);
      const [row] = await t.sql<{ type: string; subtype: string | null }>('select type, subtype from territory_asset where id = $1', [asset.id]);
      expect(row).toEqual({ type: 'cultural', subtype: null });
    }
  });
});

describe('POST /api/v1/assets/{assetId}/validate', () => {
  let territory: TestTerritory;
  let asset: AssetBody;
  let residents: TestUser[];
  beforeAll(async () => {
    territory = await newTerritory(t);
    residents = [
      await newResident(t, territory, { verified: true }),
      await newResident(t, territory),
      await newResident(t, territory),
      await newResident(t, territory),
    ];
    asset = await created(residents[0]!, territory);
  });
  const validate = (user: TestUser | null, id: string) => call('POST', `/api/v1/assets/${id}/validate`, user);

  it("counts each member once; the percentage is the share of the territory's residents who validated", async () => {
    const first = await validate(residents[1]!, asset.id);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ id: asset.id, status: 'Suggested', validationCount: 1, validationPercentage: 25 });
    const repeat = await validate(residents[1]!, asset.id);
    expect(repeat.json()).toMatchObject({ validationCount: 1, validationPercentage: 25 });
    // A visitor's validation counts, but visitors are not residents.
    const visitor = await validate(await newVisitor(t, territory), asset.id);
    expect(visitor.json()).toMatchObject({ validationCount: 2, validationPercentage: 25 });
    const third = await validate(residents[2]!, asset.id);
    expect(third.json()).toMatchObject({ validationCount: 3, validationPercentage: 50 });
    expect(await countRows(t, 'audit_entry', `action = 'asset.validated' and subject_id = $1`, [asset.id])).toBe(3);
    const listed = await call('GET', `/api/v1/assets/${asset.id}`, residents[3]!);
    expect(listed.json()).toMatchObject({ validationCount: 3, validationPercentage: 50 });
  });

  it('counts concurrent repeats once', async () => {
    const [before] = await t.sql<{ validation_count: number }>('select validation_count from territory_asset where id = $1', [asset.id]);
    await Promise.all([1, 2, 3, 4].map(() => validate(residents[3]!, asset.id)));
    const [after] = await t.sql<{ validation_count: number }>('select validation_count from territory_asset where id = $1', [asset.id]);
    expect(after!.validation_count).toBe(before!.validation_count + 1);
  });

  it('is 401 without a token, 403 for a non-member, 404 unknown, 400 malformed, 409 for an archived asset', async () => {
    const before = await writes();
    expect((await validate(null, asset.id)).statusCode).toBe(401);
    const forbidden = await validate(await newUser(t), asset.id);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ code: 'NOT_MEMBER' });
    expect((await validate(residents[1]!, UNKNOWN_ID)).statusCode).toBe(404);
    expect((await validate(residents[1]!, 'nope')).statusCode).toBe(400);
    const old = await created(residents[0]!, territory);
    const afterCreate = await writes();
    await t.sql(`update territory_asset set status = 'Archived' where id = $1`, [old.id]);
    const archived = await validate(residents[1]!, old.id);
    expect(archived.statusCode).toBe(409);
    expect(archived.json()).toMatchObject({ code: 'ASSET_NOT_VALIDATABLE' });
    expect((await writes()).validations).toBe(before.validations);
    expect(await writes()).toEqual(afterCreate);
  });

  it('waits for an archive in progress, then is 409 ASSET_NOT_VALIDATABLE and counts nothing', async () => {
    const racing = await created(residents[0]!, territory);
    // The archive's update commits while the validation is under way: it waits for it and reads the Archived row.
    const archive = { sql: `update territory_asset set status = 'Archived', archived_at_utc = now() where id = $1`, params: [racing.id] };
    const res = await commitDuring(t, archive, () => validate(residents[1]!, racing.id));
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ code: 'ASSET_NOT_VALIDATABLE' });
    const [row] = await t.sql<{ status: string; validation_count: number }>('select status, validation_count from territory_asset where id = $1', [racing.id]);
    expect(row).toEqual({ status: 'Archived', validation_count: 0 });
    expect(await countRows(t, 'asset_validation', 'asset_id = $1', [racing.id])).toBe(0);
  });
});

describe('POST /api/v1/assets/{assetId}/curate and /archive', () => {
  let territory: TestTerritory;
  let creator: TestUser;
  let curator: TestUser;
  beforeAll(async () => {
    territory = await newTerritory(t);
    creator = await newResident(t, territory, { verified: true });
    curator = await newCurator(t, territory);
  });
  const curate = (user: TestUser | null, id: string, outcome: unknown) => call('POST', `/api/v1/assets/${id}/curate`, user, { outcome });
  const archive = (user: TestUser | null, id: string) => call('POST', `/api/v1/assets/${id}/archive`, user);
  const itemOf = async (assetId: string) =>
    (await t.sql<{ id: string; status: string; outcome: string | null }>('select id, status, outcome from work_item where subject_id = $1', [assetId]))[0]!;
  const pinIds = async (user: TestUser) => {
    const res = await call('GET', `/api/v1/map/pins?territoryId=${territory.id}&types=asset&take=100`, user);
    return (res.json() as { id: string }[]).map((p) => p.id);
  };

  it('APPROVED makes it Active (completing its work item, audited) and puts it on the map; a second decision is 409', async () => {
    const asset = await created(creator, territory);
    expect(await pinIds(creator)).not.toContain(asset.id);
    const res = await curate(curator, asset.id, 'APPROVED');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: asset.id, status: 'Active' });
    expect(await itemOf(asset.id)).toMatchObject({ status: 'COMPLETED', outcome: 'APPROVED' });
    expect(await countRows(t, 'audit_entry', `action = 'asset.curated' and subject_id = $1`, [asset.id])).toBe(1);
    expect((await pinIds(creator)).filter((id) => id === asset.id)).toHaveLength(2);
    const again = await curate(curator, asset.id, 'REJECTED');
    expect(again.statusCode).toBe(409);
    expect(await statusOf(asset.id)).toBe('Active');
  });

  it('REJECTED makes it Rejected', async () => {
    const asset = await created(creator, territory);
    expect((await curate(curator, asset.id, 'REJECTED')).json()).toMatchObject({ status: 'Rejected' });
    expect(await itemOf(asset.id)).toMatchObject({ status: 'COMPLETED', outcome: 'REJECTED' });
  });

  it("completing the work item from the territory's queue applies the same decision; after NOACTION /curate still decides", async () => {
    const viaQueue = await created(creator, territory);
    const item = await itemOf(viaQueue.id);
    const done = await call('POST', `/api/v1/territories/${territory.id}/work-items/${item.id}/complete`, curator, { outcome: 'APPROVED' });
    expect(done.statusCode, done.body).toBe(200);
    expect(await statusOf(viaQueue.id)).toBe('Active');

    const left = await created(creator, territory);
    const leftItem = await itemOf(left.id);
    await call('POST', `/api/v1/territories/${territory.id}/work-items/${leftItem.id}/complete`, curator, { outcome: 'NOACTION' });
    expect(await statusOf(left.id)).toBe('Suggested');
    expect((await curate(curator, left.id, 'APPROVED')).json()).toMatchObject({ status: 'Active' });
  });

  it('curate: 401, 403 for a resident or another territory curator, 404, 400 for a bad outcome; nothing changes', async () => {
    const asset = await created(creator, territory);
    expect((await curate(null, asset.id, 'APPROVED')).statusCode).toBe(401);
    expect((await curate(creator, asset.id, 'APPROVED')).statusCode).toBe(403);
    expect((await curate(await newCurator(t, await newTerritory(t)), asset.id, 'APPROVED')).statusCode).toBe(403);
    expect((await curate(curator, UNKNOWN_ID, 'APPROVED')).statusCode).toBe(404);
    expect((await curate(curator, asset.id, 'NOACTION')).statusCode).toBe(400);
    expect((await curate(curator, asset.id, undefined)).statusCode).toBe(400);
    expect(await statusOf(asset.id)).toBe('Suggested');
    expect(await itemOf(asset.id)).toMatchObject({ status: 'PENDING' });
  });

  it('archive: a Suggested asset (its curation cancelled) or an Active one becomes Archived and leaves the map; repeat 200', async () => {
    const suggested = await created(creator, territory);
    const res = await archive(curator, suggested.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'Archived' });
    expect(await itemOf(suggested.id)).toMatchObject({ status: 'CANCELLED' });
    expect((await archive(curator, suggested.id)).json()).toMatchObject({ status: 'Archived' });

    const active = await created(creator, territory);
    await curate(curator, active.id, 'APPROVED');
    expect(await pinIds(creator)).toContain(active.id);
    expect((await archive(curator, active.id)).json()).toMatchObject({ status: 'Archived' });
    expect(await pinIds(creator)).not.toContain(active.id);
    expect(await countRows(t, 'audit_entry', `action = 'asset.archived' and subject_id = $1`, [active.id])).toBe(1);
  });

  it('archive: 401, 403 for a non-curator, 404, 409 for a Rejected asset', async () => {
    const asset = await created(creator, territory);
    expect((await archive(null, asset.id)).statusCode).toBe(401);
    expect((await archive(creator, asset.id)).statusCode).toBe(403);
    expect((await archive(curator, UNKNOWN_ID)).statusCode).toBe(404);
    expect((await archive(curator, 'nope')).statusCode).toBe(400);
    expect(await statusOf(asset.id)).toBe('Suggested');
    await curate(curator, asset.id, 'REJECTED');
    const rejected = await archive(curator, asset.id);
    expect(rejected.statusCode).toBe(409);
    expect(await statusOf(asset.id)).toBe('Rejected');
  });
});

describe('the asset list uses its index (EXPLAIN on 6000 assets)', () => {
  let territoryId: string;
  let assetId: string;
  beforeAll(async () => {
    const creator = await newUser(t);
    await t.sql(`
      insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
      select gen_random_uuid(), now(), 'Assets ' || lpad(i::text, 2, '0'), null, 'City', 'ST', -20, -50, 5, 'ACTIVE', '{}', '{}'
        from generate_series(0, 19) as i`);
    // 300 assets a territory, of every status and of three types.
    await t.sql(
      `insert into territory_asset (id, created_at_utc, territory_id, created_by_user_id, type, subtype, name, description, geo_anchors, status,
                                    validation_count, updated_at_utc)
       select gen_random_uuid(), now() - make_interval(mins => i), t.id, $1, (array['natural', 'cultural', 'historic'])[1 + i % 3], null,
              'Asset ' || i, null, '[{"latitude": -20, "longitude": -50}]', (array['Suggested', 'Active', 'Archived', 'Rejected'])[1 + i % 4], 0, now()
         from generate_series(1, 300) as i, territory t where t.name like 'Assets %'`,
      [creator.id],
    );
    await t.sql('vacuum analyze territory, territory_asset');
    territoryId = (await t.sql<{ id: string }>(`select id from territory where name = 'Assets 00'`))[0]!.id;
    assetId = (await t.sql<{ id: string }>('select id from territory_asset where territory_id = $1 limit 1', [territoryId]))[0]!.id;
  });

  const indexedAsset = (query: SqlQuery, index: RegExp) => expectIndexedRead(t, query, ['territory_asset'], index);

  it("a territory's assets, newest first, and their count, with each filter: the (territory, created, id) indexes", async () => {
    const lists: AssetListWhere[] = [
      { territoryId, statuses: ['Suggested', 'Active'] },
      { territoryId, statuses: ['Suggested', 'Active'], types: ['natural', 'historic'] },
      { territoryId, statuses: ['Archived'] },
    ];
    for (const where of lists) {
      await indexedAsset(assetListQuery(where, 0, 20), /^territory_asset_territory_idx$/);
      await indexedAsset(assetCountQuery(where), /^territory_asset_territory_idx$/);
    }
    // Only Active assets: the partial index of the pins serves too.
    await indexedAsset(assetListQuery({ territoryId, statuses: ['Active'] }, 20, 20), /^territory_asset_(territory|active)_idx$/);
    await indexedAsset(assetListQuery({ territoryId, statuses: ['Active'], assetId }, 0, 20), /^territory_asset_(pkey|territory_idx|active_idx)$/);
  });
});
