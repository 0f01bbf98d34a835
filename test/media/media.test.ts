import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMembership,
  countRows,
  newAdmin,
  newModerator,
  newResident,
  newTerritory,
  newUser,
  newVisitor,
  type TestTerritory,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import {
  mp4HeaderOfSize,
  padTo,
  TEXT_FILE,
  TINY_JPEG_8X8,
  TINY_MOV,
  TINY_MP3,
  TINY_MP4,
  TINY_OGG,
  TINY_OGG_OPUS,
  TINY_PNG,
  TINY_WEBM,
  TINY_WEBP,
  wavFile,
  wavOfSize,
} from '../factories/media-files.js';
import { TINY_PDF } from '../factories/multipart.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { postMedia, storedFilesOf, uploadMedia } from './upload.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const MB = 1024 * 1024;
const mediaRows = (userId: string) => countRows(t, 'media_asset', 'uploaded_by_user_id = $1', [userId]);

describe('POST /api/v1/media/upload', () => {
  const kinds: [string, Buffer, string, string, string, number | null][] = [
    ['PNG', TINY_PNG, 'a.png', 'image/png', 'IMAGE', null],
    ['JPEG', TINY_JPEG_8X8, 'a.jpg', 'image/jpeg', 'IMAGE', null],
    ['WebP', TINY_WEBP, 'a.webp', 'image/webp', 'IMAGE', null],
    ['MP4', TINY_MP4, 'a.mp4', 'video/mp4', 'VIDEO', 2],
    ['WebM', TINY_WEBM, 'a.webm', 'video/webm', 'VIDEO', 2],
    ['MOV', TINY_MOV, 'a.mov', 'video/quicktime', 'VIDEO', 2],
    ['MP3', TINY_MP3, 'a.mp3', 'audio/mpeg', 'AUDIO', 2.16],
    ['WAV', wavFile(3), 'a.wav', 'audio/wav', 'AUDIO', 3],
    ['OGG (Vorbis)', TINY_OGG, 'a.ogg', 'audio/ogg', 'AUDIO', 2],
    ['OGG (Opus)', TINY_OGG_OPUS, 'a.opus', 'audio/ogg', 'AUDIO', 2],
  ];

  it.each(kinds)('stores a %s with its sniffed type and duration (201, Location)', async (_name, bytes, fileName, mimeType, mediaType, duration) => {
    const user = await newUser(t);
    // The client's claimed type is ignored.
    const res = await postMedia(t, user, bytes, fileName, {}, 'application/octet-stream');
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.any(String),
      url: `/api/v1/media/${body.id}`,
      mimeType,
      sizeBytes: bytes.length,
      mediaType,
      durationSeconds: duration === null ? null : expect.closeTo(duration, 1),
      uploadedByUserId: user.id,
      createdAtUtc: expect.stringMatching(/Z$/),
    });
    expect(res.headers.location).toBe(`/api/v1/media/${body.id}`);
    expect(await mediaRows(user.id)).toBe(1);
    expect(storedFilesOf(t, user.id)).toHaveLength(1);
  });

  it('keeps a sanitized title and description', async () => {
    const user = await newUser(t);
    const res = await postMedia(t, user, TINY_PNG, 'a.png', { title: ' <b>Sunset</b> ', description: 'over the <i>bay</i>' });
    expect(res.statusCode).toBe(201);
    const [row] = await t.sql<{ title: string; description: string }>('select title, description from media_asset where id = $1', [res.json().id]);
    expect(row).toEqual({ title: 'Sunset', description: 'over the bay' });
  });

  it('is 401 without a token, and nothing is stored', async () => {
    const before = await countRows(t, 'media_asset');
    const res = await postMedia(t, null, TINY_PNG, 'a.png');
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(await countRows(t, 'media_asset')).toBe(before);
  });

  const refusals: [string, () => Buffer, string, string][] = [
    ['a text file renamed .png', () => TEXT_FILE, 'photo.png', 'UNSUPPORTED_FILE_TYPE'],
    ['a PDF', () => TINY_PDF, 'doc.pdf', 'UNSUPPORTED_FILE_TYPE'],
    ['an image over 10 MB', () => padTo(TINY_PNG, 10 * MB + 1), 'big.png', 'FILE_TOO_LARGE'],
    ['an audio over 20 MB', () => wavOfSize(20 * MB + 1), 'big.wav', 'FILE_TOO_LARGE'],
    ['a video over 50 MB', () => padTo(TINY_MP4, 50 * MB + 1), 'big.mp4', 'FILE_TOO_LARGE'],
    ['a video whose duration cannot be read', () => mp4HeaderOfSize(4096), 'broken.mp4', 'MEDIA_DURATION_UNREADABLE'],
  ];

  it.each(refusals)('refuses %s (400) and stores nothing', async (_name, bytes, fileName, code) => {
    const user = await newUser(t);
    const res = await postMedia(t, user, bytes(), fileName);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 400, code });
    expect(await mediaRows(user.id)).toBe(0);
    expect(storedFilesOf(t, user.id)).toEqual([]);
  });

  it('accepts an image of exactly 10 MB (the limit is inclusive)', async () => {
    const user = await newUser(t);
    const asset = await uploadMedia(t, user, padTo(TINY_PNG, 10 * MB), 'edge.png');
    expect(asset.sizeBytes).toBe(10 * MB);
  });

  it('is 400 without a file, with the file in another field, or with a too long title', async () => {
    const user = await newUser(t);
    const { multipartBody } = await import('../factories/multipart.js');
    const noFile = multipartBody([], { title: 'x' });
    const missing = await t.app.inject({
      method: 'POST',
      url: '/api/v1/media/upload',
      payload: noFile.payload,
      headers: { ...noFile.headers, ...user.headers },
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'file' }] });

    const wrongField = multipartBody([{ field: 'image', fileName: 'a.png', bytes: TINY_PNG }]);
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/api/v1/media/upload',
      payload: wrongField.payload,
      headers: { ...wrongField.headers, ...user.headers },
    });
    expect(wrong.statusCode).toBe(400);

    const longTitle = await postMedia(t, user, TINY_PNG, 'a.png', { title: 'x'.repeat(201) });
    expect(longTitle.statusCode).toBe(400);
    expect(longTitle.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'title' }] });

    const json = await t.app.inject({ method: 'POST', url: '/api/v1/media/upload', payload: { file: 'x' }, headers: user.headers });
    expect(json.statusCode).toBe(400);
    expect(await mediaRows(user.id)).toBe(0);
    expect(storedFilesOf(t, user.id)).toEqual([]);
  });
});

