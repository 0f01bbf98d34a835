import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { commitDuring, countRows, newResident, newTerritory, newUser, newVisitor, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const DAY = 24 * 3600 * 1000;
const inDays = (days: number) => new Date(Date.now() + days * DAY).toISOString();

const eventBody = (territory: { id: string }, extra: Record<string, unknown> = {}) => ({
  territoryId: territory.id,
  title: 'Community clean-up',
  description: 'Bring gloves',
  startsAtUtc: inDays(7),
  endsAtUtc: inDays(7.1),
  latitude: -23.55,
  longitude: -46.63,
  locationLabel: 'Main square',
  ...extra,
});

async function createEvent(user: TestUser, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'POST', url: '/api/v1/events', headers: { ...user.headers, ...headers }, payload: body });
}

async function created(user: TestUser, territory: { id: string }, extra: Record<string, unknown> = {}) {
  const res = await createEvent(user, eventBody(territory, extra));
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; postId: string; status: string };
}

/** An image asset owned by the user, as the media upload would have stored it. */
async function ownedImage(user: TestUser) {
  const id = newId();
  await t.sql(
    `insert into media_asset (id, created_at_utc, uploaded_by_user_id, media_type, mime_type, size_bytes, duration_seconds, storage_key)
     values ($1, now(), $2, 'IMAGE', 'image/png', 68, null, $3)`,
    [id, user.id, `test/${id}`],
  );
  return id;
}

const eventCounts = async () => ({ events: await countRows(t, 'event'), posts: await countRows(t, 'post'), outbox: await countRows(t, 'outbox_message') });

