import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newCurator, newModerator, newResident, newTerritory, newUser, newVisitor, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { type FeedItem, feedIds, insertAsset, insertMapEntity, insertPost, postOk, UNKNOWN_ID } from './helpers.js';

let t: TestApp;
let territory: TestTerritory;
let author: TestUser;
let blockedAuthor: TestUser;
let reader: TestUser;
let visitor: TestUser;
let stranger: TestUser;
let publicPost: FeedItem;
let residentsPost: FeedItem;
let blockedPost: FeedItem;
let hiddenIds: string[];

/*
 * One territory with: a resident author (a PUBLIC and a RESIDENTS_ONLY post), a second resident whom the reading
 * resident blocked (a PUBLIC post), and posts that are PENDING, REJECTED and HIDDEN.
 */
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { name: 'Layered' });
  author = await newResident(t, territory);
  blockedAuthor = await newResident(t, territory);
  reader = await newResident(t, territory);
  visitor = await newVisitor(t, territory);
  stranger = await newUser(t);
  publicPost = await postOk(t, author, territory.id, { title: 'Public news' });
  residentsPost = await postOk(t, author, territory.id, { title: 'For neighbours', visibility: 'RESIDENTS_ONLY' });
  blockedPost = await postOk(t, blockedAuthor, territory.id, { title: 'From the blocked one' });
  hiddenIds = [
    await insertPost(t, { territoryId: territory.id, authorUserId: author.id, status: 'PENDING' }),
    await insertPost(t, { territoryId: territory.id, authorUserId: author.id, status: 'REJECTED' }),
    await insertPost(t, { territoryId: territory.id, authorUserId: author.id, status: 'HIDDEN' }),
  ];
  const block = await t.app.inject({ method: 'POST', url: `/api/v1/users/${blockedAuthor.id}/block`, headers: reader.headers });
  expect(block.statusCode).toBeLessThan(300);
});
afterAll(() => t.close());

