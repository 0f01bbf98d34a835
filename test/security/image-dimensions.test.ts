import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newUser } from '../factories/index.js';
import { TINY_JPEG_8X8, TINY_PNG, TINY_WEBP } from '../factories/media-files.js';
import { multipartBody } from '../factories/multipart.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** The tiny PNG with its header claiming other dimensions (a decompression bomb costs a few bytes). */
function pngDeclaring(width: number, height: number): Buffer {
  const bytes = Buffer.from(TINY_PNG);
  bytes.writeUInt32BE(width, 16);
  bytes.writeUInt32BE(height, 20);
  return bytes;
}

async function upload(bytes: Buffer, fileName: string) {
  const user = await newUser(t);
  const body = multipartBody([{ field: 'file', fileName, bytes }]);
  return t.app.inject({ method: 'POST', url: '/api/v1/media/upload', headers: { ...user.headers, ...body.headers }, payload: body.payload });
}

describe('images declaring huge dimensions are refused (finding 10, in part)', () => {
  it('a small PNG declaring 30000x30000 pixels is a 400 and nothing is stored', async () => {
    const before = await countRows(t, 'media_asset');
    const res = await upload(pngDeclaring(30_000, 30_000), 'bomb.png');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'IMAGE_TOO_LARGE' });
    expect(await countRows(t, 'media_asset')).toBe(before);
    expect((await upload(pngDeclaring(8000, 8000), 'wide.png')).json()).toMatchObject({ code: 'IMAGE_TOO_LARGE' });
  });

  it('ordinary images of each accepted type are stored', async () => {
    for (const [bytes, name] of [
      [TINY_PNG, 'a.png'],
      [TINY_JPEG_8X8, 'b.jpg'],
      [TINY_WEBP, 'c.webp'],
    ] as const) {
      expect((await upload(bytes, name)).statusCode, name).toBe(201);
    }
  });
});
