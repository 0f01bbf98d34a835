import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seedSystemConfig } from '../../src/db/seed/system-config.js';
import { UPLOAD_TEMP_DIR, UPLOAD_TEMP_PREFIX } from '../../src/http/uploads.js';
import { DEFAULT_PROBE_TIME_LIMIT_MS, probeDuration, setProbeTimeLimit } from '../../src/routers/media/media-probe.js';
import { countRows, newResident, newTerritory, newUser, type TestUser } from '../factories/index.js';
import { mp4HeaderOfSize, padTo, TINY_MP3, TINY_MP4, TINY_PNG, wavFile, wavOfSize } from '../factories/media-files.js';
import { multipartBody, streamingMultipartBody, TINY_PDF } from '../factories/multipart.js';
import { postMedia, storedFilesOf } from '../media/upload.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/*
 * Security finding 10: uploads are streamed to a temporary file with the limit of their sniffed type (never held
 * in memory), each user's stored bytes are capped by Media:UserQuotaBytes, and audio/video metadata are parsed in
 * a worker thread under a time limit.
 */

const MB = 1024 * 1024;
const QUOTA_KEY = 'Media:UserQuotaBytes';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  // As on start: the settings the code reads are seeded.
  await seedSystemConfig(t.deps.orm.em.fork());
});
afterAll(() => t.close());

/** Temporary upload files of this process still on disk. */
const leftoverTempFiles = () => (existsSync(UPLOAD_TEMP_DIR) ? readdirSync(UPLOAD_TEMP_DIR).filter((f) => f.startsWith(UPLOAD_TEMP_PREFIX)) : []);

const mediaRows = (userId: string) => countRows(t, 'media_asset', 'uploaded_by_user_id = $1', [userId]);

/** Sets the quota (null: back to the 1 GiB default). */
const setQuota = (bytes: number | null) => t.sql('update system_config set value = $2 where key = $1', [QUOTA_KEY, String(bytes ?? 1024 * MB)]);

function postStreaming(user: TestUser, head: Buffer, fileBytes: number, fileName: string) {
  const body = streamingMultipartBody({ field: 'file', fileName, head, fileBytes });
  const response = t.app.inject({ method: 'POST', url: '/api/v1/media/upload', payload: body.payload, headers: { ...body.headers, ...user.headers } });
  return { response, pulled: body.pulled };
}

afterEach(async () => {
  setProbeTimeLimit(DEFAULT_PROBE_TIME_LIMIT_MS);
  await setQuota(null);
});

describe('an oversize upload is refused while it streams, never buffered', () => {
  it('a 1 GB body declaring a PNG is refused with FILE_TOO_LARGE after about the image limit has been read', async () => {
    const user = await newUser(t);
    const { response, pulled } = postStreaming(user, TINY_PNG, 1024 * MB, 'huge.png');
    const res = await response;
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 400, code: 'FILE_TOO_LARGE', detail: expect.stringContaining('10 MB for images') });
    // The server stopped reading a little past the 10 MB limit; the remaining ~1 GB was never read.
    expect(pulled()).toBeGreaterThan(10 * MB);
    expect(pulled()).toBeLessThan(12 * MB);
    expect(res.headers.connection).toBe('close');
    expect(await mediaRows(user.id)).toBe(0);
    expect(storedFilesOf(t, user.id)).toEqual([]);
    expect(leftoverTempFiles()).toEqual([]);
  });

  it('a type that is not accepted is refused after its first bytes, whatever its size', async () => {
    const user = await newUser(t);
    const { response, pulled } = postStreaming(user, TINY_PDF, 500 * MB, 'doc.pdf');
    const res = await response;
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE' });
    expect(pulled()).toBeLessThan(1 * MB);
    expect(leftoverTempFiles()).toEqual([]);
  });

  it('parallel oversize uploads keep the memory flat (loose sanity check)', async () => {
    const user = await newUser(t);
    const before = process.memoryUsage().rss;
    const uploads = Array.from({ length: 8 }, () => postStreaming(user, mp4HeaderOfSize(64), 300 * MB, 'big.mp4'));
    const results = await Promise.all(uploads.map((u) => u.response));
    for (const res of results) expect(res.json()).toMatchObject({ code: 'FILE_TOO_LARGE', detail: expect.stringContaining('50 MB for videos') });
    // Without a `purpose` before the file, a video may still be an event's (100 MB): read up to there, no further.
    for (const u of uploads) expect(u.pulled()).toBeLessThan(102 * MB);
    // Buffering would have taken at least 8 x 100 MB; streaming holds a few chunks per upload.
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * MB);
    expect(leftoverTempFiles()).toEqual([]);
  });
});