describe('POST /api/v1/events', () => {
  let territory: TestTerritory;
  beforeAll(async () => {
    territory = await newTerritory(t);
  });

  it('lets a visitor create a SCHEDULED event: 201 + Location, the creator role, a feed post, residents notified', async () => {
    const visitor = await newVisitor(t, territory);
    const resident = await newResident(t, territory);
    const res = await createEvent(visitor, eventBody(territory));
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(res.headers.location).toBe(`/api/v1/events/${body.id}`);
    expect(body).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      title: 'Community clean-up',
      description: 'Bring gloves',
      startsAtUtc: expect.any(String),
      endsAtUtc: expect.any(String),
      latitude: -23.55,
      longitude: -46.63,
      locationLabel: 'Main square',
      coverMediaId: null,
      additionalMediaIds: [],
      mediaUrls: [],
      status: 'SCHEDULED',
      createdByUserId: visitor.id,
      createdByMembership: 'VISITOR',
      interestedCount: 0,
      confirmedCount: 0,
      myParticipation: null,
      postId: expect.any(String),
      createdAtUtc: expect.any(String),
    });
    const [post] = await t.sql<{ type: string; event_id: string; status: string; author_user_id: string }>(
      'select type, event_id, status, author_user_id from post where id = $1',
      [body.postId],
    );
    expect(post).toEqual({ type: 'EVENT', event_id: body.id, status: 'PUBLISHED', author_user_id: visitor.id });
    const outbox = await t.sql<{ type: string; recipient_user_ids: string[]; data: Record<string, unknown> }>(
      `select type, recipient_user_ids, data from outbox_message where source_key = $1`,
      [`event:${body.id}:created`],
    );
    expect(outbox).toHaveLength(1);
    expect(outbox[0]!.type).toBe('EVENT_CREATED');
    expect(outbox[0]!.recipient_user_ids).toContain(resident.id);
    expect(outbox[0]!.recipient_user_ids).not.toContain(visitor.id);
    expect(outbox[0]!.data).toMatchObject({ territoryId: territory.id, eventId: body.id, postId: body.postId });
  });

  it('records RESIDENT for a resident creator and accepts a start up to a year back, without an end', async () => {
    const resident = await newResident(t, territory);
    const res = await createEvent(resident, eventBody(territory, { startsAtUtc: inDays(-300), endsAtUtc: null, description: null, locationLabel: null }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ createdByMembership: 'RESIDENT', endsAtUtc: null, description: null, locationLabel: null });
  });

  it('takes the territory from the X-Session-Id selection; without a selection it is 404', async () => {
    const resident = await newResident(t, territory);
    const select = await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/selection',
      headers: { ...resident.headers, 'x-session-id': 'events-session' },
      payload: { territoryId: territory.id },
    });
    expect(select.statusCode).toBe(200);
    const { territoryId: _omit, ...withoutTerritory } = eventBody(territory);
    const ok = await createEvent(resident, withoutTerritory, { 'x-session-id': 'events-session' });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().territoryId).toBe(territory.id);
    const none = await createEvent(resident, withoutTerritory, { 'x-session-id': 'other-session' });
    expect(none.statusCode).toBe(404);
    expect(none.json().code).toBe('NO_TERRITORY_SELECTED');
  });

  it('attaches the cover and additional media it is given, cover first', async () => {
    const resident = await newResident(t, territory);
    const cover = await ownedImage(resident);
    const extra = await ownedImage(resident);
    const res = await createEvent(resident, eventBody(territory, { coverMediaId: cover, additionalMediaIds: [extra] }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      coverMediaId: cover,
      additionalMediaIds: [extra],
      mediaUrls: [`/api/v1/media/${cover}`, `/api/v1/media/${extra}`],
    });
  });

  it("refuses someone else's media with 400, writing nothing", async () => {
    const resident = await newResident(t, territory);
    const other = await newUser(t);
    const foreign = await ownedImage(other);
    const before = await eventCounts();
    const res = await createEvent(resident, eventBody(territory, { coverMediaId: foreign }));
    expect(res.statusCode).toBe(400);
    expect(await eventCounts()).toEqual(before);
    expect(await countRows(t, 'media_attachment', 'media_asset_id = $1', [foreign])).toBe(0);
  });

  it('needs a token', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/events', payload: eventBody(territory) });
    expect(res.statusCode).toBe(401);
  });

  it('is 403 for a non-member and 404 for an unknown territory, writing nothing', async () => {
    const stranger = await newUser(t);
    const before = await eventCounts();
    const forbidden = await createEvent(stranger, eventBody(territory));
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().code).toBe('NOT_MEMBER');
    const missing = await createEvent(stranger, eventBody({ id: UNKNOWN_ID }));
    expect(missing.statusCode).toBe(404);
    expect(await eventCounts()).toEqual(before);
  });

  it.each([
    ['a title over 200 characters', { title: 'x'.repeat(201) }, 'title'],
    ['an empty title', { title: '  ' }, 'title'],
    ['a description over 2000 characters', { description: 'x'.repeat(2001) }, 'description'],
    ['no latitude', { latitude: undefined }, 'latitude'],
    ['no longitude', { longitude: undefined }, 'longitude'],
    ['a latitude out of range', { latitude: 91 }, 'latitude'],
    ['no start', { startsAtUtc: undefined }, 'startsAtUtc'],
    ['a start that is not a date-time', { startsAtUtc: 'tomorrow' }, 'startsAtUtc'],
    ['a start more than a year back', { startsAtUtc: inDays(-366), endsAtUtc: null }, 'startsAtUtc'],
    ['an end before the start', { endsAtUtc: inDays(6) }, 'endsAtUtc'],
    ['an end equal to the start', { startsAtUtc: '2099-01-01T10:00:00Z', endsAtUtc: '2099-01-01T10:00:00Z' }, 'endsAtUtc'],
    ['six additional media', { additionalMediaIds: [1, 2, 3, 4, 5, 6].map(() => newId()) }, 'additionalMediaIds'],
    ['a malformed cover id', { coverMediaId: 'nope' }, 'coverMediaId'],
    ['a malformed territory id', { territoryId: 'nope' }, 'territoryId'],
  ])('is 400 for %s, writing nothing', async (_name, patch, field) => {
    const resident = await newResident(t, territory);
    const before = await eventCounts();
    const res = await createEvent(resident, eventBody(territory, patch));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: expect.arrayContaining([expect.objectContaining({ field })]) });
    expect(await eventCounts()).toEqual(before);
  });

  it("is 400 naming the rule when the territory's moderation rules refuse the content, writing nothing", async () => {
    const ruled = await newTerritory(t);
    const resident = await newResident(t, ruled);
    await t.sql(
      `insert into territory_moderation_rule (id, created_at_utc, territory_id, rule_type, name, config, is_active, updated_at_utc)
       values ($1, now(), $2, 'ProhibitedWords', 'No raves', '{"words": ["rave"]}', true, now())`,
      [newId(), ruled.id],
    );
    const before = await eventCounts();
    const res = await createEvent(resident, eventBody(ruled, { description: 'A RAVE by the river' }));
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('MODERATION_RULE_VIOLATION');
    expect(res.json().detail).toContain('No raves');
    expect(await eventCounts()).toEqual(before);
    expect((await createEvent(resident, eventBody(ruled, { description: 'A picnic' }))).statusCode).toBe(201);
  });

  it("applies the ProhibitedWords and EventPolicy rules to the location label too (it goes out in the residents' notification)", async () => {
    const ruled = await newTerritory(t);
    const resident = await newResident(t, ruled);
    await newResident(t, ruled);
    await t.sql(
      `insert into territory_moderation_rule (id, created_at_utc, territory_id, rule_type, name, config, is_active, updated_at_utc)
       values ($1, now(), $3, 'ProhibitedWords', 'No raves', '{"words": ["rave"]}', true, now()),
              ($2, now(), $3, 'EventPolicy', 'No parties', '{"words": ["party"]}', true, now())`,
      [newId(), newId(), ruled.id],
    );
    for (const [word, rule] of [
      ['rave', 'No raves'],
      ['party', 'No parties'],
    ]) {
      const before = await eventCounts();
      const res = await createEvent(resident, eventBody(ruled, { title: 'Picnic', description: 'Bring food', locationLabel: `The ${word} plaza` }));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ code: 'MODERATION_RULE_VIOLATION', errors: [expect.objectContaining({ field: 'locationLabel' })] });
      expect(res.json().detail).toContain(rule);
      expect(await eventCounts()).toEqual(before);
    }
    expect((await createEvent(resident, eventBody(ruled, { title: 'Picnic', locationLabel: 'The plaza' }))).statusCode).toBe(201);
  });

  it('sanitizes free text', async () => {
    const resident = await newResident(t, territory);
    const res = await createEvent(resident, eventBody(territory, { title: '<b>Fair</b>', locationLabel: '<script>x</script>Park' }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ title: 'Fair', locationLabel: 'xPark' });
  });
});