describe('GET /api/v1/feed: visibility layers (rule 4)', () => {
  it('a visitor sees PUBLIC posts only, newest first', async () => {
    expect(await feedIds(t, visitor, `territoryId=${territory.id}`)).toEqual([blockedPost.id, publicPost.id]);
  });

  it('a non-member sees PUBLIC posts only', async () => {
    expect(await feedIds(t, stranger, `territoryId=${territory.id}`)).toEqual([blockedPost.id, publicPost.id]);
  });

  it('a resident also sees RESIDENTS_ONLY posts, but not the posts of a user they blocked', async () => {
    expect(await feedIds(t, reader, `territoryId=${territory.id}`)).toEqual([residentsPost.id, publicPost.id]);
  });

  it('the blocked author still sees everything (blocks hide content from the blocker only)', async () => {
    expect(await feedIds(t, blockedAuthor, `territoryId=${territory.id}`)).toEqual([blockedPost.id, residentsPost.id, publicPost.id]);
  });

  it('curators and moderators see what residents see', async () => {
    const curator = await newCurator(t, territory);
    const moderator = await newModerator(t, territory);
    expect(await feedIds(t, curator, `territoryId=${territory.id}`)).toContain(residentsPost.id);
    expect(await feedIds(t, moderator, `territoryId=${territory.id}`)).toContain(residentsPost.id);
  });

  it('never shows pending or rejected posts, not even to their author; a hidden one only to its author (and moderators)', async () => {
    const [pending, rejected, hidden] = hiddenIds as [string, string, string];
    const ids = await feedIds(t, author, `territoryId=${territory.id}`);
    expect(ids).not.toContain(pending);
    expect(ids).not.toContain(rejected);
    expect(ids).toContain(hidden);
    const mine = await t.app.inject({ method: 'GET', url: '/api/v1/feed/me', headers: author.headers });
    const mineIds = (mine.json() as FeedItem[]).map((p) => p.id);
    expect(mineIds).not.toContain(pending);
    expect(mineIds).not.toContain(rejected);
    expect(mineIds).toContain(hidden);
    for (const other of [reader, visitor, stranger, blockedAuthor]) expect(await feedIds(t, other, `territoryId=${territory.id}`)).not.toContain(hidden);
  });

  it("a post hidden by a sanction is in its author's next read at once (whether they have hidden posts is read per request)", async () => {
    const post = await postOk(t, reader, territory.id, { title: 'Soon hidden' });
    expect(await feedIds(t, reader, `territoryId=${territory.id}`)).toContain(post.id);
    await t.sql(`update post set status = 'HIDDEN' where id = $1`, [post.id]);
    expect(await feedIds(t, reader, `territoryId=${territory.id}`)).toContain(post.id);
    expect(await feedIds(t, visitor, `territoryId=${territory.id}`)).not.toContain(post.id);
    await t.sql(`delete from post where id = $1`, [post.id]);
  });

  it('a hidden post can be deleted by its author (and no one else but a curator)', async () => {
    const hidden = await insertPost(t, { territoryId: territory.id, authorUserId: author.id, status: 'HIDDEN' });
    // A reader does not see it; a moderator sees it but is not its author (nor a curator).
    for (const [other, status] of [
      [reader, 404],
      [await newModerator(t, territory), 403],
    ] as const) {
      expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/feed/${hidden}`, headers: other.headers })).statusCode).toBe(status);
    }
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/feed/${hidden}`, headers: author.headers })).statusCode).toBe(204);
    expect(await countRows(t, 'post', 'id = $1', [hidden])).toBe(0);
  });

  it('answers the feed item shape with the author', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/feed?territoryId=${territory.id}`, headers: visitor.headers });
    const item = (res.json() as FeedItem[]).find((p) => p.id === publicPost.id);
    expect(item).toEqual(publicPost);
  });

  it('honours skip and take', async () => {
    expect(await feedIds(t, reader, `territoryId=${territory.id}&skip=1&take=1`)).toEqual([publicPost.id]);
  });

  it('takes the territory from the X-Session-Id selection; 404 without one', async () => {
    const selected = await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/selection',
      headers: { ...visitor.headers, 'x-session-id': 'read-session' },
      payload: { territoryId: territory.id },
    });
    expect(selected.statusCode).toBe(200);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/feed', headers: { ...visitor.headers, 'x-session-id': 'read-session' } });
    expect(res.statusCode).toBe(200);
    expect((res.json() as FeedItem[]).map((p) => p.id)).toEqual([blockedPost.id, publicPost.id]);
    const none = await t.app.inject({ method: 'GET', url: '/api/v1/feed', headers: visitor.headers });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ code: 'NO_TERRITORY_SELECTED' });
  });

  it('is 401 without a token, 400 on bad query values, 404 for an unknown territory', async () => {
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/feed?territoryId=${territory.id}` })).statusCode).toBe(401);
    for (const query of [
      'territoryId=nope',
      `territoryId=${territory.id}&take=101`,
      `territoryId=${territory.id}&skip=-1`,
      `territoryId=${territory.id}&filterByInterests=maybe`,
    ]) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/feed?${query}`, headers: reader.headers });
      expect(res.statusCode, query).toBe(400);
    }
    const unknown = await t.app.inject({ method: 'GET', url: `/api/v1/feed?territoryId=${UNKNOWN_ID}`, headers: reader.headers });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('GET /api/v1/feed/paged', () => {
  it('pages the same visible posts with the envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/feed/paged?territoryId=${territory.id}&pageSize=1&pageNumber=2`, headers: visitor.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      pageNumber: 2,
      pageSize: 1,
      totalCount: 2,
      totalPages: 2,
      hasPreviousPage: true,
      hasNextPage: false,
    });
    expect(res.json().items.map((p: FeedItem) => p.id)).toEqual([publicPost.id]);
    const resident = await t.app.inject({ method: 'GET', url: `/api/v1/feed/paged?territoryId=${territory.id}`, headers: reader.headers });
    expect(resident.json()).toMatchObject({ totalCount: 2, pageNumber: 1, pageSize: 20 });
    // A page past the last has no row to carry the count read with it: the count is read on its own.
    const past = await t.app.inject({ method: 'GET', url: `/api/v1/feed/paged?territoryId=${territory.id}&pageSize=1&pageNumber=9`, headers: visitor.headers });
    expect(past.statusCode).toBe(200);
    expect(past.json()).toMatchObject({ items: [], pageNumber: 9, totalCount: 2, totalPages: 2, hasPreviousPage: true, hasNextPage: false });
  });

  it('is 400 for pageSize 0 or 101 and pageNumber 0, 401 without a token', async () => {
    for (const query of ['pageSize=0', 'pageSize=101', 'pageNumber=0', 'pageNumber=1.5']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/feed/paged?territoryId=${territory.id}&${query}`, headers: reader.headers });
      expect(res.statusCode, query).toBe(400);
    }
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/feed/paged?territoryId=${territory.id}` })).statusCode).toBe(401);
  });
});

