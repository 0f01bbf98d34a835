import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validatedAlertsCountQuery, validatedAlertsQuery } from '../../src/routers/alerts/alerts.queries.js';
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

const alertBody = (territory: { id: string }, extra: Record<string, unknown> = {}) => ({
  territoryId: territory.id,
  title: 'Dengue outbreak',
  description: 'Standing water near the school',
  ...extra,
});

const report = (user: TestUser, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/api/v1/alerts', headers: { ...user.headers, ...headers }, payload: body });

const decide = (user: TestUser | null, alertId: string, payload: unknown) =>
  t.app.inject({ method: 'PATCH', url: `/api/v1/alerts/${alertId}/validation`, headers: user?.headers ?? {}, payload: payload as Record<string, unknown> });

async function reported(user: TestUser, territory: { id: string }, extra: Record<string, unknown> = {}) {
  const res = await report(user, alertBody(territory, extra));
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; postId: string };
}

/** The answer of every alerts operation in a territory without ALERTPOSTS: the domain does not exist there. */
function expectAlertsDisabled(res: { statusCode: number; json: () => unknown }, instance: string) {
  expect(res.statusCode).toBe(404);
  expect(res.json()).toEqual({
    type: expect.any(String),
    title: 'Not Found',
    status: 404,
    code: 'ALERTS_DISABLED',
    detail: 'Alerts are not enabled in this territory (feature flag ALERTPOSTS).',
    instance,
  });
}

/** Switches a territory's ALERTPOSTS off, keeping its alerts (a curator may turn the flag off at any time). */
const disableAlerts = (territoryId: string) =>
  t.sql(`update territory set enabled_flags = array_remove(enabled_flags, 'ALERTPOSTS') where id = $1`, [territoryId]);

const postOf = async (postId: string) =>
  (await t.sql<{ type: string; status: string; alert_id: string }>('select type, status, alert_id from post where id = $1', [postId]))[0];
const alertCounts = async () => ({ alerts: await countRows(t, 'alert'), posts: await countRows(t, 'post') });

