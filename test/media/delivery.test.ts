import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdmin, newUser, type TestUser } from '../factories/index.js';
import { multipartBody, TINY_PDF } from '../factories/multipart.js';
import { TINY_MP3 } from '../factories/media-files.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/** Media and evidence downloads as a browser's <video> or <audio> element reads them: ranges and validators. */
let t: TestApp;
let owner: TestUser;
let mediaUrl: string;
beforeAll(async () => {
  t = await createTestApp();
  owner = await newUser(t);
  const upload = multipartBody([{ field: 'file', fileName: 'a.mp3', contentType: 'audio/mpeg', bytes: TINY_MP3 }]);
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/media/upload', headers: { ...owner.headers, ...upload.headers }, payload: upload.payload });
  expect(res.statusCode).toBe(201);
  mediaUrl = `/api/v1/media/${res.json().id}`;
});
afterAll(() => t.close());

const get = (url: string, user: TestUser, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers: { ...user.headers, ...headers } });
const size = TINY_MP3.length;

describe('GET /api/v1/media/{id}: ranges, ETag, caching', () => {
  it('the whole file: 200, Accept-Ranges, a strong ETag, private caching', async () => {
    const res = await get(mediaUrl, owner);
    expect(res.statusCode).toBe(200);
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers.etag).toMatch(/^"[0-9a-f-]{36}"$/);
    expect(res.headers['cache-control']).toBe('private, max-age=300');
    expect(res.rawPayload.equals(TINY_MP3)).toBe(true);
  });

  it('one range: 206 with Content-Range and exactly those bytes (first, middle, open-ended, suffix)', async () => {
    for (const [header, start, end] of [
      ['bytes=0-9', 0, 9],
      ['bytes=10-19', 10, 19],
      [`bytes=${size - 5}-`, size - 5, size - 1],
      ['bytes=-7', size - 7, size - 1],
      [`bytes=5-${size + 100}`, 5, size - 1],
    ] as const) {
      const res = await get(mediaUrl, owner, { range: header });
      expect(res.statusCode, header).toBe(206);
      expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${size}`);
      expect(res.headers['content-length']).toBe(String(end - start + 1));
      expect(res.rawPayload.equals(TINY_MP3.subarray(start, end + 1))).toBe(true);
    }
  });

  it('a range outside the file: 416 problem with Content-Range bytes */size', async () => {
    const res = await get(mediaUrl, owner, { range: `bytes=${size}-` });
    expect(res.statusCode).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${size}`);
    expect(res.json().code).toBe('RANGE_NOT_SATISFIABLE');
  });

  it('a malformed or multiple range is ignored: the whole file', async () => {
    for (const header of ['bytes=abc', 'items=0-1', 'bytes=0-1,4-5']) {
      const res = await get(mediaUrl, owner, { range: header });
      expect(res.statusCode, header).toBe(200);
      expect(res.rawPayload.length).toBe(size);
    }
  });

  it('If-None-Match with the ETag: 304 without a body; If-Range with another tag: the whole file', async () => {
    const etag = (await get(mediaUrl, owner)).headers.etag as string;
    const notModified = await get(mediaUrl, owner, { 'if-none-match': etag });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.rawPayload.length).toBe(0);
    expect((await get(mediaUrl, owner, { 'if-none-match': '"other"' })).statusCode).toBe(200);
    expect((await get(mediaUrl, owner, { range: 'bytes=0-1', 'if-range': '"other"' })).statusCode).toBe(200);
    expect((await get(mediaUrl, owner, { range: 'bytes=0-1', 'if-range': etag })).statusCode).toBe(206);
  });

  it('someone who may not see the media gets 404, with or without a range', async () => {
    const stranger = await newUser(t);
    expect((await get(mediaUrl, stranger, { range: 'bytes=0-1' })).statusCode).toBe(404);
  });
});

describe('evidence downloads support ranges and validators too', () => {
  it('206 for a range of an identity document; no-store caching', async () => {
    const user = await newUser(t);
    const upload = multipartBody([{ field: 'file', fileName: 'id.pdf', contentType: 'application/pdf', bytes: TINY_PDF }]);
    const sent = await t.app.inject({
      method: 'POST',
      url: '/api/v1/verification/identity/document/upload',
      headers: { ...user.headers, ...upload.headers },
      payload: upload.payload,
    });
    expect(sent.statusCode).toBe(201);
    const admin = await newAdmin(t);
    const url = `/api/v1/admin/evidences/${sent.json().evidenceId}/download`;
    const res = await get(url, admin, { range: 'bytes=0-3' });
    expect(res.statusCode).toBe(206);
    expect(res.rawPayload.toString('latin1')).toBe('%PDF');
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename=/);
  });
});