describe('feed filters', () => {
  it('filterByInterests keeps posts sharing a tag with my interests (no interests: no narrowing)', async () => {
    const place = await newTerritory(t);
    const poster = await newResident(t, place);
    const gardening = await postOk(t, poster, place.id, { tags: ['gardening'] });
    const music = await postOk(t, poster, place.id, { tags: ['music', 'Gardening Club'] });
    const untagged = await postOk(t, poster, place.id);
    const fan = await newUser(t);
    expect(await feedIds(t, fan, `territoryId=${place.id}&filterByInterests=true`)).toEqual([untagged.id, music.id, gardening.id]);
    const added = await t.app.inject({ method: 'POST', url: '/api/v1/users/me/interests', headers: fan.headers, payload: { interestTag: 'Gardening' } });
    expect(added.statusCode).toBeLessThan(300);
    expect(await feedIds(t, fan, `territoryId=${place.id}&filterByInterests=true`)).toEqual([gardening.id]);
    expect(await feedIds(t, fan, `territoryId=${place.id}&filterByInterests=false`)).toEqual([untagged.id, music.id, gardening.id]);
    const paged = await t.app.inject({ method: 'GET', url: `/api/v1/feed/paged?territoryId=${place.id}&filterByInterests=true`, headers: fan.headers });
    expect(paged.json()).toMatchObject({ totalCount: 1 });
  });

  it('mapEntityId and assetId keep the posts referencing them', async () => {
    const place = await newTerritory(t);
    const poster = await newResident(t, place);
    const mapEntityId = await insertMapEntity(t, place.id, poster.id);
    const assetId = await insertAsset(t, place.id, poster.id);
    const onEntity = await postOk(t, poster, place.id, { mapEntityId });
    const onAsset = await postOk(t, poster, place.id, { assetIds: [assetId, await insertAsset(t, place.id, poster.id)] });
    await postOk(t, poster, place.id);
    expect(await feedIds(t, poster, `territoryId=${place.id}&mapEntityId=${mapEntityId}`)).toEqual([onEntity.id]);
    expect(await feedIds(t, poster, `territoryId=${place.id}&assetId=${assetId}`)).toEqual([onAsset.id]);
    expect(await feedIds(t, poster, `territoryId=${place.id}&assetId=${assetId.toUpperCase()}`)).toEqual([onAsset.id]);
    const bad = await t.app.inject({ method: 'GET', url: `/api/v1/feed?territoryId=${place.id}&assetId=x`, headers: poster.headers });
    expect(bad.statusCode).toBe(400);
  });
});