describe('GET /api/v1/events/{eventId}', () => {
  it('answers the event to any signed-in user; 404 unknown, 400 malformed, 401 without token', async () => {
    const territory = await newTerritory(t);
    const event = await created(await newResident(t, territory), territory);
    const stranger = await newUser(t);
    const ok = await t.app.inject({ method: 'GET', url: `/api/v1/events/${event.id}`, headers: stranger.headers });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ id: event.id, myParticipation: null });
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/events/${UNKNOWN_ID}`, headers: stranger.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/events/nope', headers: stranger.headers })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/events/${event.id}` })).statusCode).toBe(401);
  });

  it('answers postId null once the author deleted the event post through the feed (foreign key, on delete set null)', async () => {
    const territory = await newTerritory(t);
    const author = await newVisitor(t, territory);
    const event = await created(author, territory);
    expect(event.postId).toEqual(expect.any(String));
    const before = await t.sql<{ post_id: string | null }>('select post_id from event where id = $1', [event.id]);
    expect(before).toEqual([{ post_id: event.postId }]);

    const removed = await t.app.inject({ method: 'DELETE', url: `/api/v1/feed/${event.postId}`, headers: author.headers });
    expect(removed.statusCode, removed.body).toBe(204);
    expect(await countRows(t, 'post', 'id = $1', [event.postId])).toBe(0);

    const res = await t.app.inject({ method: 'GET', url: `/api/v1/events/${event.id}`, headers: author.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: event.id, status: 'SCHEDULED', postId: null });
    expect(await t.sql('select post_id from event where id = $1', [event.id])).toEqual([{ post_id: null }]);
  });

  it('refuses an event row pointing at a post that does not exist (the database keeps the reference valid)', async () => {
    const territory = await newTerritory(t);
    const event = await created(await newResident(t, territory), territory);
    await expect(t.sql('update event set post_id = $1 where id = $2', [UNKNOWN_ID, event.id])).rejects.toThrow(/foreign key/);
  });
});

