import { existsSync, readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UPLOAD_TEMP_DIR, UPLOAD_TEMP_PREFIX } from '../../src/http/uploads.js';
import { CHAT_VIDEO_REFUSED } from '../../src/routers/media/media-attach.js';
import { countRows, newResident, newTerritory, type TestTerritory, type TestUser } from '../factories/index.js';
import { ELEVEN_MINUTE_MP4, SIX_MINUTE_MP4, TINY_MP4, TINY_PNG, TINY_WEBM, wavOfSize } from '../factories/media-files.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { storedFilesOf } from './upload.js';

/*
 * POST /api/v1/media/upload with the optional `purpose` field: "limits vary by content" (spec, Media limits). With
 * it, that section's global limits apply (events: video 100 MB), sent before or after the file; without it, the
 * general limits (video 50 MB). Every body is generated while it is read (a 101 MB file is never held in memory).
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const MB = 1024 * 1024;

type Part = { name: string; value: string } | { file: Buffer; fileBytes?: number; fileName?: string };

/**
 * A multipart body of text fields and one `file` part, in the given order, generated while it is read: the file is
 * `file` followed by zeros up to `fileBytes`. `pulled()` is how much of the body the server has read.
 */
function streamingForm(parts: Part[]) {
  const boundary = `----test${randomBytes(12).toString('hex')}`;
  const zeros = Buffer.alloc(256 * 1024, 0);
  function* chunks(): Generator<Buffer> {
    for (const part of parts) {
      if ('name' in part) {
        yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`);
        continue;
      }
      yield Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${part.fileName ?? 'file.bin'}"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
      );
      const total = part.fileBytes ?? part.file.length;
      yield part.file.subarray(0, total);
      for (let sent = Math.min(part.file.length, total); sent < total; sent += zeros.length) yield zeros.subarray(0, Math.min(zeros.length, total - sent));
      yield Buffer.from('\r\n');
    }
    yield Buffer.from(`--${boundary}--\r\n`);
  }
  const source = chunks();
  let pulled = 0;
  const payload = new Readable({
    read() {
      const next = source.next();
      if (next.done) return void this.push(null);
      pulled += next.value.length;
      this.push(next.value);
    },
  });
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, pulled: () => pulled };
}

async function upload(user: TestUser, parts: Part[]) {
  const form = streamingForm(parts);
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/media/upload', payload: form.payload, headers: { ...form.headers, ...user.headers } });
  return { res, pulled: form.pulled() };
}

const mp4 = (bytes: number, fileName = 'v.mp4'): Part => ({ file: TINY_MP4, fileBytes: bytes, fileName });
const purpose = (value: string): Part => ({ name: 'purpose', value });

/** Temporary upload files of this test process: none may be left once a request is answered. */
const tempFiles = () => (existsSync(UPLOAD_TEMP_DIR) ? readdirSync(UPLOAD_TEMP_DIR).filter((f) => f.startsWith(UPLOAD_TEMP_PREFIX)) : []);
const mediaRows = (userId: string) => countRows(t, 'media_asset', 'uploaded_by_user_id = $1', [userId]);

const DAY = 24 * 3600 * 1000;
function createEvent(user: TestUser, territory: { id: string }, media: { coverMediaId?: string; additionalMediaIds?: string[] }) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/events',
    headers: user.headers,
    payload: {
      territoryId: territory.id,
      title: 'Film night',
      startsAtUtc: new Date(Date.now() + 7 * DAY).toISOString(),
      latitude: -23.55,
      longitude: -46.63,
      ...media,
    },
  });
}

/** A refusal: 400 problem with this code, no row, no stored file. */
async function expectRefused(user: TestUser, res: { statusCode: number; body: string; json: () => unknown }, code: string) {
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json()).toMatchObject({ status: 400, code });
  expect(await mediaRows(user.id)).toBe(0);
  expect(storedFilesOf(t, user.id)).toEqual([]);
}

describe('POST /api/v1/media/upload with purpose', () => {
  let territory: TestTerritory;
  beforeAll(async () => {
    territory = await newTerritory(t);
  });
  afterEach(() => {
    expect(tempFiles()).toEqual([]);
  });

  it('takes a 60 MB event video (purpose before the file), which is then attachable to an event', async () => {
    const user = await newResident(t, territory);
    const { res } = await upload(user, [purpose('events'), mp4(60 * MB)]);
    expect(res.statusCode, res.body).toBe(201);
    const asset = res.json() as { id: string; sizeBytes: number; mediaType: string; durationSeconds: number };
    expect(asset).toMatchObject({ sizeBytes: 60 * MB, mediaType: 'VIDEO', durationSeconds: expect.closeTo(2, 1) });
    expect(tempFiles()).toEqual([]);

    const event = await createEvent(user, territory, { additionalMediaIds: [asset.id] });
    expect(event.statusCode, event.body).toBe(201);
    expect(event.json()).toMatchObject({ additionalMediaIds: [asset.id] });
  });

  it('takes it the same with purpose after the file, as a cover; exactly 100 MB too (the limit is inclusive)', async () => {
    const user = await newResident(t, territory);
    const { res } = await upload(user, [mp4(60 * MB), purpose('events')]);
    expect(res.statusCode, res.body).toBe(201);
    const event = await createEvent(user, territory, { coverMediaId: res.json().id });
    expect(event.statusCode, event.body).toBe(201);

    const edge = await upload(user, [mp4(100 * MB), { name: 'title', value: 'Trailer' }, purpose('events')]);
    expect(edge.res.statusCode, edge.res.body).toBe(201);
    expect(edge.res.json()).toMatchObject({ sizeBytes: 100 * MB });
  });

  it('without purpose keeps the general limit: a 60 MB video is 400 FILE_TOO_LARGE (50 MB for videos)', async () => {
    const user = await newResident(t, territory);
    const { res } = await upload(user, [mp4(60 * MB)]);
    await expectRefused(user, res, 'FILE_TOO_LARGE');
    expect(res.json()).toMatchObject({ detail: 'The file is larger than the limit of 50 MB for videos.' });
    // Other text fields do not change it; exactly 50 MB still passes the size check (the limit is inclusive).
    const titled = await upload(user, [mp4(50 * MB + 1), { name: 'title', value: 'x' }]);
    await expectRefused(user, titled.res, 'FILE_TOO_LARGE');
    const edge = await upload(user, [{ name: 'title', value: 'edge' }, mp4(50 * MB)]);
    expect(edge.res.statusCode, edge.res.body).toBe(201);
  });

  it('refuses a 101 MB event video; with purpose before the file, the rest of a larger one is left unread', async () => {
    const user = await newResident(t, territory);
    const { res } = await upload(user, [purpose('events'), mp4(101 * MB)]);
    await expectRefused(user, res, 'FILE_TOO_LARGE');
    expect(res.json()).toMatchObject({ detail: 'The file is larger than the limit of 100 MB for videos in events.' });
    expect(res.headers.connection).toBe('close');
    const huge = await upload(user, [purpose('events'), mp4(300 * MB)]);
    await expectRefused(user, huge.res, 'FILE_TOO_LARGE');
    expect(huge.pulled).toBeLessThan(102 * MB);
    // A declared section's lower limit stops the stream as early: posts video 50 MB.
    const posts = await upload(user, [purpose('posts'), mp4(300 * MB)]);
    await expectRefused(user, posts.res, 'FILE_TOO_LARGE');
    expect(posts.res.json()).toMatchObject({ detail: 'The file is larger than the limit of 50 MB for videos in posts.' });
    expect(posts.pulled).toBeLessThan(52 * MB);
  });

  it('refuses a 101 MB video with purpose after the file, and one without purpose', async () => {
    const user = await newResident(t, territory);
    const after = await upload(user, [mp4(101 * MB), purpose('events')]);
    await expectRefused(user, after.res, 'FILE_TOO_LARGE');
    const none = await upload(user, [mp4(101 * MB)]);
    await expectRefused(user, none.res, 'FILE_TOO_LARGE');
    // The purpose may still follow the file: it streams up to the largest video limit (100 MB), then stops.
    const huge = await upload(user, [mp4(300 * MB)]);
    await expectRefused(user, huge.res, 'FILE_TOO_LARGE');
    expect(huge.res.json()).toMatchObject({
      detail: 'The file is larger than the limit of 100 MB for videos whatever the purpose (50 MB for videos without one).',
    });
    expect(huge.pulled).toBeLessThan(102 * MB);
  });

  it("applies the declared section's own limit, before or after the file: posts video 50 MB, posts audio 10 MB", async () => {
    const user = await newResident(t, territory);
    for (const parts of [
      [purpose('posts'), mp4(60 * MB)],
      [mp4(60 * MB), purpose('posts')],
    ]) {
      const { res } = await upload(user, parts);
      await expectRefused(user, res, 'FILE_TOO_LARGE');
      expect(res.json()).toMatchObject({ detail: 'The file is larger than the limit of 50 MB for videos in posts.' });
    }
    // 15 MB of audio: within the general 20 MB, over the posts' 10 MB.
    const audio = wavOfSize(15 * MB);
    const general = await upload(user, [{ file: audio, fileName: 'a.wav' }]);
    expect(general.res.statusCode, general.res.body).toBe(201);
    const posts = await upload(user, [{ file: audio, fileName: 'a.wav' }, purpose('posts')]);
    expect(posts.res.statusCode).toBe(400);
    expect(posts.res.json()).toMatchObject({ code: 'FILE_TOO_LARGE', detail: 'The file is larger than the limit of 10 MB for audio in posts.' });
  });

  it('refuses a type the section never takes, with the attach wording, before or after the file', async () => {
    const user = await newResident(t, territory);
    for (const parts of [
      [purpose('chat'), mp4(TINY_MP4.length)],
      [mp4(TINY_MP4.length), purpose('chat')],
    ]) {
      const { res } = await upload(user, parts);
      await expectRefused(user, res, 'MEDIA_TYPE_NOT_ALLOWED');
      expect(res.json()).toMatchObject({ detail: CHAT_VIDEO_REFUSED, errors: [{ field: 'file', message: CHAT_VIDEO_REFUSED }] });
    }
    // Items take MP4 video only.
    const webm = await upload(user, [purpose('marketplace'), { file: TINY_WEBM, fileName: 'v.webm' }]);
    await expectRefused(user, webm.res, 'MEDIA_TYPE_NOT_ALLOWED');
    expect(webm.res.json()).toMatchObject({ detail: 'video/webm is not allowed for items.' });
    // An image in chat is fine.
    const image = await upload(user, [purpose('chat'), { file: TINY_PNG, fileName: 'a.png' }]);
    expect(image.res.statusCode, image.res.body).toBe(201);
  });

  it("applies the section's duration limit: a 6-minute video fits events, not posts; 11 minutes fits neither", async () => {
    const user = await newResident(t, territory);
    const six = { file: SIX_MINUTE_MP4, fileName: 'six.mp4' };
    const posts = await upload(user, [purpose('posts'), six]);
    await expectRefused(user, posts.res, 'MEDIA_TOO_LONG');
    expect(posts.res.json()).toMatchObject({ detail: 'The video is longer than the limit of 5 minutes for posts.' });
    const eleven = await upload(user, [{ file: ELEVEN_MINUTE_MP4, fileName: 'eleven.mp4' }, purpose('events')]);
    await expectRefused(user, eleven.res, 'MEDIA_TOO_LONG');
    expect(eleven.res.json()).toMatchObject({ detail: 'The video is longer than the limit of 10 minutes for events.' });
    // Without purpose, durations are left to the attach, as before.
    const general = await upload(user, [{ file: ELEVEN_MINUTE_MP4, fileName: 'eleven.mp4' }]);
    expect(general.res.statusCode, general.res.body).toBe(201);
    const events = await upload(user, [six, purpose('events')]);
    expect(events.res.statusCode, events.res.body).toBe(201);
  });

  it('is 400 naming purpose for an unknown value, before the file (read no further) or after it', async () => {
    const user = await newResident(t, territory);
    for (const value of ['event', 'EVENTS', '', 'feed']) {
      const before = await upload(user, [purpose(value), mp4(60 * MB)]);
      await expectRefused(user, before.res, 'VALIDATION_FAILED');
      expect(before.res.json()).toMatchObject({ errors: [{ field: 'purpose', message: 'must be one of posts, events, marketplace, chat' }] });
      expect(before.pulled).toBeLessThan(60 * MB);
    }
    const after = await upload(user, [mp4(TINY_MP4.length), purpose('stories')]);
    await expectRefused(user, after.res, 'VALIDATION_FAILED');
    expect(after.res.json()).toMatchObject({ errors: [{ field: 'purpose', message: 'must be one of posts, events, marketplace, chat' }] });
  });
});