describe('POST /api/v1/alerts', () => {
  let territory: TestTerritory;
  beforeAll(async () => {
    territory = await newTerritory(t, { flags: ['ALERTPOSTS'] });
  });

  it('creates a PENDING alert with a PENDING ALERT post (201)', async () => {
    const visitor = await newVisitor(t, territory);
    const res = await report(visitor, alertBody(territory, { latitude: -23.5, longitude: -46.6 }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      title: 'Dengue outbreak',
      description: 'Standing water near the school',
      latitude: -23.5,
      longitude: -46.6,
      status: 'PENDING',
      reportedByUserId: visitor.id,
      postId: expect.any(String),
      createdAtUtc: expect.any(String),
      decidedAtUtc: null,
      decidedByUserId: null,
    });
    expect(await postOf(res.json().postId)).toEqual({ type: 'ALERT', status: 'PENDING', alert_id: res.json().id });
    expect(await countRows(t, 'outbox_message', "type = 'ALERT_VALIDATED'")).toBe(0);
  });

  it('takes the territory from the X-Session-Id selection', async () => {
    const resident = await newResident(t, territory);
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/selection',
      headers: { ...resident.headers, 'x-session-id': 'alerts' },
      payload: { territoryId: territory.id },
    });
    const res = await report(resident, { title: 'Flood', description: 'River rising' }, { 'x-session-id': 'alerts' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ territoryId: territory.id, latitude: null, longitude: null });
    const none = await report(resident, { title: 'Flood', description: 'River rising' });
    expect(none.statusCode).toBe(404);
  });

  it('needs a token', async () => {
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/alerts', payload: alertBody(territory) })).statusCode).toBe(401);
  });

  it('is 403 for a non-member, 404 for an unknown territory, 404 ALERTS_DISABLED without the flag (for anyone); nothing written', async () => {
    const before = await alertCounts();
    const stranger = await newUser(t);
    const forbidden = await report(stranger, alertBody(territory));
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ code: 'NOT_MEMBER' });
    expect((await report(stranger, alertBody({ id: UNKNOWN_ID }))).statusCode).toBe(404);
    const plain = await newTerritory(t);
    for (const user of [await newResident(t, plain), stranger]) {
      const disabled = await report(user, alertBody(plain));
      expectAlertsDisabled(disabled, '/api/v1/alerts');
    }
    expect(await alertCounts()).toEqual(before);
  });

  it("is 400 naming the rule when the territory's moderation rules refuse the content, writing nothing", async () => {
    const ruled = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const resident = await newResident(t, ruled);
    await t.sql(
      `insert into territory_moderation_rule (id, created_at_utc, territory_id, rule_type, name, config, is_active, updated_at_utc)
       values (gen_random_uuid(), now(), $1, 'ContentType', 'Plain posts only', '{"allowedTypes": ["POST"]}', true, now())`,
      [ruled.id],
    );
    const before = await alertCounts();
    const res = await report(resident, alertBody(ruled));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'MODERATION_RULE_VIOLATION' });
    expect(res.json().detail).toContain('Plain posts only');
    expect(await alertCounts()).toEqual(before);
  });

  it('is 403 POSTING_RESTRICTED for a member under a posting restriction (the alert becomes a feed post), writing nothing', async () => {
    const restricted = await newResident(t, territory);
    await t.sql(
      `insert into posting_restriction (id, created_at_utc, territory_id, user_id, ends_at_utc) values (gen_random_uuid(), now(), $1, $2, now() + interval '7 days')`,
      [territory.id, restricted.id],
    );
    const before = await alertCounts();
    const res = await report(restricted, alertBody(territory));
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json()).toMatchObject({ code: 'POSTING_RESTRICTED' });
    expect(await alertCounts()).toEqual(before);
  });

  it.each([
    ['a title over 200 characters', { title: 'x'.repeat(201) }, 'title'],
    ['no title', { title: undefined }, 'title'],
    ['a description over 2000 characters', { description: 'x'.repeat(2001) }, 'description'],
    ['no description', { description: undefined }, 'description'],
    ['a latitude without longitude', { latitude: 1 }, 'longitude'],
    ['a malformed territory id', { territoryId: 'nope' }, 'territoryId'],
  ])('is 400 for %s, writing nothing', async (_name, patch, field) => {
    const resident = await newResident(t, territory);
    const before = await alertCounts();
    const res = await report(resident, alertBody(territory, patch));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: expect.arrayContaining([expect.objectContaining({ field })]) });
    expect(await alertCounts()).toEqual(before);
  });
});