describe('GET /api/v1/events and /events/paged', () => {
  let territory: TestTerritory;
  let ids: { soon: string; later: string; recentPast: string; oldPast: string; ongoing: string };
  beforeAll(async () => {
    territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    ids = {
      later: (await created(resident, territory, { title: 'later', startsAtUtc: inDays(30), endsAtUtc: null })).id,
      oldPast: (await created(resident, territory, { title: 'old past', startsAtUtc: inDays(-200), endsAtUtc: inDays(-199.9) })).id,
      soon: (await created(resident, territory, { title: 'soon', startsAtUtc: inDays(2), endsAtUtc: null })).id,
      recentPast: (await created(resident, territory, { title: 'recent past', startsAtUtc: inDays(-3), endsAtUtc: null })).id,
      // Started yesterday, ends tomorrow: still upcoming-or-ongoing.
      ongoing: (await created(resident, territory, { title: 'ongoing', startsAtUtc: inDays(-1), endsAtUtc: inDays(1) })).id,
    };
    // Another territory's event never shows here.
    const other = await newTerritory(t);
    await created(await newResident(t, other), other);
  });

  it('lists every event of the territory to any signed-in user, upcoming (by start) first, then past (latest first)', async () => {
    const stranger = await newUser(t);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/events?territoryId=${territory.id}`, headers: stranger.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().map((e: { id: string }) => e.id)).toEqual([ids.ongoing, ids.soon, ids.later, ids.recentPast, ids.oldPast]);
  });

  it('applies skip and take (default 20), and the date filters', async () => {
    const user = await newUser(t);
    const get = async (query: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/events?territoryId=${territory.id}&${query}`, headers: user.headers });
      expect(res.statusCode).toBe(200);
      return res.json().map((e: { id: string }) => e.id);
    };
    expect(await get('skip=1&take=2')).toEqual([ids.soon, ids.later]);
    // From now on: only events not over yet.
    expect(await get(`startDate=${encodeURIComponent(new Date().toISOString())}`)).toEqual([ids.ongoing, ids.soon, ids.later]);
    // Until tomorrow (a date: the whole day counts): everything that started by then.
    const tomorrow = inDays(1).slice(0, 10);
    expect(await get(`endDate=${tomorrow}`)).toEqual([ids.ongoing, ids.recentPast, ids.oldPast]);
    expect(await get(`startDate=${inDays(-10).slice(0, 10)}&endDate=${tomorrow}`)).toEqual([ids.ongoing, ids.recentPast]);
  });

  it('pages with the envelope', async () => {
    const user = await newUser(t);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/events/paged?territoryId=${territory.id}&pageNumber=2&pageSize=2`, headers: user.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ pageNumber: 2, pageSize: 2, totalCount: 5, totalPages: 3, hasPreviousPage: true, hasNextPage: true });
    expect(res.json().items.map((e: { id: string }) => e.id)).toEqual([ids.later, ids.recentPast]);
  });

  it('takes the territory from the session, and is 404 with no selection or an unknown territory', async () => {
    const user = await newUser(t);
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/selection',
      headers: { ...user.headers, 'x-session-id': 's1' },
      payload: { territoryId: territory.id },
    });
    const bySession = await t.app.inject({ method: 'GET', url: '/api/v1/events', headers: { ...user.headers, 'x-session-id': 's1' } });
    expect(bySession.statusCode).toBe(200);
    expect(bySession.json()).toHaveLength(5);
    const none = await t.app.inject({ method: 'GET', url: '/api/v1/events', headers: user.headers });
    expect(none.statusCode).toBe(404);
    const unknown = await t.app.inject({ method: 'GET', url: `/api/v1/events/paged?territoryId=${UNKNOWN_ID}`, headers: user.headers });
    expect(unknown.statusCode).toBe(404);
  });

  it('is 400 on bad paging or dates and 401 without token', async () => {
    const user = await newUser(t);
    for (const query of ['take=101', 'skip=-1', 'startDate=yesterday', `startDate=2026-05-02&endDate=2026-05-01`, 'territoryId=nope']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/events?territoryId=${territory.id}&${query}`, headers: user.headers });
      expect(res.statusCode, query).toBe(400);
    }
    const paged = await t.app.inject({ method: 'GET', url: `/api/v1/events/paged?territoryId=${territory.id}&pageSize=101`, headers: user.headers });
    expect(paged.statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/events?territoryId=${territory.id}` })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/events/paged?territoryId=${territory.id}` })).statusCode).toBe(401);
  });
});