describe('over a real socket', () => {
  it('the refusal arrives while the client is still sending, and the connection is closed', async () => {
    const user = await newUser(t);
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const body = streamingMultipartBody({ field: 'file', fileName: 'huge.png', head: TINY_PNG, fileBytes: 1024 * MB });
    const result = await new Promise<{ status?: number; connection?: string; body?: string; error?: string }>((resolve) => {
      const req = request(`${address}/api/v1/media/upload`, { method: 'POST', headers: { ...body.headers, ...user.headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, body: text }));
        res.on('error', (error) => resolve({ status: res.statusCode, error: String(error) }));
      });
      req.on('error', (error) => resolve({ error: String(error) }));
      body.payload.pipe(req);
    });
    expect(result.status, JSON.stringify(result)).toBe(400);
    expect(JSON.parse(result.body ?? '{}')).toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect(result.connection).toBe('close');
    // The limit, plus what the socket buffers held: far from the 1 GB the client meant to send.
    expect(body.pulled()).toBeLessThan(100 * MB);
    expect(leftoverTempFiles()).toEqual([]);
  });
});

describe('each sniffed type gets its own limit', () => {
  it('11 MB of audio is stored, 11 MB of image is refused (images 10 MB, audio 20 MB)', async () => {
    const user = await newUser(t);
    const audio = await postMedia(t, user, wavOfSize(11 * MB), 'long.wav');
    expect(audio.statusCode, audio.body).toBe(201);
    expect(audio.json()).toMatchObject({ mediaType: 'AUDIO', mimeType: 'audio/wav' });

    const image = await postMedia(t, user, padTo(TINY_PNG, 11 * MB), 'big.png');
    expect(image.statusCode).toBe(400);
    expect(image.json()).toMatchObject({ code: 'FILE_TOO_LARGE', detail: 'The file is larger than the limit of 10 MB for images.' });
    expect(await mediaRows(user.id)).toBe(1);
    expect(leftoverTempFiles()).toEqual([]);
  });

  it('the document uploads keep their 5 MB limit, refused while streaming', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const body = streamingMultipartBody({ field: 'file', fileName: 'bill.pdf', head: TINY_PDF, fileBytes: 200 * MB });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/memberships/${territory.id}/verify-residency/document/upload`,
      payload: body.payload,
      headers: { ...body.headers, ...resident.headers },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect(body.pulled()).toBeLessThan(7 * MB);
    expect(await countRows(t, 'evidence', 'user_id = $1', [resident.id])).toBe(0);
    expect(leftoverTempFiles()).toEqual([]);
  });
});

describe('temporary files are removed after the request', () => {
  it('after a success, after a refusal by the reader and after a refusal by the service', async () => {
    const user = await newUser(t);
    expect((await postMedia(t, user, TINY_PNG, 'a.png')).statusCode).toBe(201);
    expect(leftoverTempFiles()).toEqual([]);
    expect((await postMedia(t, user, Buffer.from('plain text'), 'a.png')).statusCode).toBe(400);
    expect(leftoverTempFiles()).toEqual([]);
    // Streamed to disk completely, then refused by the service (no duration in the file).
    const broken = await postMedia(t, user, mp4HeaderOfSize(64 * 1024), 'broken.mp4');
    expect(broken.json()).toMatchObject({ code: 'MEDIA_DURATION_UNREADABLE' });
    expect(leftoverTempFiles()).toEqual([]);
    // Refused after the file was read: a title over its limit.
    const titled = await postMedia(t, user, TINY_PNG, 'a.png', { title: 'x'.repeat(5000) });
    expect(titled.statusCode).toBe(400);
    expect(leftoverTempFiles()).toEqual([]);
    expect(await mediaRows(user.id)).toBe(1);
  });
});

describe('per-user storage quota (Media:UserQuotaBytes)', () => {
  it('is a system setting with a 1 GiB default', async () => {
    const [row] = await t.sql<{ value: string }>('select value from system_config where key = $1', [QUOTA_KEY]);
    expect(row?.value).toBe(String(1024 * MB));
  });

  it('an upload past the quota is a 413 STORAGE_QUOTA_EXCEEDED; nothing is written; deleting media frees room', async () => {
    const user = await newUser(t);
    const wav = wavFile(0.5); // 4044 bytes
    await setQuota(wav.length + 1000);
    const first = await postMedia(t, user, wav, 'a.wav');
    expect(first.statusCode, first.body).toBe(201);

    const auditsBefore = await countRows(t, 'audit_entry');
    const second = await postMedia(t, user, wav, 'b.wav');
    expect(second.statusCode).toBe(413);
    expect(second.headers['content-type']).toContain('application/problem+json');
    expect(second.json()).toMatchObject({ status: 413, code: 'STORAGE_QUOTA_EXCEEDED', detail: expect.stringContaining('storage quota') });
    expect(await mediaRows(user.id)).toBe(1);
    expect(storedFilesOf(t, user.id)).toHaveLength(1);
    expect(await countRows(t, 'audit_entry')).toBe(auditsBefore);
    expect(leftoverTempFiles()).toEqual([]);

    // Another user is not affected by this user's usage.
    expect((await postMedia(t, await newUser(t), wav, 'c.wav')).statusCode).toBe(201);

    const deleted = await t.app.inject({ method: 'DELETE', url: `/api/v1/media/${first.json().id}`, headers: user.headers });
    expect(deleted.statusCode).toBe(204);
    expect((await postMedia(t, user, wav, 'd.wav')).statusCode).toBe(201);
  });

  it('documents count too: an identity document past the quota is refused, writing nothing', async () => {
    const user = await newUser(t);
    await setQuota(TINY_PDF.length - 1);
    const body = multipartBody([{ field: 'file', fileName: 'id.pdf', bytes: TINY_PDF }]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/verification/identity/document/upload',
      payload: body.payload,
      headers: { ...body.headers, ...user.headers },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'STORAGE_QUOTA_EXCEEDED' });
    expect(await countRows(t, 'evidence', 'user_id = $1', [user.id])).toBe(0);
    expect(await countRows(t, 'work_item', 'subject_id = $1', [user.id])).toBe(0);
    expect(leftoverTempFiles()).toEqual([]);
  });

  it('concurrent uploads cannot pass together when together they exceed the quota', async () => {
    const user = await newUser(t);
    // Images: no worker in the way, so the uploads reach the quota check together.
    const png = TINY_PNG;
    // Room for two of them, not three.
    await setQuota(png.length * 2 + Math.floor(png.length / 2));
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => postMedia(t, user, png, `r${i}.png`)));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([201, 201, 413, 413, 413, 413, 413, 413, 413, 413]);
    for (const r of results.filter((x) => x.statusCode === 413)) expect(r.json()).toMatchObject({ code: 'STORAGE_QUOTA_EXCEEDED' });
    const [sum] = await t.sql<{ total: string }>(
      'select coalesce(sum(size_bytes), 0) as total from media_asset where uploaded_by_user_id = $1 and deleted_at_utc is null',
      [user.id],
    );
    expect(Number(sum?.total)).toBe(png.length * 2);
    expect(storedFilesOf(t, user.id)).toHaveLength(2);
    expect(leftoverTempFiles()).toEqual([]);
  });
});

describe('audio and video metadata are parsed in a worker under a time limit', () => {
  it('reads durations in the worker', async () => {
    const path = join(t.deps.config.dataDir, 'probe.mp4');
    await writeFile(path, TINY_MP4);
    expect(await probeDuration({ path, mimeType: 'video/mp4', sizeBytes: TINY_MP4.length })).toEqual({ kind: 'duration', seconds: 2 });
    await writeFile(path, mp4HeaderOfSize(4096));
    expect(await probeDuration({ path, mimeType: 'video/mp4', sizeBytes: 4096 })).toEqual({ kind: 'unreadable' });
  });

  it('a parse that takes longer than the limit ends the worker and the file is refused with a 400, never a 500', async () => {
    const user = await newUser(t);
    setProbeTimeLimit(1);
    const res = await postMedia(t, user, TINY_MP3, 'slow.mp3');
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, code: 'MEDIA_ANALYSIS_TIMEOUT' });
    expect(await mediaRows(user.id)).toBe(0);
    expect(storedFilesOf(t, user.id)).toEqual([]);
    expect(leftoverTempFiles()).toEqual([]);

    // The time limit is per probe: with the default one the same file is stored.
    setProbeTimeLimit(DEFAULT_PROBE_TIME_LIMIT_MS);
    const ok = await postMedia(t, user, TINY_MP3, 'slow.mp3');
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json()).toMatchObject({ mediaType: 'AUDIO', durationSeconds: expect.any(Number) });
  });

  it('a probe is ended at its time limit (the worker is terminated, its slot released)', async () => {
    const path = join(t.deps.config.dataDir, 'probe.mp3');
    await writeFile(path, TINY_MP3);
    const started = Date.now();
    expect(await probeDuration({ path, mimeType: 'audio/mpeg', sizeBytes: TINY_MP3.length }, 1)).toEqual({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(DEFAULT_PROBE_TIME_LIMIT_MS);
  });
});
