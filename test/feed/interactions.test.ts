import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newCurator, newResident, newTerritory, newUser, newVisitor, type TestTerritory, type TestUser } from '../factories/index.js';
import { newPost } from '../factories/content.js';
import { TINY_PNG } from '../factories/media-files.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { addModerationRule, type FeedItem, postOk, UNKNOWN_ID, uploadMedia } from './helpers.js';

let t: TestApp;
let territory: TestTerritory;
let author: TestUser;
let neighbour: TestUser;
let visitor: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: ['MEDIAIMAGESENABLED'] });
  author = await newResident(t, territory);
  neighbour = await newResident(t, territory);
  visitor = await newVisitor(t, territory);
});
afterAll(() => t.close());

const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, user?: TestUser, payload?: unknown) =>
  t.app.inject({ method, url, headers: user?.headers ?? {}, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

const item = async (user: TestUser, id: string) => (await inject('GET', `/api/v1/feed/${id}`, user)).json() as FeedItem;

describe('likes', () => {
  it('POST likes is idempotent and answers the counts; the feed item shows them', async () => {
    const post = await postOk(t, author, territory.id);
    const first = await inject('POST', `/api/v1/feed/${post.id}/likes`, neighbour);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ postId: post.id, likeCount: 1, commentCount: 0, shareCount: 0, likedByMe: true });
    const again = await inject('POST', `/api/v1/feed/${post.id}/likes`, neighbour);
    expect(again.json()).toMatchObject({ likeCount: 1, likedByMe: true });
    const byVisitor = await inject('POST', `/api/v1/feed/${post.id}/likes`, visitor);
    expect(byVisitor.json()).toMatchObject({ likeCount: 2 });
    expect(await countRows(t, 'post_like', 'post_id = $1', [post.id])).toBe(2);
    expect(await item(neighbour, post.id)).toMatchObject({ likeCount: 2, likedByMe: true });
    expect(await item(author, post.id)).toMatchObject({ likeCount: 2, likedByMe: false });
  });

  it('concurrent likes by one user count once', async () => {
    const post = await postOk(t, author, territory.id);
    const results = await Promise.all(Array.from({ length: 5 }, () => inject('POST', `/api/v1/feed/${post.id}/likes`, neighbour)));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(await item(author, post.id)).toMatchObject({ likeCount: 1 });
  });

  it("concurrent first likes, comments and shares of a post by different users all count (the post's counts row is created once)", async () => {
    const post = await postOk(t, author, territory.id);
    const fans = await Promise.all(Array.from({ length: 4 }, () => newResident(t, territory)));
    const results = await Promise.all(
      fans.flatMap((fan) => [
        inject('POST', `/api/v1/feed/${post.id}/likes`, fan),
        inject('POST', `/api/v1/feed/${post.id}/comments`, fan, { content: 'Nice' }),
        inject('POST', `/api/v1/feed/${post.id}/shares`, fan),
      ]),
    );
    expect(results.map((r) => r.statusCode)).toEqual(fans.flatMap(() => [200, 201, 201]));
    expect(await item(author, post.id)).toMatchObject({ likeCount: 4, commentCount: 4, shareCount: 4 });
    expect(await countRows(t, 'post_interaction_count', 'post_id = $1', [post.id])).toBe(1);
  });

  it('DELETE likes removes my like (204), and is 204 again when there is none', async () => {
    const post = await postOk(t, author, territory.id);
    await inject('POST', `/api/v1/feed/${post.id}/likes`, neighbour);
    const removed = await inject('DELETE', `/api/v1/feed/${post.id}/likes`, neighbour);
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe('');
    expect(await item(neighbour, post.id)).toMatchObject({ likeCount: 0, likedByMe: false });
    expect((await inject('DELETE', `/api/v1/feed/${post.id}/likes`, neighbour)).statusCode).toBe(204);
    expect(await item(neighbour, post.id)).toMatchObject({ likeCount: 0 });
  });

  it('is 404 for a post I cannot see or that does not exist (nothing written), 400 malformed, 401 without a token', async () => {
    const hidden = await postOk(t, author, territory.id, { visibility: 'RESIDENTS_ONLY' });
    const stranger = await newUser(t);
    for (const user of [visitor, stranger]) {
      expect((await inject('POST', `/api/v1/feed/${hidden.id}/likes`, user)).statusCode).toBe(404);
      expect((await inject('DELETE', `/api/v1/feed/${hidden.id}/likes`, user)).statusCode).toBe(404);
    }
    expect(await countRows(t, 'post_like', 'post_id = $1', [hidden.id])).toBe(0);
    expect((await inject('POST', `/api/v1/feed/${UNKNOWN_ID}/likes`, neighbour)).statusCode).toBe(404);
    expect((await inject('POST', '/api/v1/feed/xyz/likes', neighbour)).statusCode).toBe(400);
    expect((await inject('POST', `/api/v1/feed/${hidden.id}/likes`)).statusCode).toBe(401);
    expect((await inject('DELETE', `/api/v1/feed/${hidden.id}/likes`)).statusCode).toBe(401);
  });
});