describe('GET /api/v1/events/nearby and /events/nearby/paged', () => {
  // A spot of its own, far from the other tests' events (which sit at -23.55, -46.63).
  const centre = { lat: 10, lng: 20 };
  const north = (km: number) => centre.lat + km / 111.2;
  let ids: { at1: string; at3: string; at8: string };
  beforeAll(async () => {
    const territory = await newTerritory(t, { latitude: centre.lat, longitude: centre.lng });
    const resident = await newResident(t, territory);
    const at = (km: number, extra: Record<string, unknown> = {}) =>
      created(resident, territory, { latitude: north(km), longitude: centre.lng, title: `at ${km} km`, ...extra });
    ids = { at3: (await at(3)).id, at8: (await at(8)).id, at1: (await at(1)).id };
    // Over, or cancelled: never nearby.
    await at(2, { startsAtUtc: inDays(-2), endsAtUtc: inDays(-1.9) });
    const cancelled = await at(2.5);
    await t.app.inject({ method: 'POST', url: `/api/v1/events/${cancelled.id}/cancel`, headers: resident.headers });
    // An INACTIVE territory's events are not offered either.
    const closed = await newTerritory(t, { latitude: centre.lat, longitude: centre.lng });
    await created(await newResident(t, closed), closed, { latitude: north(0.5), longitude: centre.lng });
    await t.sql(`update territory set status = 'INACTIVE' where id = $1`, [closed.id]);
  });

  it('answers scheduled events within 5 km by default, nearest first, with distanceKm', async () => {
    const user = await newUser(t);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/events/nearby?lat=${centre.lat}&lng=${centre.lng}`, headers: user.headers });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { id: string; distanceKm: number }[];
    expect(body.map((e) => e.id)).toEqual([ids.at1, ids.at3]);
    expect(body[0]!.distanceKm).toBeCloseTo(1, 1);
    expect(body[1]!.distanceKm).toBeCloseTo(3, 1);
  });

  it('honours radiusKm and limit', async () => {
    const user = await newUser(t);
    const wide = await t.app.inject({ method: 'GET', url: `/api/v1/events/nearby?lat=${centre.lat}&lng=${centre.lng}&radiusKm=10`, headers: user.headers });
    expect(wide.json().map((e: { id: string }) => e.id)).toEqual([ids.at1, ids.at3, ids.at8]);
    const one = await t.app.inject({
      method: 'GET',
      url: `/api/v1/events/nearby?lat=${centre.lat}&lng=${centre.lng}&radiusKm=10&limit=1`,
      headers: user.headers,
    });
    expect(one.json().map((e: { id: string }) => e.id)).toEqual([ids.at1]);
  });

  it('pages nearest first with the envelope', async () => {
    const user = await newUser(t);
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/events/nearby/paged?lat=${centre.lat}&lng=${centre.lng}&radiusKm=10&pageNumber=2&pageSize=2`,
      headers: user.headers,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ pageNumber: 2, pageSize: 2, totalCount: 3, totalPages: 2, hasPreviousPage: true, hasNextPage: false });
    expect(res.json().items.map((e: { id: string }) => e.id)).toEqual([ids.at8]);
  });

  it('is 400 without coordinates or with bad ones, and 401 without token', async () => {
    const user = await newUser(t);
    for (const query of ['lng=20', 'lat=10', 'lat=91&lng=20', 'lat=10&lng=20&radiusKm=0', 'lat=10&lng=20&limit=101', 'lat=x&lng=20']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/events/nearby?${query}`, headers: user.headers });
      expect(res.statusCode, query).toBe(400);
    }
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/events/nearby/paged?lat=10&lng=20&pageNumber=0`, headers: user.headers })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/events/nearby?lat=10&lng=20' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/events/nearby/paged?lat=10&lng=20' })).statusCode).toBe(401);
  });
});