describe('PATCH /api/v1/alerts/{alertId}/validation', () => {
  let territory: TestTerritory;
  let curator: TestUser;
  let resident: TestUser;
  beforeAll(async () => {
    territory = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    curator = await newCurator(t, territory);
    resident = await newResident(t, territory);
  });

  it('validated=true makes the alert VALIDATED, publishes its post and notifies the residents once; audited', async () => {
    const reporter = await newVisitor(t, territory);
    const alert = await reported(reporter, territory);
    const res = await decide(curator, alert.id, { validated: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: alert.id, status: 'VALIDATED', decidedByUserId: curator.id, decidedAtUtc: expect.any(String) });
    expect((await postOf(alert.postId))!.status).toBe('PUBLISHED');
    const outbox = await t.sql<{ type: string; recipient_user_ids: string[]; data: Record<string, unknown> }>(
      'select type, recipient_user_ids, data from outbox_message where source_key = $1',
      [`alert:${alert.id}:validated`],
    );
    expect(outbox).toHaveLength(1);
    expect(outbox[0]!.type).toBe('ALERT_VALIDATED');
    expect(outbox[0]!.recipient_user_ids).toContain(resident.id);
    expect(outbox[0]!.data).toMatchObject({ territoryId: territory.id, alertId: alert.id, postId: alert.postId });

    // Repeatable: the same decision again changes nothing and notifies no one again.
    const again = await decide(curator, alert.id, { validated: true });
    expect(again.statusCode).toBe(200);
    expect(again.json().status).toBe('VALIDATED');
    expect(await countRows(t, 'outbox_message', 'source_key = $1', [`alert:${alert.id}:validated`])).toBe(1);
    expect(await countRows(t, 'audit_entry', `action = 'alert.validated' and subject_id = $1`, [alert.id])).toBe(2);
  });

  it('a post hidden by a moderation sanction stays hidden when its alert is validated again or rejected', async () => {
    const alert = await reported(resident, territory);
    expect((await decide(curator, alert.id, { validated: true })).statusCode).toBe(200);
    await t.sql(`update post set status = 'HIDDEN' where id = $1`, [alert.postId]);
    for (const validated of [true, false]) {
      expect((await decide(curator, alert.id, { validated })).statusCode).toBe(200);
      expect((await postOf(alert.postId))!.status).toBe('HIDDEN');
    }
  });

  it('validated=false rejects the alert and its post; a system admin may decide too', async () => {
    const alert = await reported(resident, territory);
    const admin = await newAdmin(t);
    const res = await decide(admin, alert.id, { validated: false });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'REJECTED', decidedByUserId: admin.id });
    expect((await postOf(alert.postId))!.status).toBe('REJECTED');
    expect(await countRows(t, 'outbox_message', 'source_key = $1', [`alert:${alert.id}:validated`])).toBe(0);
    expect(await countRows(t, 'audit_entry', `action = 'alert.rejected' and subject_id = $1`, [alert.id])).toBe(1);
  });

  it('is 403 for a resident without CURATOR and for a curator of another territory, changing nothing', async () => {
    const alert = await reported(resident, territory);
    const elsewhere = await newCurator(t, await newTerritory(t));
    for (const user of [resident, elsewhere]) {
      const res = await decide(user, alert.id, { validated: true });
      expect(res.statusCode).toBe(403);
    }
    expect((await t.sql<{ status: string }>('select status from alert where id = $1', [alert.id]))[0]!.status).toBe('PENDING');
    expect((await postOf(alert.postId))!.status).toBe('PENDING');
  });

  it('is 404 ALERTS_DISABLED once the territory switches ALERTPOSTS off, for its curator and a system admin; nothing written', async () => {
    const switched = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const switchedCurator = await newCurator(t, switched);
    const alert = await reported(await newResident(t, switched), switched);
    await disableAlerts(switched.id);
    const before = {
      outbox: await countRows(t, 'outbox_message'),
      audit: await countRows(t, 'audit_entry', 'subject_id = $1', [alert.id]),
    };
    for (const [user, validated] of [
      [switchedCurator, true],
      [switchedCurator, false],
      [await newAdmin(t), true],
      [resident, true],
    ] as const) {
      expectAlertsDisabled(await decide(user, alert.id, { validated }), `/api/v1/alerts/${alert.id}/validation`);
    }
    expect(await t.sql('select status, decided_at_utc, decided_by_user_id from alert where id = $1', [alert.id])).toEqual([
      { status: 'PENDING', decided_at_utc: null, decided_by_user_id: null },
    ]);
    expect((await postOf(alert.postId))!.status).toBe('PENDING');
    expect(await countRows(t, 'outbox_message')).toBe(before.outbox);
    expect(await countRows(t, 'audit_entry', 'subject_id = $1', [alert.id])).toBe(before.audit);
  });

  it('is 400 on a bad body or malformed id, 404 on an unknown alert, 401 without token', async () => {
    const alert = await reported(resident, territory);
    expect((await decide(curator, alert.id, { validated: 'yes' })).statusCode).toBe(400);
    expect((await decide(curator, alert.id, {})).statusCode).toBe(400);
    expect((await decide(curator, 'nope', { validated: true })).statusCode).toBe(400);
    expect((await decide(curator, UNKNOWN_ID, { validated: true })).statusCode).toBe(404);
    expect((await decide(null, alert.id, { validated: true })).statusCode).toBe(401);
    expect((await t.sql<{ status: string }>('select status from alert where id = $1', [alert.id]))[0]!.status).toBe('PENDING');
  });
});