describe('comments', () => {
  it('POST comments answers 201 with the comment; the count moves; GET pages them oldest first', async () => {
    const post = await postOk(t, author, territory.id);
    const first = await inject('POST', `/api/v1/feed/${post.id}/comments`, neighbour, { content: ' <i>Great</i> idea ' });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      id: expect.any(String),
      postId: post.id,
      content: 'Great idea',
      author: { id: neighbour.id, displayName: neighbour.displayName },
      createdAtUtc: expect.stringMatching(/Z$/),
    });
    const second = await inject('POST', `/api/v1/feed/${post.id}/comments`, visitor, { content: 'Count me in' });
    expect(second.statusCode).toBe(201);
    expect(await item(author, post.id)).toMatchObject({ commentCount: 2 });

    const page = await inject('GET', `/api/v1/feed/${post.id}/comments?pageSize=1`, author);
    expect(page.statusCode).toBe(200);
    expect(page.json()).toMatchObject({ totalCount: 2, totalPages: 2, hasNextPage: true, items: [{ id: first.json().id }] });
    const next = await inject('GET', `/api/v1/feed/${post.id}/comments?pageSize=1&pageNumber=2`, author);
    expect(next.json().items).toEqual([second.json()]);
  });

  it('hides comments by users I blocked', async () => {
    const post = await postOk(t, author, territory.id);
    const troll = await newResident(t, territory);
    await inject('POST', `/api/v1/feed/${post.id}/comments`, troll, { content: 'meh' });
    const kind = await inject('POST', `/api/v1/feed/${post.id}/comments`, neighbour, { content: 'nice' });
    expect((await inject('POST', `/api/v1/users/${troll.id}/block`, author)).statusCode).toBeLessThan(300);
    const page = await inject('GET', `/api/v1/feed/${post.id}/comments`, author);
    expect(page.json()).toMatchObject({ totalCount: 1, items: [{ id: kind.json().id }] });
    // A post by someone I blocked is not mine to read, comments included.
    const trollPost = await postOk(t, troll, territory.id);
    expect((await inject('GET', `/api/v1/feed/${trollPost.id}/comments`, author)).statusCode).toBe(404);
    expect((await inject('GET', `/api/v1/feed/${trollPost.id}/comments`, neighbour)).statusCode).toBe(200);
  });

  it('is 400 for empty or too long content (nothing written), 404 for posts I cannot see, 401 without a token', async () => {
    const post = await postOk(t, author, territory.id, { visibility: 'RESIDENTS_ONLY' });
    for (const payload of [{ content: '' }, { content: '<b></b>' }, { content: 'x'.repeat(2001) }, {}]) {
      const res = await inject('POST', `/api/v1/feed/${post.id}/comments`, neighbour, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect((await inject('POST', `/api/v1/feed/${post.id}/comments`, visitor, { content: 'hi' })).statusCode).toBe(404);
    expect((await inject('GET', `/api/v1/feed/${post.id}/comments`, visitor)).statusCode).toBe(404);
    expect((await inject('POST', `/api/v1/feed/${UNKNOWN_ID}/comments`, neighbour, { content: 'hi' })).statusCode).toBe(404);
    expect((await inject('GET', `/api/v1/feed/${UNKNOWN_ID}/comments`, neighbour)).statusCode).toBe(404);
    expect(await countRows(t, 'post_comment', 'post_id = $1', [post.id])).toBe(0);
    expect(await item(author, post.id)).toMatchObject({ commentCount: 0 });
    expect((await inject('POST', `/api/v1/feed/${post.id}/comments`, undefined, { content: 'hi' })).statusCode).toBe(401);
    expect((await inject('GET', `/api/v1/feed/${post.id}/comments`)).statusCode).toBe(401);
    expect((await inject('GET', `/api/v1/feed/${post.id}/comments?pageSize=101`, author)).statusCode).toBe(400);
  });
});