describe('GET /api/v1/media/{id}', () => {
  let owner: TestUser;
  let other: TestUser;
  beforeAll(async () => {
    owner = await newUser(t);
    other = await newUser(t);
  });

  it('streams the bytes with their type and length to the uploader', async () => {
    const image = await uploadMedia(t, owner, TINY_WEBP, 'x.webp');
    const res = await t.app.inject({ method: 'GET', url: image.url, headers: owner.headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/webp');
    expect(res.headers['content-length']).toBe(String(TINY_WEBP.length));
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.rawPayload.equals(TINY_WEBP)).toBe(true);
    expect(res.headers['cache-control']).toBe('private, max-age=300');
    // Not attached to anything yet: nobody else may read it.
    expect((await t.app.inject({ method: 'GET', url: image.url, headers: other.headers })).statusCode).toBe(404);

    const video = await uploadMedia(t, owner, TINY_MP4, 'x.mp4');
    const played = await t.app.inject({ method: 'GET', url: video.url, headers: owner.headers });
    expect(played.headers['content-type']).toBe('video/mp4');
    expect(played.rawPayload.equals(TINY_MP4)).toBe(true);
  });

  it('is 401 without a token, 404 for an unknown id or a missing file, 400 for a malformed id', async () => {
    const image = await uploadMedia(t, owner, TINY_PNG, 'x.png');
    expect((await t.app.inject({ method: 'GET', url: image.url })).statusCode).toBe(401);
    const unknown = await t.app.inject({ method: 'GET', url: `/api/v1/media/${UNKNOWN_ID}`, headers: owner.headers });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND', instance: `/api/v1/media/${UNKNOWN_ID}` });
    const malformed = await t.app.inject({ method: 'GET', url: '/api/v1/media/not-a-uuid', headers: owner.headers });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'id' }] });

    const [row] = await t.sql<{ storage_key: string }>('select storage_key from media_asset where id = $1', [image.id]);
    await t.deps.storage.remove(row!.storage_key);
    expect((await t.app.inject({ method: 'GET', url: image.url, headers: owner.headers })).statusCode).toBe(404);
  });
});