describe('POST /api/v1/events/{eventId}/interest and /confirm', () => {
  it('upserts the caller’s participation and counts interested and confirmed users', async () => {
    const territory = await newTerritory(t);
    const event = await created(await newResident(t, territory), territory);
    const [a, b, c] = [await newUser(t), await newUser(t), await newUser(t)];
    const call = (user: TestUser, what: 'interest' | 'confirm') =>
      t.app.inject({ method: 'POST', url: `/api/v1/events/${event.id}/${what}`, headers: user.headers });

    const first = await call(a, 'interest');
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ id: event.id, interestedCount: 1, confirmedCount: 0, myParticipation: 'INTEREST' });
    expect((await call(a, 'interest')).json()).toMatchObject({ interestedCount: 1, confirmedCount: 0 });
    expect((await call(a, 'confirm')).json()).toMatchObject({ interestedCount: 0, confirmedCount: 1, myParticipation: 'CONFIRMED' });
    expect((await call(b, 'interest')).json()).toMatchObject({ interestedCount: 1, confirmedCount: 1, myParticipation: 'INTEREST' });
    expect((await call(c, 'confirm')).json()).toMatchObject({ interestedCount: 1, confirmedCount: 2, myParticipation: 'CONFIRMED' });
    expect(await countRows(t, 'event_participation', 'event_id = $1', [event.id])).toBe(3);

    // Every reader sees the counts; each sees their own participation.
    const asB = await t.app.inject({ method: 'GET', url: `/api/v1/events/${event.id}`, headers: b.headers });
    expect(asB.json()).toMatchObject({ interestedCount: 1, confirmedCount: 2, myParticipation: 'INTEREST' });
    const list = await t.app.inject({ method: 'GET', url: `/api/v1/events?territoryId=${territory.id}`, headers: a.headers });
    expect(list.json()[0]).toMatchObject({ interestedCount: 1, confirmedCount: 2, myParticipation: 'CONFIRMED' });
  });

  it('survives concurrent calls of one user', async () => {
    const territory = await newTerritory(t);
    const event = await created(await newResident(t, territory), territory);
    const user = await newUser(t);
    const results = await Promise.all(
      ['interest', 'confirm', 'interest', 'confirm'].map((what) =>
        t.app.inject({ method: 'POST', url: `/api/v1/events/${event.id}/${what}`, headers: user.headers }),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    expect(await countRows(t, 'event_participation', 'event_id = $1', [event.id])).toBe(1);
  });

  it('is 404 for an unknown event, 400 for a malformed id, 409 on a cancelled event, 401 without token', async () => {
    const territory = await newTerritory(t);
    const creator = await newResident(t, territory);
    const event = await created(creator, territory);
    await t.app.inject({ method: 'POST', url: `/api/v1/events/${event.id}/cancel`, headers: creator.headers });
    const user = await newUser(t);
    for (const what of ['interest', 'confirm']) {
      expect((await t.app.inject({ method: 'POST', url: `/api/v1/events/${UNKNOWN_ID}/${what}`, headers: user.headers })).statusCode).toBe(404);
      expect((await t.app.inject({ method: 'POST', url: `/api/v1/events/nope/${what}`, headers: user.headers })).statusCode).toBe(400);
      const cancelled = await t.app.inject({ method: 'POST', url: `/api/v1/events/${event.id}/${what}`, headers: user.headers });
      expect(cancelled.statusCode).toBe(409);
      expect(cancelled.json().code).toBe('EVENT_CANCELLED');
      expect((await t.app.inject({ method: 'POST', url: `/api/v1/events/${event.id}/${what}` })).statusCode).toBe(401);
    }
    expect(await countRows(t, 'event_participation', 'event_id = $1', [event.id])).toBe(0);
  });

  it('waits for a cancel in progress, then is 409 EVENT_CANCELLED and writes nothing', async () => {
    const territory = await newTerritory(t);
    const creator = await newResident(t, territory);
    const user = await newUser(t);
    for (const what of ['interest', 'confirm']) {
      const event = await created(creator, territory);
      // The cancel's update commits while the participation is under way: it waits for it and reads CANCELLED.
      const cancel = { sql: `update event set status = 'CANCELLED', cancelled_at_utc = now() where id = $1`, params: [event.id] };
      const res = await commitDuring(t, cancel, () => t.app.inject({ method: 'POST', url: `/api/v1/events/${event.id}/${what}`, headers: user.headers }));
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json().code).toBe('EVENT_CANCELLED');
      expect(await countRows(t, 'event_participation', 'event_id = $1', [event.id])).toBe(0);
    }
  });
});

