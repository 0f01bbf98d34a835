import { existsSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPLOAD_TEMP_DIR, UPLOAD_TEMP_PREFIX } from '../../src/http/uploads.js';
import { countRows, newAdmin, newResident, newTerritory, newUser, newVisitor, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { TEXT_FILE, TINY_JPEG_8X8, TINY_MP3, TINY_PNG, wavFile } from '../factories/media-files.js';
import { multipartBody, type MultipartFilePart, TINY_JPEG } from '../factories/multipart.js';
import { storedFilesOf } from '../media/upload.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { clientToken, expectV2Error, v2 } from './helpers.js';

/** POST /api/v2/journeys/feed/create-post: a post and its files in one multipart request. */
let t: TestApp;
let territory: TestTerritory;
let client: string;
let readOnly: string;
const POST_FLAGS = ['MEDIAIMAGESENABLED', 'MEDIAVIDEOSENABLED', 'MEDIAAUDIOENABLED'];

beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  const admin = await newAdmin(t);
  client = await clientToken(t, admin);
  readOnly = await clientToken(t, admin, ['journeys:read']);
  territory = await newTerritory(t, { flags: POST_FLAGS });
});
afterAll(() => t.close());

const png = (n: number): MultipartFilePart => ({ field: 'mediaFiles', fileName: `photo-${n}.png`, contentType: 'image/png', bytes: TINY_PNG });
const fields = (extra: Record<string, string> = {}) => ({ title: 'Market on Sunday', content: 'Fresh fruit at the square.', ...extra });

interface CreateCall {
  user?: TestUser | null;
  client?: string | null;
  territoryId?: string | null;
  files?: MultipartFilePart[];
  fields?: Record<string, string>;
  headers?: Record<string, string>;
}

function createPost(call: CreateCall) {
  const body = multipartBody(call.files ?? [], call.fields ?? fields());
  const territoryId = call.territoryId === undefined ? territory.id : call.territoryId;
  const headers: Record<string, string> = { ...body.headers, ...(call.headers ?? {}) };
  const token = call.client === undefined ? client : call.client;
  if (token) headers.authorization = `Bearer ${token}`;
  if (call.user) headers['x-user-token'] = call.user.token;
  return t.app.inject({
    method: 'POST',
    url: `/api/v2/journeys/feed/create-post${territoryId === null ? '' : `?territoryId=${territoryId}`}`,
    headers,
    payload: body.payload,
  });
}

/** What a post creation may leave behind for `user`: posts, media rows, stored files, temporary upload files. */
async function leftovers(user: TestUser) {
  const temp = existsSync(UPLOAD_TEMP_DIR) ? readdirSync(UPLOAD_TEMP_DIR).filter((f) => f.startsWith(UPLOAD_TEMP_PREFIX)) : [];
  return {
    posts: await countRows(t, 'post', 'author_user_id = $1', [user.id]),
    media: await countRows(t, 'media_asset', 'uploaded_by_user_id = $1', [user.id]),
    stored: storedFilesOf(t, user.id).length,
    temp: temp.length,
  };
}
const NOTHING = { posts: 0, media: 0, stored: 0, temp: 0 };

