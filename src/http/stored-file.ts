/**
 * Streams a stored file the way browsers and media players expect: `Accept-Ranges`, one byte range per request
 * (206 with `Content-Range`; 416 with `Content-Range: bytes *\/size` for a range outside the file), a strong `ETag`
 * with `If-None-Match` (304) and `If-Range`. Several ranges in one request are answered with the whole file, which
 * RFC 9110 allows. A `<video>` element can seek with this.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StoredFile } from '../platform/storage.js';
import { sendError } from './errors.js';

export interface StoredFileResponse {
  contentType: string;
  /** `inline; filename=...` or `attachment; filename=...`. */
  disposition: string;
  /** Strong validator, quoted. */
  etag: string;
  cacheControl: string;
}

type ByteRange = { start: number; end: number };

/** The one range of a `Range` header, 'unsatisfiable', or null to send the whole file. */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match) return null;
  const [, from, to] = match;
  if (from === '' && to === '') return null;
  if (from === '') {
    const suffix = Number(to);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

const matches = (header: string | undefined, etag: string) =>
  header !== undefined && header.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*');

export function sendStoredFile(request: FastifyRequest, reply: FastifyReply, file: StoredFile, response: StoredFileResponse) {
  reply
    .header('Content-Type', response.contentType)
    .header('Content-Disposition', response.disposition)
    .header('Cache-Control', response.cacheControl)
    .header('ETag', response.etag)
    .header('Accept-Ranges', 'bytes');
  if (matches(request.headers['if-none-match'], response.etag)) return reply.status(304).send();
  const ifRange = request.headers['if-range'];
  const range = ifRange === undefined || ifRange === response.etag ? parseRange(request.headers.range, file.sizeBytes) : null;
  if (range === 'unsatisfiable') {
    return sendError(request, reply, {
      status: 416,
      code: 'RANGE_NOT_SATISFIABLE',
      detail: `The range is outside the file of ${file.sizeBytes} bytes.`,
      headers: { 'Content-Range': `bytes */${file.sizeBytes}` },
    });
  }
  if (range) {
    return reply
      .status(206)
      .header('Content-Range', `bytes ${range.start}-${range.end}/${file.sizeBytes}`)
      .header('Content-Length', String(range.end - range.start + 1))
      .send(file.read(range));
  }
  return reply.status(200).header('Content-Length', String(file.sizeBytes)).send(file.read());
}
