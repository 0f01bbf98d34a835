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
  type TestTerritory,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { newEvent, newPost } from '../factories/content.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { clientToken, expectV2Error, v2 } from './helpers.js';

/** The journeys API (v2): user procedures, the read cache, the feed, events and onboarding journeys. */
let t: TestApp;
let admin: TestUser;
let territory: TestTerritory;
let author: TestUser;
let client: string;
let readOnly: string;
let writeOnly: string;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  admin = await newAdmin(t);
  territory = await newTerritory(t);
  author = await newResident(t, territory, { verified: true });
  client = await clientToken(t, admin);
  readOnly = await clientToken(t, admin, ['journeys:read']);
  writeOnly = await clientToken(t, admin, ['journeys:write']);
});
afterAll(() => t.close());

const feedUrl = (territoryId: string, query = '') => `/feed/territory-feed?territoryId=${territoryId}${query}`;

describe('authentication of user journeys', () => {
  const calls: [string, 'GET' | 'POST', string, unknown][] = [
    ['territory-feed', 'GET', '/feed/territory-feed?territoryId=' + UNKNOWN_ID, undefined],
    ['territory-events', 'GET', '/events/territory-events?territoryId=' + UNKNOWN_ID, undefined],
    ['marketplace search', 'GET', '/marketplace/search?territoryId=' + UNKNOWN_ID, undefined],
    ['interact', 'POST', '/feed/interact', { postId: UNKNOWN_ID, action: 'LIKE' }],
    ['participate', 'POST', '/events/participate', { eventId: UNKNOWN_ID, action: 'INTEREST' }],
    ['create-event', 'POST', '/events/create-event', { territoryId: UNKNOWN_ID }],
    ['onboarding complete', 'POST', '/onboarding/complete', { selectedTerritoryId: UNKNOWN_ID, location: { latitude: 0, longitude: 0 } }],
    ['add-to-cart', 'POST', '/marketplace/add-to-cart', { territoryId: UNKNOWN_ID, itemId: UNKNOWN_ID, quantity: 1 }],
    ['checkout', 'POST', '/marketplace/checkout', { territoryId: UNKNOWN_ID }],
  ];
  it.each(calls)(
    '%s: 401 without a client token, 401 with a user JWT as Authorization, 401 without X-User-Token, 403 without the scope',
    async (_n, method, url, payload) => {
      const user = await newUser(t);
      expectV2Error(await v2(t, method, url, { user, payload }), 401, 'UNAUTHORIZED');
      expectV2Error(
        await t.app.inject({ method, url: `/api/v2/journeys${url}`, headers: user.headers, ...(payload ? { payload: payload as object } : {}) }),
        401,
        'UNAUTHORIZED',
      );
      expectV2Error(await v2(t, method, url, { client, payload }), 401, 'UNAUTHORIZED');
      expectV2Error(await v2(t, method, url, { client: method === 'GET' ? writeOnly : readOnly, user, payload }), 403, 'FORBIDDEN');
    },
  );
});