describe('GET /api/v1/alerts and /alerts/paged', () => {
  let territory: TestTerritory;
  let validatedIds: string[];
  beforeAll(async () => {
    territory = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const curator = await newCurator(t, territory);
    const resident = await newResident(t, territory);
    validatedIds = [];
    for (const title of ['first', 'second', 'third']) {
      const alert = await reported(resident, territory, { title });
      await decide(curator, alert.id, { validated: true });
      validatedIds.push(alert.id);
    }
    await reported(resident, territory, { title: 'pending' });
    const rejected = await reported(resident, territory, { title: 'rejected' });
    await decide(curator, rejected.id, { validated: false });
  });

  it('lists VALIDATED alerts only, newest first, to any signed-in user', async () => {
    const stranger = await newUser(t);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/alerts?territoryId=${territory.id}`, headers: stranger.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().map((a: { id: string }) => a.id)).toEqual([...validatedIds].reverse());
    expect(res.json().every((a: { status: string }) => a.status === 'VALIDATED')).toBe(true);
    const skipTake = await t.app.inject({ method: 'GET', url: `/api/v1/alerts?territoryId=${territory.id}&skip=1&take=1`, headers: stranger.headers });
    expect(skipTake.json().map((a: { id: string }) => a.id)).toEqual([validatedIds[1]]);
  });

  it('pages with the envelope and takes the territory from the session', async () => {
    const user = await newUser(t);
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/selection',
      headers: { ...user.headers, 'x-session-id': 'a1' },
      payload: { territoryId: territory.id },
    });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/alerts/paged?pageSize=2', headers: { ...user.headers, 'x-session-id': 'a1' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ pageNumber: 1, pageSize: 2, totalCount: 3, totalPages: 2, hasPreviousPage: false, hasNextPage: true });
    expect(res.json().items.map((a: { id: string }) => a.id)).toEqual([validatedIds[2], validatedIds[1]]);
  });

  it('reads on the pool: no fork', async () => {
    const ids = (items: { id: string }[]) => items.map((a) => a.id);
    await forks.expectReadsWithoutFork(await newUser(t), [
      [`/api/v1/alerts?territoryId=${territory.id}`, (b) => expect(ids(b as { id: string }[])).toEqual([...validatedIds].reverse())],
      [
        `/api/v1/alerts/paged?territoryId=${territory.id}&pageSize=2&pageNumber=2`,
        (b) =>
          expect(b).toMatchObject({ totalCount: 3, totalPages: 2, items: [{ id: validatedIds[0], status: 'VALIDATED', decidedAtUtc: expect.any(String) }] }),
      ],
    ]);
  });

  it('is 404 ALERTS_DISABLED in a territory without ALERTPOSTS, even with VALIDATED alerts, by id or session', async () => {
    const switched = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const curator = await newCurator(t, switched);
    const alert = await reported(await newResident(t, switched), switched);
    expect((await decide(curator, alert.id, { validated: true })).statusCode).toBe(200);
    await disableAlerts(switched.id);
    const user = await newUser(t);
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/selection',
      headers: { ...user.headers, 'x-session-id': 'off' },
      payload: { territoryId: switched.id },
    });
    for (const [url, headers] of [
      [`/api/v1/alerts?territoryId=${switched.id}`, user.headers],
      [`/api/v1/alerts/paged?territoryId=${switched.id}`, user.headers],
      ['/api/v1/alerts', { ...user.headers, 'x-session-id': 'off' }],
      ['/api/v1/alerts/paged?pageSize=5', { ...user.headers, 'x-session-id': 'off' }],
      [`/api/v1/alerts?territoryId=${switched.id}`, curator.headers],
    ] as const) {
      expectAlertsDisabled(await t.app.inject({ method: 'GET', url, headers }), url.split('?')[0]!);
    }
  });

  it('is 404 for an unknown or unselected territory, 400 on bad paging, 401 without token', async () => {
    const user = await newUser(t);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/alerts?territoryId=${UNKNOWN_ID}`, headers: user.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/alerts/paged', headers: user.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/alerts?territoryId=${territory.id}&take=101`, headers: user.headers })).statusCode).toBe(400);
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/v1/alerts/paged?territoryId=${territory.id}&pageNumber=0`, headers: user.headers })).statusCode,
    ).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/alerts?territoryId=nope`, headers: user.headers })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/alerts?territoryId=${territory.id}` })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/alerts/paged?territoryId=${territory.id}` })).statusCode).toBe(401);
  });
});