describe('GET /api/v1/media/{id}: visibility follows the content showing the media (rule 4)', () => {
  let territory: TestTerritory;
  let author: TestUser;
  beforeAll(async () => {
    territory = await newTerritory(t, { flags: ['MEDIAIMAGESENABLED'] });
    author = await newResident(t, territory);
  });

  const get = (url: string, user: TestUser) => t.app.inject({ method: 'GET', url, headers: user.headers });

  /** An image the author posts in the feed with the given visibility (through the real endpoints). */
  async function postedImage(visibility: 'PUBLIC' | 'RESIDENTS_ONLY', by: TestUser = author) {
    const image = await uploadMedia(t, by, TINY_PNG, 'p.png');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/feed',
      headers: by.headers,
      payload: { territoryId: territory.id, title: 'With a photo', content: 'Look', visibility, mediaIds: [image.id] },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().mediaUrls).toEqual([image.url]);
    return { ...image, postId: res.json().id as string };
  }

  /** Anyone who may not see the media gets exactly the answer of an unknown id. */
  async function expectHidden(url: string, user: TestUser) {
    const res = await get(url, user);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: 404, code: 'NOT_FOUND', detail: 'Media was not found.' });
    expect(res.rawPayload.includes(TINY_PNG)).toBe(false);
  }

  it("RESIDENTS_ONLY post media: 200 for residents, the territory's curators and moderators and system admins; 404 for visitors and non-members", async () => {
    const image = await postedImage('RESIDENTS_ONLY');
    const resident = await get(image.url, await newResident(t, territory));
    expect(resident.statusCode).toBe(200);
    expect(resident.rawPayload.equals(TINY_PNG)).toBe(true);
    expect((await get(image.url, author)).statusCode).toBe(200);
    const visitingCurator = await newUser(t);
    await addMembership(t, visitingCurator, territory, { role: 'VISITOR', capabilities: ['CURATOR'] });
    expect((await get(image.url, visitingCurator)).statusCode).toBe(200);
    expect((await get(image.url, await newModerator(t, territory))).statusCode).toBe(200);
    expect((await get(image.url, await newAdmin(t))).statusCode).toBe(200);

    await expectHidden(image.url, await newUser(t));
    await expectHidden(image.url, await newVisitor(t, territory));
    // A resident of another territory is no resident here.
    await expectHidden(image.url, await newResident(t, await newTerritory(t)));
  });

  it('PUBLIC post media: 200 for any signed-in user, members or not', async () => {
    const image = await postedImage('PUBLIC');
    expect((await get(image.url, await newUser(t))).statusCode).toBe(200);
    expect((await get(image.url, await newVisitor(t, territory))).statusCode).toBe(200);
  });

  it('post media is 404 to whoever blocked the author, and to everybody but the uploader while the post is not published', async () => {
    const image = await postedImage('PUBLIC');
    const blocker = await newResident(t, territory);
    const blocked = await t.app.inject({ method: 'POST', url: `/api/v1/users/${author.id}/block`, headers: blocker.headers });
    expect(blocked.statusCode, blocked.body).toBe(204);
    await expectHidden(image.url, blocker);
    expect((await get(image.url, await newResident(t, territory))).statusCode).toBe(200);

    await t.sql(`update post set status = 'PENDING' where id = $1`, [image.postId]);
    await expectHidden(image.url, await newResident(t, territory));
    expect((await get(image.url, author)).statusCode).toBe(200);
  });

  it('unattached media: 404 for anyone else (even a resident), 200 for its uploader', async () => {
    const image = await uploadMedia(t, author, TINY_PNG, 'draft.png');
    await expectHidden(image.url, await newResident(t, territory));
    await expectHidden(image.url, await newAdmin(t));
    expect((await get(image.url, author)).statusCode).toBe(200);
  });

  it('event media: 200 for any signed-in user, 404 for whoever blocked its creator', async () => {
    const cover = await uploadMedia(t, author, TINY_PNG, 'cover.png');
    const startsAt = Date.now() + 7 * 24 * 3600 * 1000;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/events',
      headers: author.headers,
      payload: {
        territoryId: territory.id,
        title: 'Street fair',
        startsAtUtc: new Date(startsAt).toISOString(),
        endsAtUtc: new Date(startsAt + 3600 * 1000).toISOString(),
        latitude: -23.55,
        longitude: -46.63,
        coverMediaId: cover.id,
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().mediaUrls).toEqual([cover.url]);
    const stranger = await newUser(t);
    const streamed = await get(cover.url, stranger);
    expect(streamed.statusCode).toBe(200);
    expect(streamed.rawPayload.equals(TINY_PNG)).toBe(true);
    await t.app.inject({ method: 'POST', url: `/api/v1/users/${author.id}/block`, headers: stranger.headers });
    await expectHidden(cover.url, stranger);
  });

  it('is 401 without a token whatever the media', async () => {
    const image = await postedImage('PUBLIC');
    expect((await t.app.inject({ method: 'GET', url: image.url })).statusCode).toBe(401);
  });
});