describe('the journeys API as the router reads its paths', () => {
  it('a percent-encoded path to a v2 route is v2: its tokens, its answer, its error body; a text/plain body is a 415 in that body', async () => {
    const user = await newVisitor(t, territory);
    const headers = { authorization: `Bearer ${client}`, 'x-user-token': user.token };
    const encoded = await t.app.inject({ method: 'GET', url: `/api/%762/journeys/feed/territory-feed?territoryId=${territory.id}`, headers });
    expect(encoded.statusCode, encoded.body).toBe(200);
    expectV2Error(await t.app.inject({ method: 'GET', url: `/api/%762/journeys/feed/territory-feed?territoryId=${UNKNOWN_ID}`, headers }), 404, 'NOT_FOUND');
    expectV2Error(await t.app.inject({ method: 'GET', url: '/api/%762/journeys/nothing-here', headers }), 404, 'NOT_FOUND');
    const text = await t.app.inject({
      method: 'POST',
      url: '/api/v2/journeys/feed/interact',
      headers: { ...headers, 'content-type': 'text/plain' },
      payload: JSON.stringify({ postId: UNKNOWN_ID, action: 'LIKE' }),
    });
    expectV2Error(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('GET /feed/territory-feed', () => {
  it('answers the feed items with counts, media, author, interactions and metadata', async () => {
    const viewer = await newVisitor(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id, title: 'Hello street' });
    await t.sql('insert into post_like (post_id, user_id, created_at_utc) values ($1, $2, now())', [postId, viewer.id]);
    await t.sql('insert into post_interaction_count (post_id, like_count) values ($1, 1)', [postId]);
    const res = await v2(t, 'GET', feedUrl(territory.id, '&pageSize=50'), { client, user: viewer });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.filters).toEqual({ territoryId: territory.id });
    expect(body.pagination).toMatchObject({ pageNumber: 1, pageSize: 50, hasPreviousPage: false });
    const item = body.items.find((i: { post: { id: string } }) => i.post.id === postId);
    expect(item).toMatchObject({
      post: { id: postId, title: 'Hello street', territoryId: territory.id },
      counts: { likes: 1, comments: 0, shares: 0 },
      media: [],
      event: null,
      author: { id: author.id, displayName: author.displayName },
      userInteractions: { liked: true, shared: false, commented: false },
      metadata: { canEdit: false, canDelete: false },
    });
    const own = await v2(t, 'GET', feedUrl(territory.id, '&pageSize=50'), { client, user: author });
    expect(own.json().items.find((i: { post: { id: string } }) => i.post.id === postId).metadata).toEqual({ canEdit: true, canDelete: true });
    // A curator of the territory may delete it; a curator of another territory may not.
    const curator = await newCurator(t, territory);
    const elsewhere = await newCurator(t, await newTerritory(t));
    await addMembership(t, elsewhere, territory, { role: 'RESIDENT' });
    const metadataFor = async (reader: TestUser) =>
      (await v2(t, 'GET', feedUrl(territory.id, '&pageSize=50'), { client, user: reader }))
        .json()
        .items.find((i: { post: { id: string } }) => i.post.id === postId).metadata;
    expect(await metadataFor(curator)).toEqual({ canEdit: false, canDelete: true });
    expect(await metadataFor(elsewhere)).toEqual({ canEdit: false, canDelete: false });
    // The reader's shares and comments come with the page's rows (another page size: the first answer is cached).
    await t.sql('insert into post_share (id, created_at_utc, post_id, user_id) values (gen_random_uuid(), now(), $1, $2)', [postId, viewer.id]);
    await t.sql(
      `insert into post_comment (id, created_at_utc, post_id, author_user_id, content) values (gen_random_uuid(), now(), $1, $2, 'Nice'), (gen_random_uuid(), now(), $1, $2, 'Again')`,
      [postId, viewer.id],
    );
    const again = await v2(t, 'GET', feedUrl(territory.id, '&pageSize=49'), { client, user: viewer });
    const items = again.json().items as { post: { id: string }; userInteractions: unknown }[];
    expect(items.find((i) => i.post.id === postId)?.userInteractions).toEqual({ liked: true, shared: true, commented: true });
    expect(
      items.filter((i) => i.post.id !== postId).every((i) => JSON.stringify(i.userInteractions) === '{"liked":false,"shared":false,"commented":false}'),
    ).toBe(true);
  });

  it('400 INVALID_REQUEST for bad query values, 404 NOT_FOUND for an unknown territory', async () => {
    const user = await newUser(t);
    const bad = expectV2Error(await v2(t, 'GET', feedUrl('not-a-uuid'), { client, user }), 400, 'INVALID_REQUEST');
    expect(bad.details).toMatchObject({ field: 'territoryId' });
    expectV2Error(await v2(t, 'GET', feedUrl(territory.id, '&pageSize=0'), { client, user }), 400, 'INVALID_REQUEST');
    expectV2Error(await v2(t, 'GET', feedUrl(UNKNOWN_ID), { client, user }), 404, 'NOT_FOUND');
  });
});

describe('the 60 s read cache', () => {
  it('MISS then HIT, private; per user and per query; a write by the same user invalidates; errors are not cached', async () => {
    const place = await newTerritory(t);
    const user = await newVisitor(t, place);
    const other = await newVisitor(t, place);
    const postId = await newPost(t, { territoryId: place.id, authorUserId: author.id });
    const first = await v2(t, 'GET', feedUrl(place.id), { client, user });
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('private, max-age=60');
    // A change made elsewhere is not seen within the 60 s: the answer comes from the cache.
    await t.sql('update post set title = $2 where id = $1', [postId, 'Changed behind the cache']);
    const second = await v2(t, 'GET', feedUrl(place.id), { client, user });
    expect(second.headers['x-cache']).toBe('HIT');
    expect(second.headers['cache-control']).toBe('private, max-age=60');
    // The MISS sent the JSON it keeps (serialized once): a HIT answers the same bytes.
    expect(second.body).toBe(first.body);
    expect(second.headers['content-type']).toBe(first.headers['content-type']);
    // Another user, another query: their own entries.
    expect((await v2(t, 'GET', feedUrl(place.id), { client, user: other })).headers['x-cache']).toBe('MISS');
    expect((await v2(t, 'GET', feedUrl(place.id, '&pageSize=5'), { client, user })).headers['x-cache']).toBe('MISS');
    // The same query in another order is the same entry; a repeated parameter is a list, its own entry.
    expect((await v2(t, 'GET', `/feed/territory-feed?pageSize=5&territoryId=${place.id}`, { client, user })).headers['x-cache']).toBe('HIT');
    expect((await v2(t, 'GET', feedUrl(place.id, '&pageSize=5&pageSize=6'), { client, user })).headers['x-cache']).not.toBe('HIT');
    // The user's own write through v2 drops their entries; the other user's stay.
    const liked = await v2(t, 'POST', '/feed/interact', { client, user, payload: { postId, action: 'LIKE' } });
    expect(liked.statusCode, liked.body).toBe(200);
    const after = await v2(t, 'GET', feedUrl(place.id), { client, user });
    expect(after.headers['x-cache']).toBe('MISS');
    expect(after.json().items[0]).toMatchObject({ post: { title: 'Changed behind the cache' }, userInteractions: { liked: true } });
    expect((await v2(t, 'GET', feedUrl(place.id), { client, user: other })).headers['x-cache']).toBe('HIT');
    // Errors are never cached.
    for (let i = 0; i < 2; i++) {
      const missing = await v2(t, 'GET', feedUrl(UNKNOWN_ID), { client, user });
      expect(missing.statusCode).toBe(404);
      expect(missing.headers['x-cache']).toBeUndefined();
    }
    // A refused caller never reads a cached answer.
    expect((await v2(t, 'GET', feedUrl(place.id), { client: writeOnly, user })).statusCode).toBe(403);
  });
  it('entries are per client; suggested-territories (no user) is cached too; a failed write still invalidates', async () => {
    const place = await newTerritory(t, { latitude: 10.5, longitude: 20.5 });
    const user = await newVisitor(t, place);
    const otherClient = await clientToken(t, admin);
    expect((await v2(t, 'GET', feedUrl(place.id), { client, user })).headers['x-cache']).toBe('MISS');
    expect((await v2(t, 'GET', feedUrl(place.id), { client: otherClient, user })).headers['x-cache']).toBe('MISS');
    expect((await v2(t, 'GET', feedUrl(place.id), { client, user })).headers['x-cache']).toBe('HIT');
    const url = '/onboarding/suggested-territories?latitude=10.5&longitude=20.5';
    const near = await v2(t, 'GET', url, { client });
    expect(near.headers['x-cache']).toBe('MISS');
    expect(near.json().territories.map((x: { id: string }) => x.id)).toContain(place.id);
    expect((await v2(t, 'GET', url, { client })).headers['x-cache']).toBe('HIT');
    expectV2Error(await v2(t, 'POST', '/feed/interact', { client, user, payload: { postId: UNKNOWN_ID, action: 'LIKE' } }), 404, 'NOT_FOUND');
    expect((await v2(t, 'GET', feedUrl(place.id), { client, user })).headers['x-cache']).toBe('MISS');
  });

  it('a hit (answered by the REST route before the procedure) is the stored answer, after every check of the procedure', async () => {
    const place = await newTerritory(t);
    const user = await newVisitor(t, place);
    await newPost(t, { territoryId: place.id, authorUserId: author.id });
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/clients',
      headers: admin.headers,
      payload: { name: 'Cache checks app', scopes: ['journeys:read', 'journeys:write'] },
    });
    const { id, clientId, clientSecret } = registered.json() as { id: string; clientId: string; clientSecret: string };
    const tokenWith = async (scope: string) => {
      const issued = await t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope }).toString(),
      });
      return (issued.json() as { access_token: string }).access_token;
    };
    const reader = await tokenWith('journeys:read');
    const miss = await v2(t, 'GET', feedUrl(place.id, '&pageSize=5'), { client: reader, user });
    expect(miss.headers['x-cache']).toBe('MISS');
    // The same query in another order is the same entry; the body is byte for byte the answer stored.
    const hit = await v2(t, 'GET', `/feed/territory-feed?pageSize=5&territoryId=${place.id}`, { client: reader, user });
    expect(hit.statusCode).toBe(200);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers['content-type']).toBe(miss.headers['content-type']);
    expect(hit.headers['cache-control']).toBe('private, max-age=60');
    expect(hit.body).toBe(miss.body);
    // Same client, a token without journeys:read: refused, although the entry is the client's.
    expectV2Error(await v2(t, 'GET', feedUrl(place.id, '&pageSize=5'), { client: await tokenWith('journeys:write'), user }), 403, 'FORBIDDEN');
    // Without the user's token, or with a bad one: 401.
    expectV2Error(await v2(t, 'GET', feedUrl(place.id, '&pageSize=5'), { client: reader }), 401, 'UNAUTHORIZED');
    expectV2Error(await v2(t, 'GET', feedUrl(place.id, '&pageSize=5'), { client: reader, user: { ...user, token: 'not-a-token' } }), 401, 'UNAUTHORIZED');
    // Deactivated: the next call is refused, cached answer or not.
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/clients/${id}`, headers: admin.headers })).statusCode).toBe(204);
    expectV2Error(await v2(t, 'GET', feedUrl(place.id, '&pageSize=5'), { client: reader, user }), 401, 'UNAUTHORIZED');
  });
});

describe('POST /feed/interact', () => {
  it('LIKE, UNLIKE, COMMENT and SHARE answer the post, counts and the user interactions', async () => {
    const user = await newVisitor(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const call = (payload: object) => v2(t, 'POST', '/feed/interact', { client, user, payload });
    const like = await call({ postId, action: 'LIKE' });
    expect(like.statusCode, like.body).toBe(200);
    expect(like.json()).toMatchObject({ post: { id: postId }, counts: { likes: 1, comments: 0, shares: 0 }, userInteractions: { liked: true } });
    expect((await call({ postId, action: 'unlike' })).json().counts.likes).toBe(0);
    const comment = await call({ postId, action: 'COMMENT', comment: 'Nice one' });
    expect(comment.json()).toMatchObject({ counts: { comments: 1 }, userInteractions: { commented: true, liked: false } });
    const share = await call({ postId, action: 'SHARE' });
    expect(share.json()).toMatchObject({ counts: { shares: 1 }, userInteractions: { shared: true, commented: true } });
  });

  it('400 INVALID_REQUEST with nothing written, 404 for an unknown post', async () => {
    const user = await newVisitor(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const before = await countRows(t, 'post_comment', 'post_id = $1', [postId]);
    for (const payload of [{ postId, action: 'COMMENT' }, { postId, action: 'DANCE' }, { postId: 'x', action: 'LIKE' }, { action: 'LIKE' }]) {
      expectV2Error(await v2(t, 'POST', '/feed/interact', { client, user, payload }), 400, 'INVALID_REQUEST');
    }
    expect(await countRows(t, 'post_comment', 'post_id = $1', [postId])).toBe(before);
    expectV2Error(await v2(t, 'POST', '/feed/interact', { client, user, payload: { postId: UNKNOWN_ID, action: 'LIKE' } }), 404, 'NOT_FOUND');
  });
});

describe('events journeys', () => {
  it('GET /events/territory-events answers events with participants, media and the user participation', async () => {
    const place = await newTerritory(t);
    const user = await newVisitor(t, place);
    const eventId = await newEvent(t, { territoryId: place.id, createdByUserId: author.id, title: 'Street party' });
    await t.sql(`insert into event_participation (event_id, user_id, status, created_at_utc, updated_at_utc) values ($1, $2, 'INTEREST', now(), now())`, [
      eventId,
      user.id,
    ]);
    const res = await v2(t, 'GET', `/events/territory-events?territoryId=${place.id}`, { client, user });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-cache']).toBe('MISS');
    expect(res.json()).toMatchObject({
      items: [
        { event: { id: eventId, title: 'Street party' }, participants: { interestedCount: 1, confirmedCount: 0 }, media: [], userParticipation: 'INTEREST' },
      ],
      pagination: { pageNumber: 1, pageSize: 20, totalCount: 1 },
    });
    expectV2Error(await v2(t, 'GET', `/events/territory-events?territoryId=${place.id}&fromUtc=yesterday`, { client, user }), 400, 'INVALID_REQUEST');
    expectV2Error(await v2(t, 'GET', `/events/territory-events?territoryId=${UNKNOWN_ID}`, { client, user }), 404, 'NOT_FOUND');
  });

  it('POST /events/participate: INTEREST, CONFIRM, CANCEL removes the participation; 400 and 404', async () => {
    const user = await newVisitor(t, territory);
    const eventId = await newEvent(t, { territoryId: territory.id, createdByUserId: author.id });
    const call = (action: string) => v2(t, 'POST', '/events/participate', { client, user, payload: { eventId, action } });
    const interest = await call('INTEREST');
    expect(interest.statusCode, interest.body).toBe(200);
    expect(interest.json()).toMatchObject({
      event: { id: eventId },
      userParticipation: 'INTEREST',
      participants: { interestedCount: 1, confirmedCount: 0 },
      suggestions: expect.arrayContaining([expect.objectContaining({ action: 'CONFIRM_ATTENDANCE' })]),
    });
    expect((await call('confirm')).json()).toMatchObject({ userParticipation: 'CONFIRMED', participants: { interestedCount: 0, confirmedCount: 1 } });
    const cancel = await call('CANCEL');
    expect(cancel.json()).toMatchObject({ userParticipation: null, participants: { interestedCount: 0, confirmedCount: 0 } });
    expect(await countRows(t, 'event_participation', 'event_id = $1', [eventId])).toBe(0);
    expectV2Error(await call('MAYBE'), 400, 'INVALID_REQUEST');
    expect(await countRows(t, 'event_participation', 'event_id = $1', [eventId])).toBe(0);
    expectV2Error(await v2(t, 'POST', '/events/participate', { client, user, payload: { eventId: UNKNOWN_ID, action: 'INTEREST' } }), 404, 'NOT_FOUND');
  });

  it('POST /events/create-event: 201 {event, mediaUrls}; 400 with nothing written; 404 unknown territory', async () => {
    const startsAtUtc = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const payload = { territoryId: territory.id, title: 'Clean-up day', startsAtUtc, latitude: -23.55, longitude: -46.63 };
    const res = await v2(t, 'POST', '/events/create-event', { client, user: author, payload });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ event: { title: 'Clean-up day', territoryId: territory.id, createdByUserId: author.id }, mediaUrls: [] });
    expect(res.headers.location).toBe(`/api/v1/events/${res.json().event.id}`);
    const before = await countRows(t, 'event');
    const bad = expectV2Error(
      await v2(t, 'POST', '/events/create-event', { client, user: author, payload: { ...payload, title: '' } }),
      400,
      'INVALID_REQUEST',
    );
    expect(bad.details).toMatchObject({ field: 'title' });
    expect(await countRows(t, 'event')).toBe(before);
    expectV2Error(await v2(t, 'POST', '/events/create-event', { client, user: author, payload: { ...payload, territoryId: UNKNOWN_ID } }), 404, 'NOT_FOUND');
  });

  it('a participation drops the user’s cached event list', async () => {
    const place = await newTerritory(t);
    const user = await newVisitor(t, place);
    const eventId = await newEvent(t, { territoryId: place.id, createdByUserId: author.id });
    const url = `/events/territory-events?territoryId=${place.id}`;
    expect((await v2(t, 'GET', url, { client, user })).headers['x-cache']).toBe('MISS');
    expect((await v2(t, 'GET', url, { client, user })).headers['x-cache']).toBe('HIT');
    expect((await v2(t, 'POST', '/events/participate', { client, user, payload: { eventId, action: 'CONFIRM' } })).statusCode).toBe(200);
    const after = await v2(t, 'GET', url, { client, user });
    expect(after.headers['x-cache']).toBe('MISS');
    expect(after.json().items[0].userParticipation).toBe('CONFIRMED');
  });
});

describe('POST /onboarding/complete', () => {
  it('enters as VISITOR (idempotent), selects the territory for the session, answers feed and suggested actions', async () => {
    const place = await newTerritory(t, { name: 'Vila Onboard' });
    await newPost(t, { territoryId: place.id, authorUserId: author.id, title: 'Welcome post' });
    const user = await newUser(t);
    const payload = { selectedTerritoryId: place.id, location: { latitude: -23.55, longitude: -46.63 } };
    const res = await v2(t, 'POST', '/onboarding/complete', { client, user, payload, headers: { 'x-session-id': 'onboarding-session' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-cache']).toBeUndefined();
    const body = res.json();
    expect(body).toMatchObject({
      user: { id: user.id, displayName: user.displayName },
      territory: { id: place.id, name: 'Vila Onboard' },
      membership: { role: 'VISITOR', territoryId: place.id, userId: user.id },
      initialFeed: { items: [{ post: { title: 'Welcome post' } }], pagination: { pageNumber: 1 } },
    });
    expect(body.suggestedActions.map((a: { action: string }) => a.action)).toEqual(['REQUEST_RESIDENCY', 'EXPLORE_MAP', 'SET_INTERESTS']);
    const [selection] = await t.sql<{ territory_id: string }>('select territory_id from territory_selection where user_id = $1 and session_id = $2', [
      user.id,
      'onboarding-session',
    ]);
    expect(selection?.territory_id).toBe(place.id);
    expect((await v2(t, 'POST', '/onboarding/complete', { client, user, payload })).statusCode).toBe(200);
    expect(await countRows(t, 'territory_membership', 'user_id = $1', [user.id])).toBe(1);
  });

  it('a resident keeps their role; 400 with nothing written; 404 for an unknown territory', async () => {
    const res = await v2(t, 'POST', '/onboarding/complete', {
      client,
      user: author,
      payload: { selectedTerritoryId: territory.id, location: { latitude: -23.55, longitude: -46.63 } },
    });
    expect(res.json().membership.role).toBe('RESIDENT');
    expect(res.json().suggestedActions.map((a: { action: string }) => a.action)).not.toContain('REQUEST_RESIDENCY');
    const user = await newUser(t);
    for (const payload of [{ selectedTerritoryId: territory.id }, { selectedTerritoryId: territory.id, location: { latitude: 91, longitude: 0 } }, {}]) {
      expectV2Error(await v2(t, 'POST', '/onboarding/complete', { client, user, payload }), 400, 'INVALID_REQUEST');
    }
    expect(await countRows(t, 'territory_membership', 'user_id = $1', [user.id])).toBe(0);
    expectV2Error(
      await v2(t, 'POST', '/onboarding/complete', { client, user, payload: { selectedTerritoryId: UNKNOWN_ID, location: { latitude: 0, longitude: 0 } } }),
      404,
      'NOT_FOUND',
    );
  });
});
