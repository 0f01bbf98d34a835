import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMembership,
  commitDuring,
  countRows,
  newAdmin,
  newCurator,
  newModerator,
  newResident,
  newTerritory,
  newUser,
  newVisitor,
  type TestTerritory,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { block } from './seed.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface EntityBody {
  id: string;
  territoryId: string;
  name: string;
  category: string;
  latitude: number;
  longitude: number;
  visibility: string;
  status: string;
  confirmationCount: number;
  createdByUserId: string;
  createdAtUtc: string;
}

const entityBody = (territory: { id: string }, extra: Record<string, unknown> = {}) => ({
  territoryId: territory.id,
  name: 'Padaria do Bairro',
  category: 'establishment',
  latitude: -23.551,
  longitude: -46.631,
  ...extra,
});

function suggest(user: TestUser, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'POST', url: '/api/v1/map/entities', headers: { ...user.headers, ...headers }, payload: body });
}

async function suggested(user: TestUser, territory: { id: string }, extra: Record<string, unknown> = {}) {
  const res = await suggest(user, entityBody(territory, extra));
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as EntityBody;
}

async function listIds(user: TestUser, territory: { id: string }) {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/map/entities?territoryId=${territory.id}&take=100`, headers: user.headers });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as EntityBody[]).map((e) => e.id);
}

describe('POST /api/v1/map/entities', () => {
  let territory: TestTerritory;
  beforeAll(async () => {
    territory = await newTerritory(t);
  });

  it('lets a member suggest an entity: 201, SUGGESTED, PUBLIC by default, no confirmations', async () => {
    const visitor = await newVisitor(t, territory);
    const res = await suggest(visitor, entityBody(territory));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      territoryId: territory.id,
      name: 'Padaria do Bairro',
      category: 'establishment',
      latitude: -23.551,
      longitude: -46.631,
      visibility: 'PUBLIC',
      status: 'SUGGESTED',
      confirmationCount: 0,
      createdByUserId: visitor.id,
    });
    expect(await countRows(t, 'map_entity', 'id = $1', [res.json().id])).toBe(1);
  });

  it('accepts the visibility case-insensitively and sanitizes text', async () => {
    const resident = await newResident(t, territory);
    const body = await suggested(resident, territory, { visibility: 'residents_only', name: '<b>Praça</b> Central' });
    expect(body).toMatchObject({ visibility: 'RESIDENTS_ONLY', name: 'Praça Central' });
  });

  it('takes the territory from the X-Session-Id selection', async () => {
    const resident = await newResident(t, territory);
    await t.sql('insert into territory_selection (user_id, session_id, territory_id, updated_at_utc) values ($1, $2, $3, now())', [
      resident.id,
      's-map',
      territory.id,
    ]);
    const { territoryId: _omit, ...body } = entityBody(territory);
    const res = await suggest(resident, body, { 'x-session-id': 's-map' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().territoryId).toBe(territory.id);
    const none = await suggest(resident, body);
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ code: 'NO_TERRITORY_SELECTED' });
  });

  it('is 401 without a token, 403 for a non-member, 404 for an unknown territory', async () => {
    const before = await countRows(t, 'map_entity');
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/map/entities', payload: entityBody(territory) })).statusCode).toBe(401);
    const stranger = await newUser(t);
    const forbidden = await suggest(stranger, entityBody(territory));
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ code: 'NOT_MEMBER' });
    expect((await suggest(stranger, entityBody({ id: UNKNOWN_ID }))).statusCode).toBe(404);
    expect(await countRows(t, 'map_entity')).toBe(before);
  });

  it('is 400 for bad input, writing nothing', async () => {
    const resident = await newResident(t, territory);
    const before = await countRows(t, 'map_entity');
    for (const bad of [
      { latitude: 91 },
      { longitude: -181 },
      { name: '' },
      { name: 'x'.repeat(201) },
      { category: '   ' },
      { visibility: 'FRIENDS' },
      { latitude: undefined },
      { territoryId: 'not-a-uuid' },
    ]) {
      const res = await suggest(resident, entityBody(territory, bad));
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(await countRows(t, 'map_entity')).toBe(before);
  });
});

describe('GET /api/v1/map/entities (+ /paged): visibility layers', () => {
  let territory: TestTerritory;
  let author: TestUser;
  let blockedAuthor: TestUser;
  let publicOne: EntityBody;
  let residentsOnly: EntityBody;
  let byBlocked: EntityBody;
  let rejected: EntityBody;
  let validated: EntityBody;

  beforeAll(async () => {
    territory = await newTerritory(t);
    author = await newResident(t, territory);
    blockedAuthor = await newResident(t, territory);
    publicOne = await suggested(author, territory, { name: 'Public place' });
    residentsOnly = await suggested(author, territory, { name: 'Residents place', visibility: 'RESIDENTS_ONLY' });
    byBlocked = await suggested(blockedAuthor, territory, { name: 'Blocked author place' });
    rejected = await suggested(author, territory, { name: 'Rejected place' });
    validated = await suggested(author, territory, { name: 'Validated place' });
    await t.sql(`update map_entity set status = 'REJECTED' where id = $1`, [rejected.id]);
    await t.sql(`update map_entity set status = 'VALIDATED' where id = $1`, [validated.id]);
  });

  it('a visitor sees PUBLIC entities only (SUGGESTED and VALIDATED, never REJECTED)', async () => {
    const ids = await listIds(await newVisitor(t, territory), territory);
    expect(ids).toEqual(expect.arrayContaining([publicOne.id, byBlocked.id, validated.id]));
    expect(ids).not.toContain(residentsOnly.id);
    expect(ids).not.toContain(rejected.id);
  });

  it('a non-member sees PUBLIC entities only', async () => {
    const ids = await listIds(await newUser(t), territory);
    expect(ids).toContain(publicOne.id);
    expect(ids).not.toContain(residentsOnly.id);
  });

  it('a resident also sees RESIDENTS_ONLY entities, newest first', async () => {
    const ids = await listIds(await newResident(t, territory), territory);
    expect(ids).toEqual([validated.id, byBlocked.id, residentsOnly.id, publicOne.id]);
  });

  it("the feed's RESIDENTS_ONLY readers see them too: the territory's curators and moderators (residents or not) and system admins", async () => {
    const residentsLayer = [validated.id, byBlocked.id, residentsOnly.id, publicOne.id];
    const visitingCurator = await newUser(t);
    await addMembership(t, visitingCurator, territory, { role: 'VISITOR', capabilities: ['CURATOR'] });
    expect(await listIds(visitingCurator, territory)).toEqual(residentsLayer);
    expect(await listIds(await newModerator(t, territory), territory)).toEqual(residentsLayer);
    expect(await listIds(await newCurator(t, territory), territory)).toEqual(residentsLayer);
    expect(await listIds(await newAdmin(t), territory)).toEqual(residentsLayer);
    // A capability in another territory does not count here.
    const elsewhere = await newUser(t);
    await addMembership(t, elsewhere, await newTerritory(t), { role: 'VISITOR', capabilities: ['CURATOR'] });
    expect(await listIds(elsewhere, territory)).not.toContain(residentsOnly.id);
  });

  it('hides the entities of users the caller blocked (and only from the caller)', async () => {
    const blocker = await newResident(t, territory);
    await block(t, blocker, blockedAuthor);
    const ids = await listIds(blocker, territory);
    expect(ids).not.toContain(byBlocked.id);
    expect(ids).toContain(publicOne.id);
    expect(await listIds(await newResident(t, territory), territory)).toContain(byBlocked.id);
  });

  it('pages with the envelope and the same filters', async () => {
    const visitor = await newVisitor(t, territory);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/map/entities/paged?territoryId=${territory.id}&pageSize=2`, headers: visitor.headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ pageNumber: 1, pageSize: 2, totalCount: 3, totalPages: 2, hasPreviousPage: false, hasNextPage: true });
    expect(res.json().items).toHaveLength(2);
    const page2 = await t.app.inject({
      method: 'GET',
      url: `/api/v1/map/entities/paged?territoryId=${territory.id}&pageSize=2&pageNumber=2`,
      headers: visitor.headers,
    });
    expect(page2.json().items.map((e: EntityBody) => e.id)).toEqual([publicOne.id]);
  });

  it('is 401 without a token, 400 for bad paging or ids, 404 for an unknown territory', async () => {
    const user = await newUser(t);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/map/entities?territoryId=${territory.id}` })).statusCode).toBe(401);
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/v1/map/entities/paged?territoryId=${territory.id}&pageSize=101`, headers: user.headers })).statusCode,
    ).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/map/entities?territoryId=${territory.id}&take=0`, headers: user.headers })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/map/entities?territoryId=nope`, headers: user.headers })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/map/entities?territoryId=${UNKNOWN_ID}`, headers: user.headers })).statusCode).toBe(404);
    const noSelection = await t.app.inject({ method: 'GET', url: `/api/v1/map/entities`, headers: user.headers });
    expect(noSelection.statusCode).toBe(404);
  });
});

describe('PATCH /api/v1/map/entities/{entityId}/validation', () => {
  let territory: TestTerritory;
  let entity: EntityBody;
  beforeAll(async () => {
    territory = await newTerritory(t);
    entity = await suggested(await newResident(t, territory), territory);
  });
  const validate = (user: TestUser | null, entityId: string, payload: unknown) =>
    t.app.inject({ method: 'PATCH', url: `/api/v1/map/entities/${entityId}/validation`, headers: user?.headers ?? {}, payload: payload as object });

  it('a curator validates (VALIDATED), rejects (REJECTED, hidden) and may change their mind; each decision audited', async () => {
    const curator = await newCurator(t, territory);
    const ok = await validate(curator, entity.id, { validated: true });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ id: entity.id, status: 'VALIDATED' });

    const rejected = await validate(curator, entity.id, { validated: false });
    expect(rejected.json()).toMatchObject({ status: 'REJECTED' });
    expect(await listIds(await newResident(t, territory), territory)).not.toContain(entity.id);

    const again = await validate(curator, entity.id, { validated: true });
    expect(again.json()).toMatchObject({ status: 'VALIDATED' });
    expect(await countRows(t, 'audit_entry', `action = 'map_entity.validated' and subject_id = $1`, [entity.id])).toBe(3);
  });

  it('a SYSTEM_ADMIN may validate too', async () => {
    const res = await validate(await newAdmin(t), entity.id, { validated: true });
    expect(res.statusCode).toBe(200);
  });

  it('is 401 without a token, 403 for a resident or a curator of another territory, 404 unknown, 400 bad body', async () => {
    expect((await validate(null, entity.id, { validated: true })).statusCode).toBe(401);
    const resident = await newResident(t, territory);
    const before = await countRows(t, 'audit_entry');
    const forbidden = await validate(resident, entity.id, { validated: false });
    expect(forbidden.statusCode).toBe(403);
    const otherCurator = await newCurator(t, await newTerritory(t));
    expect((await validate(otherCurator, entity.id, { validated: false })).statusCode).toBe(403);
    const curator = await newCurator(t, territory);
    expect((await validate(curator, UNKNOWN_ID, { validated: true })).statusCode).toBe(404);
    expect((await validate(curator, entity.id, { validated: 'yes' })).statusCode).toBe(400);
    expect((await validate(curator, entity.id, {})).statusCode).toBe(400);
    expect((await validate(curator, 'nope', { validated: true })).statusCode).toBe(400);
    expect(await countRows(t, 'audit_entry')).toBe(before);
    const [row] = await t.sql<{ status: string }>('select status from map_entity where id = $1', [entity.id]);
    expect(row?.status).toBe('VALIDATED');
  });
});

describe('POST /api/v1/map/entities/{entityId}/confirmations', () => {
  let territory: TestTerritory;
  let entity: EntityBody;
  beforeAll(async () => {
    territory = await newTerritory(t);
    entity = await suggested(await newResident(t, territory), territory);
  });
  const confirm = (user: TestUser | null, entityId: string, territoryId?: string) =>
    t.app.inject({
      method: 'POST',
      url: `/api/v1/map/entities/${entityId}/confirmations${territoryId ? `?territoryId=${territoryId}` : ''}`,
      headers: user?.headers ?? {},
    });

  it('counts a member once: 201 the first time, 200 (unchanged) on a repeat', async () => {
    const visitor = await newVisitor(t, territory);
    const first = await confirm(visitor, entity.id, territory.id);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ id: entity.id, confirmationCount: 1 });
    const repeat = await confirm(visitor, entity.id, territory.id);
    expect(repeat.statusCode).toBe(200);
    expect(repeat.json()).toMatchObject({ confirmationCount: 1 });
    const other = await confirm(await newResident(t, territory), entity.id, territory.id);
    expect(other.json()).toMatchObject({ confirmationCount: 2 });
    expect(await countRows(t, 'map_entity_confirmation', 'entity_id = $1', [entity.id])).toBe(2);
    const [listed] = (
      await t.app.inject({ method: 'GET', url: `/api/v1/map/entities?territoryId=${territory.id}`, headers: visitor.headers })
    ).json() as EntityBody[];
    expect(listed).toMatchObject({ id: entity.id, confirmationCount: 2 });
  });

  it('counts concurrent repeats once', async () => {
    const resident = await newResident(t, territory);
    const [before] = await t.sql<{ confirmation_count: number }>('select confirmation_count from map_entity where id = $1', [entity.id]);
    const results = await Promise.all([1, 2, 3, 4].map(() => confirm(resident, entity.id, territory.id)));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 201]);
    const [after] = await t.sql<{ confirmation_count: number }>('select confirmation_count from map_entity where id = $1', [entity.id]);
    expect(after!.confirmation_count).toBe(before!.confirmation_count + 1);
  });

  it('is 401 without a token, 403 for a non-member, 400 without territoryId, 404 for another territory or an unknown entity', async () => {
    const before = await countRows(t, 'map_entity_confirmation');
    expect((await confirm(null, entity.id, territory.id)).statusCode).toBe(401);
    const stranger = await newUser(t);
    const forbidden = await confirm(stranger, entity.id, territory.id);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ code: 'NOT_MEMBER' });
    const member = await newVisitor(t, territory);
    const missing = await confirm(member, entity.id);
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'territoryId' }] });
    expect((await confirm(member, entity.id, 'nope')).statusCode).toBe(400);
    expect((await confirm(member, 'nope', territory.id)).statusCode).toBe(400);
    const other = await newTerritory(t);
    await addMembership(t, member, other);
    expect((await confirm(member, entity.id, other.id)).statusCode).toBe(404);
    expect((await confirm(member, UNKNOWN_ID, territory.id)).statusCode).toBe(404);
    expect(await countRows(t, 'map_entity_confirmation')).toBe(before);
  });

  it('a RESIDENTS_ONLY entity is unknown (404) to a visitor; a REJECTED one to everybody', async () => {
    const hidden = await suggested(await newResident(t, territory), territory, { visibility: 'RESIDENTS_ONLY' });
    expect((await confirm(await newVisitor(t, territory), hidden.id, territory.id)).statusCode).toBe(404);
    expect((await confirm(await newResident(t, territory), hidden.id, territory.id)).statusCode).toBe(201);
    await t.sql(`update map_entity set status = 'REJECTED' where id = $1`, [hidden.id]);
    expect((await confirm(await newResident(t, territory), hidden.id, territory.id)).statusCode).toBe(404);
  });

  it('waits for a rejection in progress, then is 404 and counts nothing', async () => {
    const racing = await suggested(await newResident(t, territory), territory);
    const resident = await newResident(t, territory);
    // The curator's update commits while the confirmation is under way: it waits for it and reads the REJECTED row.
    const reject = { sql: `update map_entity set status = 'REJECTED', validated_at_utc = now() where id = $1`, params: [racing.id] };
    const res = await commitDuring(t, reject, () => confirm(resident, racing.id, territory.id));
    expect(res.statusCode, res.body).toBe(404);
    const [row] = await t.sql<{ status: string; confirmation_count: number }>('select status, confirmation_count from map_entity where id = $1', [racing.id]);
    expect(row).toEqual({ status: 'REJECTED', confirmation_count: 0 });
    expect(await countRows(t, 'map_entity_confirmation', 'entity_id = $1', [racing.id])).toBe(0);
  });

  it('an entity of a user the caller blocked is unknown (404) to the caller, as in the lists; others confirm it', async () => {
    const author = await newResident(t, territory);
    const byBlocked = await suggested(author, territory);
    const blocker = await newResident(t, territory);
    await block(t, blocker, author);
    const res = await confirm(blocker, byBlocked.id, territory.id);
    expect(res.statusCode, res.body).toBe(404);
    expect(await countRows(t, 'map_entity_confirmation', 'entity_id = $1', [byBlocked.id])).toBe(0);
    expect((await confirm(await newResident(t, territory), byBlocked.id, territory.id)).statusCode).toBe(201);
  });

  it('a RESIDENTS_ONLY entity is known to its creator (even a visitor) and to a visiting curator or moderator', async () => {
    const visitor = await newVisitor(t, territory);
    const own = await suggested(visitor, territory, { visibility: 'RESIDENTS_ONLY' });
    expect((await confirm(visitor, own.id, territory.id)).statusCode).toBe(201);
    expect((await confirm(await newVisitor(t, territory), own.id, territory.id)).statusCode).toBe(404);
    const visitingCurator = await newUser(t);
    await addMembership(t, visitingCurator, territory, { role: 'VISITOR', capabilities: ['CURATOR'] });
    expect((await confirm(visitingCurator, own.id, territory.id)).statusCode).toBe(201);
    expect((await confirm(await newModerator(t, territory), own.id, territory.id)).statusCode).toBe(201);
    expect(await countRows(t, 'map_entity_confirmation', 'entity_id = $1', [own.id])).toBe(3);
  });

  it('is also a tRPC procedure taking territoryId in its input', async () => {
    const resident = await newResident(t, territory);
    const res = await t.app.inject({
      method: 'POST',
      url: '/trpc/map.confirmEntity',
      headers: { ...resident.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ entityId: entity.id, territoryId: territory.id }),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result.data).toMatchObject({ id: entity.id });
  });
});

describe('POST /api/v1/map/entities/{entityId}/relations', () => {
  let territory: TestTerritory;
  let entity: EntityBody;
  beforeAll(async () => {
    territory = await newTerritory(t);
    entity = await suggested(await newResident(t, territory), territory);
  });
  const relate = (user: TestUser | null, entityId: string) =>
    t.app.inject({ method: 'POST', url: `/api/v1/map/entities/${entityId}/relations`, headers: user?.headers ?? {} });

  it('relates a verified resident once: 201, then 200 with the same relation', async () => {
    const resident = await newResident(t, territory, { verified: true });
    const first = await relate(resident, entity.id);
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ entityId: entity.id, userId: resident.id, id: expect.any(String), createdAtUtc: expect.any(String) });
    const repeat = await relate(resident, entity.id);
    expect(repeat.statusCode).toBe(200);
    expect(repeat.json()).toEqual(first.json());
    expect(await countRows(t, 'map_entity_relation', 'entity_id = $1 and user_id = $2', [entity.id, resident.id])).toBe(1);
  });

  it('accepts a document-verified resident as well', async () => {
    const user = await newUser(t);
    await addMembership(t, user, territory, { role: 'RESIDENT', documentVerified: true });
    expect((await relate(user, entity.id)).statusCode).toBe(201);
  });

  it('is 401 without a token, 403 for an unverified resident, a visitor or a non-member, 404 unknown, 400 malformed', async () => {
    const before = await countRows(t, 'map_entity_relation');
    expect((await relate(null, entity.id)).statusCode).toBe(401);
    for (const user of [await newResident(t, territory), await newVisitor(t, territory), await newUser(t)]) {
      const res = await relate(user, entity.id);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'NOT_VERIFIED_RESIDENT' });
    }
    const verified = await newResident(t, territory, { verified: true });
    expect((await relate(verified, UNKNOWN_ID)).statusCode).toBe(404);
    expect((await relate(verified, 'nope')).statusCode).toBe(400);
    expect(await countRows(t, 'map_entity_relation')).toBe(before);
  });
});
