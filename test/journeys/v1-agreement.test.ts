import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdmin, newResident, newTerritory, newVisitor, type TestTerritory, type TestUser } from '../factories/index.js';
import { newPost } from '../factories/content.js';
import { multipartBody, TINY_JPEG, TINY_PNG } from '../factories/multipart.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { clientToken, v2 } from './helpers.js';

/**
 * What a client app mixing v2 and v1 sees (the spec's Versioning: "a client may fall back to v1"): the screens agree
 * with what v1 allows and shows, its own v1 writes included, and create-post reads its form exactly as sent.
 */
let t: TestApp;
let territory: TestTerritory;
let client: string;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  territory = await newTerritory(t, { flags: ['MEDIAIMAGESENABLED', 'ALERTPOSTS'] });
  client = await clientToken(t, await newAdmin(t));
});
afterAll(() => t.close());

const createPost = (user: TestUser, body: { payload: Buffer; headers: Record<string, string> }) =>
  t.app.inject({
    method: 'POST',
    url: `/api/v2/journeys/feed/create-post?territoryId=${territory.id}`,
    headers: { ...body.headers, authorization: `Bearer ${client}`, 'x-user-token': user.token },
    payload: body.payload,
  });

/** A multipart body of raw parts, as a client may send them (a part without a filename, a name twice). */
function rawForm(parts: Array<[name: string, value: string | Buffer]>) {
  const boundary = 'v1-agreement';
  const bytes = parts.map(([name, value]) =>
    Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`), Buffer.from(value), Buffer.from('\r\n')]),
  );
  return { payload: Buffer.concat([...bytes, Buffer.from(`--${boundary}--\r\n`)]), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

const patchTitle = (user: TestUser, postId: string) =>
  t.app.inject({ method: 'PATCH', url: `/api/v1/feed/${postId}`, headers: user.headers, payload: { title: 'Renamed' } });

describe('the territory feed screen offers an edit where PATCH /api/v1/feed/{id} takes it', () => {
  it("an event's post: canEdit false (409 POST_NOT_EDITABLE on v1)", async () => {
    const place = await newTerritory(t);
    const resident = await newResident(t, place, { verified: true });
    const created = await v2(t, 'POST', '/events/create-event', {
      client,
      user: resident,
      payload: { territoryId: place.id, title: 'Party', startsAtUtc: new Date(Date.now() + 86_400_000).toISOString(), latitude: -23.55, longitude: -46.63 },
    });
    expect(created.statusCode, created.body).toBe(201);
    const [item] = (await v2(t, 'GET', `/feed/territory-feed?territoryId=${place.id}`, { client, user: resident })).json().items;
    expect(item.post.type).toBe('EVENT');
    expect(item.metadata).toEqual({ canEdit: false, canDelete: true });
    expect((await patchTitle(resident, item.post.id)).statusCode).toBe(409);
  });

  it("an alert's post: canEdit false; the author's plain post: true, and v1 takes the edit", async () => {
    const place = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const resident = await newResident(t, place, { verified: true });
    const alertId = await newPost(t, { territoryId: place.id, authorUserId: resident.id, type: 'ALERT' });
    const postId = await newPost(t, { territoryId: place.id, authorUserId: resident.id });
    const items = (await v2(t, 'GET', `/feed/territory-feed?territoryId=${place.id}`, { client, user: resident })).json().items;
    const canEdit = (id: string) => items.find((i: { post: { id: string } }) => i.post.id === id).metadata.canEdit;
    expect(canEdit(alertId)).toBe(false);
    expect((await patchTitle(resident, alertId)).statusCode).toBe(409);
    expect(canEdit(postId)).toBe(true);
    expect((await patchTitle(resident, postId)).statusCode).toBe(200);
  });

  it("the author's own hidden post: canEdit false (v1 answers 404)", async () => {
    const place = await newTerritory(t);
    const resident = await newResident(t, place, { verified: true });
    const postId = await newPost(t, { territoryId: place.id, authorUserId: resident.id, status: 'HIDDEN' });
    const items = (await v2(t, 'GET', `/feed/territory-feed?territoryId=${place.id}`, { client, user: resident })).json().items;
    expect(items.find((i: { post: { id: string } }) => i.post.id === postId).metadata.canEdit).toBe(false);
    expect((await patchTitle(resident, postId)).statusCode).toBe(404);
  });

  it('a posting-restricted author: canEdit false (403 POSTING_RESTRICTED on v1)', async () => {
    const place = await newTerritory(t);
    const resident = await newResident(t, place, { verified: true });
    const postId = await newPost(t, { territoryId: place.id, authorUserId: resident.id });
    await t.sql(
      `insert into posting_restriction (id, created_at_utc, territory_id, user_id, ends_at_utc)
       values (gen_random_uuid(), now(), $1, $2, now() + interval '1 day')`,
      [place.id, resident.id],
    );
    const [item] = (await v2(t, 'GET', `/feed/territory-feed?territoryId=${place.id}`, { client, user: resident })).json().items;
    expect(item.metadata.canEdit).toBe(false);
    expect((await patchTitle(resident, postId)).statusCode).toBe(403);
  });
});

describe("the user's own v1 writes show at once in their v2 reads (the read cache drops their answers)", () => {
  it('a like through v1: the next screen is a MISS with liked true and the count', async () => {
    const place = await newTerritory(t);
    const author = await newResident(t, place, { verified: true });
    const user = await newVisitor(t, place);
    const postId = await newPost(t, { territoryId: place.id, authorUserId: author.id });
    const url = `/feed/territory-feed?territoryId=${place.id}`;
    await v2(t, 'GET', url, { client, user });
    expect((await v2(t, 'GET', url, { client, user })).headers['x-cache']).toBe('HIT');
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/feed/${postId}/likes`, headers: user.headers })).statusCode).toBe(200);
    const after = await v2(t, 'GET', url, { client, user });
    expect(after.headers['x-cache']).toBe('MISS');
    expect(after.json().items[0]).toMatchObject({ counts: { likes: 1 }, userInteractions: { liked: true } });
  });

  it("a block through v1 (there is no block journey): the blocked author's posts leave the screen at once", async () => {
    const place = await newTerritory(t);
    const offender = await newResident(t, place, { verified: true });
    const user = await newVisitor(t, place);
    await newPost(t, { territoryId: place.id, authorUserId: offender.id });
    const url = `/feed/territory-feed?territoryId=${place.id}`;
    expect((await v2(t, 'GET', url, { client, user })).json().items).toHaveLength(1);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/blocks/users/${offender.id}`, headers: user.headers })).statusCode).toBe(204);
    const after = await v2(t, 'GET', url, { client, user });
    expect(after.headers['x-cache']).toBe('MISS');
    expect(after.json().items).toHaveLength(0);
  });

  it("another user's v1 write leaves this user's cached answer alone (their own entries only)", async () => {
    const place = await newTerritory(t);
    const author = await newResident(t, place, { verified: true });
    const user = await newVisitor(t, place);
    const other = await newVisitor(t, place);
    const postId = await newPost(t, { territoryId: place.id, authorUserId: author.id });
    const url = `/feed/territory-feed?territoryId=${place.id}`;
    await v2(t, 'GET', url, { client, user });
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/feed/${postId}/likes`, headers: other.headers })).statusCode).toBe(200);
    expect((await v2(t, 'GET', url, { client, user })).headers['x-cache']).toBe('HIT');
  });

  it('a cached answer varies with the client and user tokens, so a device cache never hands it to another user', async () => {
    const place = await newTerritory(t);
    const user = await newVisitor(t, place);
    const url = `/feed/territory-feed?territoryId=${place.id}`;
    for (const cache of ['MISS', 'HIT']) {
      const res = await v2(t, 'GET', url, { client, user });
      expect(res.headers['x-cache']).toBe(cache);
      expect(res.headers['cache-control']).toBe('private, max-age=60');
      expect(res.headers.vary).toBe('Origin, Authorization, X-User-Token');
    }
  });
});