describe('POST /api/v1/events/{eventId}/cancel', () => {
  it('lets the creator cancel, without any notification; repeating is harmless', async () => {
    const territory = await newTerritory(t);
    await newResident(t, territory);
    const creator = await newVisitor(t, territory);
    const event = await created(creator, territory);
    const outboxBefore = await countRows(t, 'outbox_message');
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/events/${event.id}/cancel`, headers: creator.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: event.id, status: 'CANCELLED' });
    const again = await t.app.inject({ method: 'POST', url: `/api/v1/events/${event.id}/cancel`, headers: creator.headers });
    expect(again.statusCode).toBe(200);
    expect(again.json().status).toBe('CANCELLED');
    expect(await countRows(t, 'outbox_message')).toBe(outboxBefore);
    expect(await countRows(t, 'audit_entry', `action = 'event.cancelled' and subject_id = $1`, [event.id])).toBe(1);
  });

  it('is 403 for anyone but the creator (a resident of the territory included), 404 unknown, 400 malformed, 401 without token', async () => {
    const territory = await newTerritory(t);
    const event = await created(await newResident(t, territory), territory);
    const otherResident = await newResident(t, territory);
    const forbidden = await t.app.inject({ method: 'POST', url: `/api/v1/events/${event.id}/cancel`, headers: otherResident.headers });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().code).toBe('NOT_EVENT_CREATOR');
    expect((await t.sql<{ status: string }>('select status from event where id = $1', [event.id]))[0]!.status).toBe('SCHEDULED');
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/events/${UNKNOWN_ID}/cancel`, headers: otherResident.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/events/nope/cancel', headers: otherResident.headers })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/events/${event.id}/cancel` })).statusCode).toBe(401);
  });
});

describe('the same procedures over tRPC', () => {
  it('creates an event and marks interest through /trpc', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const create = await t.app.inject({ method: 'POST', url: '/trpc/events.create', headers: resident.headers, payload: eventBody(territory) });
    expect(create.statusCode).toBe(200);
    const event = create.json().result.data as { id: string };
    const interest = await t.app.inject({ method: 'POST', url: '/trpc/events.interest', headers: resident.headers, payload: { eventId: event.id } });
    expect(interest.json().result.data).toMatchObject({ id: event.id, interestedCount: 1, myParticipation: 'INTEREST' });
    const list = await t.app.inject({
      method: 'GET',
      url: `/trpc/events.list?input=${encodeURIComponent(JSON.stringify({ territoryId: territory.id }))}`,
      headers: resident.headers,
    });
    expect(list.json().result.data.map((e: { id: string }) => e.id)).toEqual([event.id]);
  });
});