describe('DELETE /api/v1/media/{id}', () => {
  it('lets the uploader delete: 204, then the media is gone (row, file, attachment) and the deletion audited', async () => {
    const owner = await newUser(t);
    const image = await uploadMedia(t, owner, TINY_PNG, 'x.png');
    await t.sql(
      `insert into media_attachment (id, created_at_utc, media_asset_id, owner_type, owner_id, display_order) values (gen_random_uuid(), now(), $1, 'POST', gen_random_uuid(), 0)`,
      [image.id],
    );
    const res = await t.app.inject({ method: 'DELETE', url: image.url, headers: owner.headers });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await countRows(t, 'media_asset', 'id = $1', [image.id])).toBe(0);
    expect(await countRows(t, 'media_attachment', 'media_asset_id = $1', [image.id])).toBe(0);
    expect(storedFilesOf(t, owner.id)).toEqual([]);
    expect(await countRows(t, 'audit_entry', "action = 'media.deleted' and subject_id = $1 and actor_user_id = $2", [image.id, owner.id])).toBe(1);
    expect((await t.app.inject({ method: 'GET', url: image.url, headers: owner.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: image.url, headers: owner.headers })).statusCode).toBe(404);
  });

  it("is 403 for someone else's media (nothing changes), 401 without a token, 404 unknown, 400 malformed", async () => {
    const owner = await newUser(t);
    const stranger = await newUser(t);
    const image = await uploadMedia(t, owner, TINY_PNG, 'x.png');
    const forbidden = await t.app.inject({ method: 'DELETE', url: image.url, headers: stranger.headers });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ code: 'FORBIDDEN' });
    expect((await t.app.inject({ method: 'DELETE', url: image.url })).statusCode).toBe(401);
    expect(await countRows(t, 'media_asset', 'id = $1 and deleted_at_utc is null', [image.id])).toBe(1);
    expect(storedFilesOf(t, owner.id)).toHaveLength(1);
    expect(await countRows(t, 'audit_entry', "action = 'media.deleted' and subject_id = $1", [image.id])).toBe(0);

    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/media/${UNKNOWN_ID}`, headers: owner.headers })).statusCode).toBe(404);
    const malformed = await t.app.inject({ method: 'DELETE', url: '/api/v1/media/nope', headers: owner.headers });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});