describe('create-post reads its form exactly as sent', () => {
  it('content within the 5000-character limit is stored whole, however many bytes its characters take', async () => {
    const resident = await newResident(t, territory, { verified: true });
    // 4000 CJK characters are 12,000 bytes, 3000 emoji 6000 UTF-16 units: the parser's default 10,000 bytes cut both.
    for (const content of ['中'.repeat(4000), '🎉'.repeat(2500)]) {
      const res = await createPost(resident, multipartBody([], { title: 'Aviso', content }));
      expect(res.statusCode, res.body.slice(0, 200)).toBe(201);
      const [row] = await t.sql<{ content: string }>('select content from post where id = $1', [res.json().post.id]);
      expect(row!.content).toBe(content);
    }
  });

  it('content over the limit is a 400 naming it, however long (never stored cut short)', async () => {
    const resident = await newResident(t, territory, { verified: true });
    for (const content of ['中'.repeat(5001), '中'.repeat(6000), 'a'.repeat(30_000)]) {
      const res = await createPost(resident, multipartBody([], { title: 'Aviso', content }));
      expect(res.statusCode).toBe(400);
      expect(res.json().details).toMatchObject({ field: 'content' });
    }
    expect(await t.sql(`select 1 from post where title = 'Aviso' and author_user_id = $1 and char_length(content) > 4000`, [resident.id])).toEqual([]);
  });

  it('a field sent twice is a 400 naming it, not the first value taken', async () => {
    const resident = await newResident(t, territory, { verified: true });
    const res = await createPost(
      resident,
      rawForm([
        ['title', 'Draft'],
        ['title', 'Final title'],
        ['content', 'c'],
      ]),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'title', message: 'the field is sent more than once' } });
  });

  it('a file sent without a filename is a 400 naming mediaFiles, not a post without its photo', async () => {
    const resident = await newResident(t, territory, { verified: true });
    const res = await createPost(
      resident,
      rawForm([
        ['title', 'Lost cat'],
        ['content', 'Grey'],
        ['mediaFiles', TINY_PNG],
      ]),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toMatchObject({ field: 'mediaFiles' });
    expect(await t.sql(`select 1 from post where title = 'Lost cat'`)).toEqual([]);
  });

  it("an image the media service refuses (dimensions unreadable) names mediaFiles and the file, like the parser's refusals", async () => {
    const resident = await newResident(t, territory, { verified: true });
    const res = await createPost(
      resident,
      multipartBody(
        [
          { field: 'mediaFiles', fileName: 'a.png', bytes: TINY_PNG },
          { field: 'mediaFiles', fileName: 'b.jpg', bytes: TINY_JPEG },
        ],
        { title: 't', content: 'c' },
      ),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ details: { field: 'mediaFiles', message: 'file 2: The image dimensions could not be read from the file.' } });
  });
});
