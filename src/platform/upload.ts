import { open, rm } from 'node:fs/promises';

/**
 * An uploaded file as services receive it: streamed to a temporary file by src/http/uploads.ts, its type sniffed
 * from the first bytes and its size checked against that type's limit. The bytes are never held in memory: read
 * them from `path` (storage copies the file). The temporary file is removed after the request
 * (`withUpload`/`discardUpload` in src/http/uploads.ts).
 */
export interface Upload {
  /** Absolute path of the temporary file holding the bytes. */
  path: string;
  sizeBytes: number;
  /** Sniffed from the content; the client's Content-Type is never trusted. */
  mimeType: string;
  /** Extension matching the sniffed type, without the dot. */
  ext: string;
  /** The client's file name, sanitized (no path, tags or control characters), or null. */
  fileName: string | null;
  /** Text fields sent beside the file (first value of each); callers validate them with zod. */
  fields: Record<string, string>;
}

/** Removes the upload's temporary file (idempotent; never throws). */
export async function discardUpload(upload: Pick<Upload, 'path'>): Promise<void> {
  await rm(upload.path, { force: true }).catch(() => undefined);
}

/** The first `maxBytes` of the upload (fewer when the file is shorter): headers of images, for instance. */
export async function readUploadHead(upload: Pick<Upload, 'path'>, maxBytes: number): Promise<Buffer> {
  const handle = await open(upload.path, 'r');
  try {
    const buffer = Buffer.alloc(maxBytes);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