describe('the same procedures over tRPC', () => {
  it('reports and validates an alert through /trpc', async () => {
    const territory = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const reporter = await newResident(t, territory);
    const curator = await newCurator(t, territory);
    const created = await t.app.inject({ method: 'POST', url: '/trpc/alerts.report', headers: reporter.headers, payload: alertBody(territory) });
    expect(created.statusCode).toBe(200);
    const alert = created.json().result.data as { id: string };
    const decided = await t.app.inject({
      method: 'POST',
      url: '/trpc/alerts.validate',
      headers: curator.headers,
      payload: { alertId: alert.id, validated: true },
    });
    expect(decided.json().result.data).toMatchObject({ id: alert.id, status: 'VALIDATED' });

    // Without ALERTPOSTS: NOT_FOUND with the stable code, as over REST.
    await disableAlerts(territory.id);
    const listed = await t.app.inject({
      method: 'GET',
      url: `/trpc/alerts.list?input=${encodeURIComponent(JSON.stringify({ territoryId: territory.id }))}`,
      headers: reporter.headers,
    });
    expect(listed.statusCode).toBe(404);
    expect(listed.json().error.data).toMatchObject({ code: 'NOT_FOUND', problemCode: 'ALERTS_DISABLED' });
  });
});

describe('the alert list uses its index (EXPLAIN on 6000 alerts)', () => {
  let territoryId: string;
  beforeAll(async () => {
    const reporter = await newUser(t);
    await t.sql(`
      insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
      select gen_random_uuid(), now(), 'Alerts ' || lpad(i::text, 2, '0'), null, 'City', 'ST', -20, -50, 5, 'ACTIVE', '{}', '{}'
        from generate_series(0, 19) as i`);
    // 300 alerts a territory, a third of them VALIDATED.
    await t.sql(
      `insert into alert (id, created_at_utc, territory_id, title, description, status, reported_by_user_id)
       select gen_random_uuid(), now() - make_interval(mins => i), t.id, 'Alert', 'Text', case when i % 3 = 0 then 'VALIDATED' else 'PENDING' end, $1
         from generate_series(1, 300) as i, territory t where t.name like 'Alerts %'`,
      [reporter.id],
    );
    await t.sql('vacuum analyze territory, alert');
    territoryId = (await t.sql<{ id: string }>(`select id from territory where name = 'Alerts 00'`))[0]!.id;
  });

  it("a territory's VALIDATED alerts, newest first, and their count: the partial alert_validated_territory_idx", async () => {
    for (const query of [validatedAlertsQuery(territoryId, 0, 20), validatedAlertsQuery(territoryId, 40, 20), validatedAlertsCountQuery(territoryId)]) {
      await expectIndexedRead(t, query, ['alert'], /^alert_validated_territory_idx$/);
    }
  });
});