describe('shares', () => {
  it('the first share is 201, sharing again answers the same share with 200; counted once per user', async () => {
    const post = await postOk(t, author, territory.id);
    const first = await inject('POST', `/api/v1/feed/${post.id}/shares`, neighbour);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({ id: expect.any(String), postId: post.id, userId: neighbour.id, createdAtUtc: expect.stringMatching(/Z$/), shareCount: 1 });
    const again = await inject('POST', `/api/v1/feed/${post.id}/shares`, neighbour);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    const other = await inject('POST', `/api/v1/feed/${post.id}/shares`, visitor);
    expect(other.json()).toMatchObject({ shareCount: 2 });
    expect(await item(author, post.id)).toMatchObject({ shareCount: 2 });
  });

  it('is 404 for posts I cannot see (nothing written), 400 malformed, 401 without a token', async () => {
    const post = await postOk(t, author, territory.id, { visibility: 'RESIDENTS_ONLY' });
    expect((await inject('POST', `/api/v1/feed/${post.id}/shares`, visitor)).statusCode).toBe(404);
    expect(await countRows(t, 'post_share', 'post_id = $1', [post.id])).toBe(0);
    expect((await inject('POST', '/api/v1/feed/1/shares', visitor)).statusCode).toBe(400);
    expect((await inject('POST', `/api/v1/feed/${post.id}/shares`)).statusCode).toBe(401);
  });
});

describe('PATCH /api/v1/feed/{id}', () => {
  it('lets the author edit title, content, visibility and tags', async () => {
    const post = await postOk(t, author, territory.id, { tags: ['old'] });
    const res = await inject('PATCH', `/api/v1/feed/${post.id}`, author, { title: 'New title', visibility: 'residents_only', tags: ['Fresh'] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: post.id, title: 'New title', content: post.content, visibility: 'RESIDENTS_ONLY', tags: ['fresh'] });
    expect(res.json().updatedAtUtc >= post.updatedAtUtc).toBe(true);
    const content = await inject('PATCH', `/api/v1/feed/${post.id}`, author, { content: 'Rewritten' });
    expect(content.json()).toMatchObject({ title: 'New title', content: 'Rewritten' });
  });

  it("an event's post and an alert's post are not edited on their own (409 POST_NOT_EDITABLE, nothing changes)", async () => {
    for (const type of ['EVENT', 'ALERT'] as const) {
      const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id, type, title: 'As validated' });
      const res = await inject('PATCH', `/api/v1/feed/${postId}`, author, { title: 'Unvalidated claim' });
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('POST_NOT_EDITABLE');
      expect(await t.sql('select title from post where id = $1', [postId])).toEqual([{ title: 'As validated' }]);
    }
  });

  it('is 403 for another resident, 404 for someone who cannot see it, 401 without a token', async () => {
    const post = await postOk(t, author, territory.id, { visibility: 'RESIDENTS_ONLY' });
    const other = await inject('PATCH', `/api/v1/feed/${post.id}`, neighbour, { title: 'Mine now' });
    expect(other.statusCode).toBe(403);
    expect((await inject('PATCH', `/api/v1/feed/${post.id}`, visitor, { title: 'Mine now' })).statusCode).toBe(404);
    expect((await inject('PATCH', `/api/v1/feed/${UNKNOWN_ID}`, author, { title: 'x' })).statusCode).toBe(404);
    expect((await inject('PATCH', `/api/v1/feed/${post.id}`, undefined, { title: 'x' })).statusCode).toBe(401);
    expect(await item(author, post.id)).toMatchObject({ title: post.title });
  });

  it('is 400 on bad values and on moderation rule violations, changing nothing', async () => {
    const place = await newTerritory(t);
    await addModerationRule(t, place.id, 'ProhibitedWords', 'Clean language', { words: ['darn'] });
    const writer = await newResident(t, place);
    const post = await postOk(t, writer, place.id);
    for (const payload of [{ title: '' }, { content: 'x'.repeat(5001) }, { visibility: 'SECRET' }, { tags: ['<>'] }]) {
      expect((await inject('PATCH', `/api/v1/feed/${post.id}`, writer, payload)).statusCode).toBe(400);
    }
    const violation = await inject('PATCH', `/api/v1/feed/${post.id}`, writer, { content: 'Darn it' });
    expect(violation.statusCode).toBe(400);
    expect(violation.json()).toMatchObject({ code: 'MODERATION_RULE_VIOLATION' });
    expect(await item(writer, post.id)).toMatchObject({ title: post.title, content: post.content, visibility: 'PUBLIC', tags: [] });
  });
});

