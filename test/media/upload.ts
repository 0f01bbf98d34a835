import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { TestUser } from '../factories/index.js';
import { multipartBody } from '../factories/multipart.js';
import type { TestApp } from '../setup/test-app.js';

/** POST /api/v1/media/upload with one file (and optional text fields); the raw response. */
export function postMedia(t: TestApp, user: TestUser | null, bytes: Buffer, fileName: string, fields: Record<string, string> = {}, contentType?: string) {
  const body = multipartBody([{ field: 'file', fileName, bytes, contentType }], fields);
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/media/upload',
    payload: body.payload,
    headers: { ...body.headers, ...(user?.headers ?? {}) },
  });
}

/** Uploads and expects 201; the MediaAsset body. */
export async function uploadMedia(t: TestApp, user: TestUser, bytes: Buffer, fileName = 'file.bin') {
  const res = await postMedia(t, user, bytes, fileName);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; url: string; mimeType: string; mediaType: string; sizeBytes: number; durationSeconds: number | null };
}

/** Files a user has in storage (uploads are stored under media/<userId>/). */
export function storedFilesOf(t: TestApp, userId: string): string[] {
  const dir = join(t.deps.config.dataDir, 'files', 'media', userId);
  return existsSync(dir) ? readdirSync(dir) : [];
}
