import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

export interface MultipartFilePart {
  field: string;
  fileName: string;
  /** What the client claims; the server sniffs the bytes and ignores it. */
  contentType?: string;
  bytes: Buffer;
}

/**
 * A multipart/form-data body built by hand for `app.inject`: `{ payload, headers }`. Text fields first, then files,
 * as browsers send them.
 */
export function multipartBody(files: MultipartFilePart[], fields: Record<string, string> = {}) {
  const boundary = `----test${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const file of files) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.fileName}"\r\n` +
          `Content-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      file.bytes,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** A 1x1 transparent PNG. */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** JPEG start-of-image and JFIF header: enough for content sniffing. */
export const TINY_JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]),
  Buffer.alloc(64, 0),
  Buffer.from([0xff, 0xd9]),
]);

/** A minimal one-page PDF. */
export const TINY_PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n' +
    '3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
);

/** `size` bytes that start like a PNG (the rest is padding): for size-limit tests. */
export const pngOfSize = (size: number) => Buffer.concat([TINY_PNG, Buffer.alloc(Math.max(0, size - TINY_PNG.length), 0)]);

/**
 * A multipart/form-data body of one file that is generated while it is read, never held whole: `head` followed by
 * zeros up to `fileBytes`. `pulled()` says how many bytes the server has read so far (a server that stops reading
 * early leaves most of the body ungenerated).
 */
export function streamingMultipartBody(file: { field: string; fileName: string; head: Buffer; fileBytes: number }) {
  const boundary = `----test${randomBytes(12).toString('hex')}`;
  const preamble = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.fileName}"\r\n` + 'Content-Type: application/octet-stream\r\n\r\n',
  );
  const trailer = Buffer.from(`\r\n--${boundary}--\r\n`);
  const zeros = Buffer.alloc(64 * 1024, 0);
  let pulled = 0;
  let fileSent = 0;
  let stage: 'preamble' | 'head' | 'zeros' | 'trailer' | 'done' = 'preamble';
  const payload = new Readable({
    read() {
      let chunk: Buffer | null;
      if (stage === 'preamble') {
        chunk = preamble;
        stage = 'head';
      } else if (stage === 'head') {
        chunk = file.head.subarray(0, file.fileBytes);
        fileSent = chunk.length;
        stage = fileSent < file.fileBytes ? 'zeros' : 'trailer';
      } else if (stage === 'zeros') {
        chunk = zeros.subarray(0, Math.min(zeros.length, file.fileBytes - fileSent));
        fileSent += chunk.length;
        if (fileSent >= file.fileBytes) stage = 'trailer';
      } else if (stage === 'trailer') {
        chunk = trailer;
        stage = 'done';
      } else {
        chunk = null;
      }
      if (chunk) pulled += chunk.length;
      this.push(chunk);
    },
  });
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, pulled: () => pulled };
}