describe('DELETE /api/v1/feed/{id}', () => {
  it('the author deletes the post with its likes, comments, shares and media', async () => {
    const image = await uploadMedia(t, author, 'pic.png', TINY_PNG);
    const post = await postOk(t, author, territory.id, { mediaIds: [image.id] });
    expect(post.mediaUrls).toEqual([image.url]);
    await inject('POST', `/api/v1/feed/${post.id}/likes`, neighbour);
    await inject('POST', `/api/v1/feed/${post.id}/comments`, neighbour, { content: 'hi' });
    await inject('POST', `/api/v1/feed/${post.id}/shares`, neighbour);
    const res = await inject('DELETE', `/api/v1/feed/${post.id}`, author);
    expect(res.statusCode).toBe(204);
    expect(await countRows(t, 'post', 'id = $1', [post.id])).toBe(0);
    for (const table of ['post_like', 'post_comment', 'post_share']) expect(await countRows(t, table, 'post_id = $1', [post.id])).toBe(0);
    expect(await countRows(t, 'media_attachment', 'owner_id = $1', [post.id])).toBe(0);
    expect((await inject('GET', image.url, author)).statusCode).toBe(404);
    expect(await countRows(t, 'audit_entry', `action = 'post.deleted' and subject_id = $1`, [post.id])).toBe(1);
    expect((await inject('GET', `/api/v1/feed/${post.id}`, author)).statusCode).toBe(404);
  });

  it('a curator of the territory or a system admin may delete anyone’s post', async () => {
    const curator = await newCurator(t, territory);
    const admin = await newAdmin(t);
    for (const remover of [curator, admin]) {
      const post = await postOk(t, author, territory.id, { visibility: 'RESIDENTS_ONLY' });
      expect((await inject('DELETE', `/api/v1/feed/${post.id}`, remover)).statusCode).toBe(204);
      expect(await countRows(t, 'post', 'id = $1', [post.id])).toBe(0);
    }
    const rows = await t.sql<{ data: { byCurator: boolean } }>(`select data from audit_entry where action = 'post.deleted' and actor_user_id = $1`, [
      curator.id,
    ]);
    expect(rows[0]?.data.byCurator).toBe(true);
  });

  it('is 403 for another resident, 404 for a post I cannot see or unknown, 400 malformed, 401 without a token', async () => {
    const post = await postOk(t, author, territory.id, { visibility: 'RESIDENTS_ONLY' });
    const forbidden = await inject('DELETE', `/api/v1/feed/${post.id}`, neighbour);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ code: 'NOT_AUTHOR' });
    expect((await inject('DELETE', `/api/v1/feed/${post.id}`, visitor)).statusCode).toBe(404);
    const otherCurator = await newCurator(t, await newTerritory(t));
    expect((await inject('DELETE', `/api/v1/feed/${post.id}`, otherCurator)).statusCode).toBe(404);
    expect((await inject('DELETE', `/api/v1/feed/${UNKNOWN_ID}`, author)).statusCode).toBe(404);
    expect((await inject('DELETE', '/api/v1/feed/nope', author)).statusCode).toBe(400);
    expect((await inject('DELETE', `/api/v1/feed/${post.id}`)).statusCode).toBe(401);
    expect(await countRows(t, 'post', 'id = $1', [post.id])).toBe(1);
  });
});