describe('POST /feed/create-post', () => {
  it('201: the post with its files attached in order, mediaUrls, suggestions and Location', async () => {
    const author = await newResident(t, territory, { verified: true });
    const res = await createPost({
      user: author,
      files: [png(1), { field: 'mediaFiles', fileName: 'b.jpg', bytes: TINY_JPEG_8X8 }],
      fields: fields({ visibility: 'residents_only' }),
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body.post).toMatchObject({
      territoryId: territory.id,
      title: 'Market on Sunday',
      content: 'Fresh fruit at the square.',
      type: 'POST',
      visibility: 'RESIDENTS_ONLY',
      status: 'PUBLISHED',
      author: { id: author.id },
    });
    expect(body.mediaUrls).toHaveLength(2);
    expect(body.post.mediaUrls).toEqual(body.mediaUrls);
    expect(body.suggestions).toEqual([expect.objectContaining({ action: 'VIEW_FEED' })]);
    expect(res.headers.location).toBe(`/api/v1/feed/${body.post.id}`);
    const media = await t.sql<{ media_type: string; mime_type: string }>(
      `select m.media_type, m.mime_type from media_attachment a join media_asset m on m.id = a.media_asset_id
        where a.owner_type = 'POST' and a.owner_id = $1 order by a.display_order`,
      [body.post.id],
    );
    expect(media.map((m) => m.mime_type)).toEqual(['image/png', 'image/jpeg']);
    expect(body.mediaUrls).toEqual(
      (await t.sql<{ id: string }>(`select media_asset_id as id from media_attachment where owner_id = $1 order by display_order`, [body.post.id])).map(
        (r) => `/api/v1/media/${r.id}`,
      ),
    );
    expect(await leftovers(author)).toEqual({ posts: 1, media: 2, stored: 2, temp: 0 });
    // The files are served to whoever sees the post.
    const neighbour = await newResident(t, territory);
    const file = await t.app.inject({ method: 'GET', url: body.mediaUrls[0], headers: neighbour.headers });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('image/png');
  });

  it('without files; the limits of the spec: title 1..200 and content 1..5000 characters', async () => {
    const author = await newResident(t, territory);
    const res = await createPost({ user: author, fields: fields({ title: 'T'.repeat(200), content: 'C'.repeat(5000) }) });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ post: { title: 'T'.repeat(200) }, mediaUrls: [] });
    for (const [field, extra] of [
      ['title', { title: 'T'.repeat(201) }],
      ['title', { title: '' }],
      ['content', { content: 'C'.repeat(5001) }],
      ['content', { content: '   ' }],
      ['visibility', { visibility: 'FRIENDS' }],
      ['type', { type: 'EVENT' }],
    ] as const) {
      const bad = expectV2Error(await createPost({ user: author, files: [png(1)], fields: fields(extra) }), 400, 'INVALID_REQUEST');
      expect(bad.details, JSON.stringify(extra)).toMatchObject({ field });
    }
    const missing = expectV2Error(await createPost({ user: author, fields: { content: 'no title' } }), 400, 'INVALID_REQUEST');
    expect(missing.details).toMatchObject({ field: 'title' });
    expect(await leftovers(author)).toEqual({ ...NOTHING, posts: 1 });
  });

  it('the author sees the new post at once in the feed journey (their cached answers are dropped)', async () => {
    const place = await newTerritory(t, { flags: POST_FLAGS });
    const author = await newResident(t, place);
    const feed = () => v2(t, 'GET', `/feed/territory-feed?territoryId=${place.id}`, { client, user: author });
    expect((await feed()).headers['x-cache']).toBe('MISS');
    expect((await feed()).headers['x-cache']).toBe('HIT');
    const res = await createPost({ user: author, territoryId: place.id, files: [png(1)] });
    expect(res.statusCode, res.body).toBe(201);
    const after = await feed();
    expect(after.headers['x-cache']).toBe('MISS');
    expect(after.json().items[0]).toMatchObject({ post: { id: res.json().post.id }, media: [{ mediaType: 'IMAGE' }], metadata: { canEdit: true } });
  });

  it('401 without a client token, with a user JWT as Authorization, without X-User-Token; 403 without journeys:write', async () => {
    const author = await newResident(t, territory);
    expectV2Error(await createPost({ user: author, client: null, files: [png(1)] }), 401, 'UNAUTHORIZED');
    expectV2Error(await createPost({ user: author, client: author.token, files: [png(1)] }), 401, 'UNAUTHORIZED');
    expectV2Error(await createPost({ user: null, files: [png(1)] }), 401, 'UNAUTHORIZED');
    expectV2Error(await createPost({ user: author, client: readOnly, files: [png(1)] }), 403, 'FORBIDDEN');
    expect(await leftovers(author)).toEqual(NOTHING);
  });

  it('403 for a visitor (only residents post), 404 for an unknown territory, 400 without a territory: nothing left behind', async () => {
    const visitor = await newVisitor(t, territory);
    expectV2Error(await createPost({ user: visitor, files: [png(1), png(2)] }), 403, 'FORBIDDEN');
    expect(await leftovers(visitor)).toEqual(NOTHING);
    const author = await newResident(t, territory);
    expectV2Error(await createPost({ user: author, territoryId: UNKNOWN_ID, files: [png(1), png(2)] }), 404, 'NOT_FOUND');
    const noTerritory = expectV2Error(await createPost({ user: author, territoryId: null, files: [png(1)] }), 400, 'INVALID_REQUEST');
    expect(noTerritory.details).toMatchObject({ field: 'territoryId' });
    expectV2Error(await createPost({ user: author, territoryId: 'not-a-uuid' }), 400, 'INVALID_REQUEST');
    expect(await leftovers(author)).toEqual(NOTHING);
  });

  it('a bad third file after two good ones: 400 naming mediaFiles, no post, no media row, no stored or temporary file', async () => {
    const author = await newResident(t, territory);
    // Refused while the request streams in (not an image, video or audio).
    const unsupported = expectV2Error(
      await createPost({ user: author, files: [png(1), png(2), { field: 'mediaFiles', fileName: 'c.png', bytes: TEXT_FILE }] }),
      400,
      'INVALID_REQUEST',
    );
    expect(unsupported.details).toMatchObject({ field: 'mediaFiles', message: expect.stringContaining('file 3') });
    expect(await leftovers(author)).toEqual(NOTHING);
    // Refused by the media service after the first two were stored (an image whose size cannot be read).
    const unreadable = expectV2Error(
      await createPost({ user: author, files: [png(1), png(2), { field: 'mediaFiles', fileName: 'c.jpg', bytes: TINY_JPEG }] }),
      400,
      'INVALID_REQUEST',
    );
    expect(unreadable.error).toMatch(/image/i);
    expect(await leftovers(author)).toEqual(NOTHING);
    // Refused by the media rules of posts once all three were stored: one audio per post.
    const twoAudios = expectV2Error(
      await createPost({
        user: author,
        files: [png(1), { field: 'mediaFiles', fileName: 'a.mp3', bytes: TINY_MP3 }, { field: 'mediaFiles', fileName: 'b.wav', bytes: wavFile(1) }],
      }),
      400,
      'INVALID_REQUEST',
    );
    expect(twoAudios.details).toMatchObject({ field: 'mediaFiles' });
    expect(await leftovers(author)).toEqual(NOTHING);
    // An empty file, and more than ten files.
    const empty = expectV2Error(
      await createPost({ user: author, files: [png(1), png(2), { field: 'mediaFiles', fileName: 'e.png', bytes: Buffer.alloc(0) }] }),
      400,
      'INVALID_REQUEST',
    );
    expect(empty.details).toMatchObject({ field: 'mediaFiles' });
    const eleven = expectV2Error(await createPost({ user: author, files: Array.from({ length: 11 }, (_, i) => png(i)) }), 400, 'INVALID_REQUEST');
    expect(eleven.details).toMatchObject({ field: 'mediaFiles' });
    expect(await leftovers(author)).toEqual(NOTHING);
  });

  it("the territory's media flags apply to the files (images off: 400, nothing left behind)", async () => {
    const noImages = await newTerritory(t, { flags: ['MEDIAAUDIOENABLED'] });
    const author = await newResident(t, noImages);
    const res = expectV2Error(await createPost({ user: author, territoryId: noImages.id, files: [png(1), png(2)] }), 400, 'INVALID_REQUEST');
    expect(res.details).toMatchObject({ field: 'mediaFiles' });
    expect(await leftovers(author)).toEqual(NOTHING);
  });

  it('400 for a body that is not multipart, and for a file in another field', async () => {
    const author = await newResident(t, territory);
    const json = await t.app.inject({
      method: 'POST',
      url: `/api/v2/journeys/feed/create-post?territoryId=${territory.id}`,
      headers: { authorization: `Bearer ${client}`, 'x-user-token': author.token },
      payload: { title: 'x', content: 'y' },
    });
    expectV2Error(json, 400, 'INVALID_REQUEST');
    const other = expectV2Error(await createPost({ user: author, files: [{ ...png(1), field: 'file' }] }), 400, 'INVALID_REQUEST');
    expect(other.details).toMatchObject({ field: 'file' });
    expect(await leftovers(author)).toEqual(NOTHING);
  });

  it('is in the OpenAPI document with the client-credentials scheme and the multipart body', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/api/v2/journeys/feed/create-post'].post;
    expect(op.security).toEqual([{ ClientCredentials: [] }]);
    expect(op.requestBody.content['multipart/form-data']).toBeDefined();
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '404', '429']));
    expect(op.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/JourneyError' });
  });
});

describe('a new user', () => {
  it('who is not a member gets 403 and nothing is written', async () => {
    const user = await newUser(t);
    expectV2Error(await createPost({ user, files: [png(1)] }), 403, 'FORBIDDEN');
    expect(await leftovers(user)).toEqual(NOTHING);
  });
});