describe('GET /api/v1/feed/me and /feed/me/paged', () => {
  it('lists my published posts of every territory, newest first; territoryId narrows', async () => {
    const me = await newUser(t);
    const first = await newTerritory(t);
    const second = await newTerritory(t);
    for (const place of [first, second]) {
      await t.sql(
        `insert into territory_membership (id, created_at_utc, territory_id, user_id, role, capabilities) values (gen_random_uuid(), now(), $1, $2, 'RESIDENT', '{}')`,
        [place.id, me.id],
      );
    }
    const a = await postOk(t, me, first.id);
    const b = await postOk(t, me, second.id, { visibility: 'RESIDENTS_ONLY' });
    await postOk(t, await newResident(t, first), first.id);
    const all = await t.app.inject({ method: 'GET', url: '/api/v1/feed/me', headers: me.headers });
    expect(all.statusCode).toBe(200);
    expect((all.json() as FeedItem[]).map((p) => p.id)).toEqual([b.id, a.id]);
    const one = await t.app.inject({ method: 'GET', url: `/api/v1/feed/me?territoryId=${first.id}`, headers: me.headers });
    expect((one.json() as FeedItem[]).map((p) => p.id)).toEqual([a.id]);
    const paged = await t.app.inject({ method: 'GET', url: '/api/v1/feed/me/paged?pageSize=1', headers: me.headers });
    expect(paged.statusCode).toBe(200);
    expect(paged.json()).toMatchObject({ totalCount: 2, totalPages: 2, hasNextPage: true, items: [{ id: b.id }] });
  });

  it('takes the feed filters too: mapEntityId, assetId and filterByInterests', async () => {
    const place = await newTerritory(t);
    const me = await newResident(t, place);
    const mapEntityId = await insertMapEntity(t, place.id, me.id);
    const assetId = await insertAsset(t, place.id, me.id);
    const onEntity = await postOk(t, me, place.id, { mapEntityId });
    const onAsset = await postOk(t, me, place.id, { assetIds: [assetId], tags: ['birds'] });
    const plain = await postOk(t, me, place.id);
    const mine = async (query: string) =>
      ((await t.app.inject({ method: 'GET', url: `/api/v1/feed/me?${query}`, headers: me.headers })).json() as FeedItem[]).map((p) => p.id);
    expect(await mine('')).toEqual([plain.id, onAsset.id, onEntity.id]);
    expect(await mine(`mapEntityId=${mapEntityId}`)).toEqual([onEntity.id]);
    expect(await mine(`assetId=${assetId}`)).toEqual([onAsset.id]);
    expect(await mine(`mapEntityId=${UNKNOWN_ID}`)).toEqual([]);
    await t.sql(`insert into user_interest (id, created_at_utc, user_id, tag) values (gen_random_uuid(), now(), $1, 'birds')`, [me.id]);
    expect(await mine('filterByInterests=true')).toEqual([onAsset.id]);
    const paged = await t.app.inject({ method: 'GET', url: `/api/v1/feed/me/paged?mapEntityId=${mapEntityId}`, headers: me.headers });
    expect(paged.json()).toMatchObject({ totalCount: 1, items: [{ id: onEntity.id }] });
  });

  it('is 401 without a token and 400 on bad paging', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/feed/me' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/feed/me/paged' })).statusCode).toBe(401);
    const bad = await t.app.inject({ method: 'GET', url: '/api/v1/feed/me/paged?pageSize=101', headers: reader.headers });
    expect(bad.statusCode).toBe(400);
    const take = await t.app.inject({ method: 'GET', url: '/api/v1/feed/me?take=0', headers: reader.headers });
    expect(take.statusCode).toBe(400);
  });
});

describe('GET /api/v1/feed/{id}', () => {
  it('answers a post I can see and 404 for one I cannot', async () => {
    const ok = await t.app.inject({ method: 'GET', url: `/api/v1/feed/${residentsPost.id}`, headers: reader.headers });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ id: residentsPost.id, visibility: 'RESIDENTS_ONLY' });
    for (const [user, id] of [
      [visitor, residentsPost.id],
      [stranger, residentsPost.id],
      [reader, blockedPost.id],
      [author, hiddenIds[0]],
      [reader, UNKNOWN_ID],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/feed/${id}`, headers: user.headers });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('is 400 for a malformed id and 401 without a token', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/feed/not-an-id', headers: reader.headers })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/feed/${publicPost.id}` })).statusCode).toBe(401);
  });
});

describe('event posts', () => {
  it('carry the event summary; the event creation made the post', async () => {
    const place = await newTerritory(t);
    const organiser = await newResident(t, place);
    const startsAtUtc = new Date(Date.now() + 7 * 24 * 3600_000).toISOString();
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/events',
      headers: organiser.headers,
      payload: { territoryId: place.id, title: 'Street party', startsAtUtc, latitude: place.latitude, longitude: place.longitude },
    });
    expect(created.statusCode).toBe(201);
    const event = created.json() as { id: string; postId: string };
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/feed?territoryId=${place.id}`, headers: organiser.headers });
    const item = (res.json() as FeedItem[]).find((p) => p.id === event.postId);
    expect(item).toMatchObject({ type: 'EVENT', event: { id: event.id, title: 'Street party', startsAtUtc, status: 'SCHEDULED' } });
    const plain = (res.json() as FeedItem[]).filter((p) => p.type !== 'EVENT');
    expect(plain.every((p) => p.event === null)).toBe(true);
  });
});
