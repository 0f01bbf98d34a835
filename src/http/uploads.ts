import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { fileTypeFromBuffer } from 'file-type';
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError, badRequest, validationFailed } from '../platform/problems.js';
import { sanitizeText } from '../platform/text.js';
import { discardUpload, type Upload } from '../platform/upload.js';

/** A byte limit, optionally naming what it applies to in the refusal ("images": "... of 10 MB for images"). */
export type UploadSizeLimit = number | { bytes: number; of: string };

export interface UploadOptions {
  /** Name of the one file field to read (e.g. `file`). */
  field: string;
  /**
   * The largest file accepted: one limit for every type, or the limit of the type sniffed from the first bytes
   * (called once, before the rest of the file is read; it may throw an `AppError` to refuse the file at once). It
   * also receives the text fields received so far: those sent before the file, not those after it. A caller whose
   * limit depends on a field must therefore bound the stream by the largest limit the field could give while that
   * field is still missing, and apply the exact one when every part is in (`withUpload`'s `use`).
   */
  maxBytes: UploadSizeLimit | ((mimeType: string, fieldsSoFar: Readonly<Record<string, string>>) => UploadSizeLimit);
  /** MIME types accepted, as sniffed from the bytes (e.g. `image/png`, `application/pdf`). */
  allowedMimeTypes: readonly string[];
  /**
   * The largest limit `maxBytes` may give, when a function's may reach the parser's own cap (the app-wide multipart
   * `fileSize`, 100 MB): the cap is then set `PARSER_CAP_MARGIN` above it for this request. The guard's refusal
   * stops reading the body; at the parser's cap the file would only be truncated, and the whole rest of the body
   * read, before the refusal. Without it the app-wide cap stays.
   */
  largestLimitBytes?: number;
  /** Largest text field value in bytes (default 10 000). */
  maxFieldBytes?: number;
  /** Directory of the temporary files (default `UPLOAD_TEMP_DIR`). */
  tempDir?: string;
}

/** Where uploads are streamed to before they are stored: one file per upload, removed after the request. */
export const UPLOAD_TEMP_DIR = join(tmpdir(), 'territory-uploads');
/** Every temporary file of this process starts with it (tests look for leftovers of their own process). */
export const UPLOAD_TEMP_PREFIX = `upload-${process.pid}-`;

/** What `file-type` reads to recognise a type: the type is known after these first bytes. */
export const SNIFF_BYTES = 4100;

const MAX_TEXT_FIELDS = 20;

function formatBytes(bytes: number) {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`;
}

const limitBytes = (limit: UploadSizeLimit) => (typeof limit === 'number' ? limit : limit.bytes);

function tooLarge(limit: UploadSizeLimit | null) {
  if (limit === null) return badRequest('The file is too large.', 'FILE_TOO_LARGE');
  const of = typeof limit === 'number' ? '' : ` for ${limit.of}`;
  return badRequest(`The file is larger than the limit of ${formatBytes(limitBytes(limit))}${of}.`, 'FILE_TOO_LARGE');
}

/** Multipart parser errors are the client's fault: they become 400 problems, never 500. */
function parserError(error: unknown, options: UploadOptions) {
  const code = (error as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') {
    // The parser's own cap (the app-wide multipart limit), should it ever be lower than a type's limit.
    return tooLarge(typeof options.maxBytes === 'function' ? null : options.maxBytes);
  }
  if (code === 'FST_FILES_LIMIT') return badRequest(`Send exactly one file, in the "${options.field}" field.`, 'TOO_MANY_FILES');
  if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') return badRequest('The form has too many fields.', 'TOO_MANY_FIELDS');
  return badRequest('The multipart/form-data body is malformed.', 'INVALID_MULTIPART');
}

function cleanFileName(name: string | undefined): string | null {
  if (!name) return null;
  const base = name.replace(/\\/g, '/').split('/').pop() ?? '';
  const clean = sanitizeText(base)
    .replace(/["\r\n]/g, '')
    .slice(0, 255);
  return clean || null;
}

interface Sniffed {
  mime: string;
  ext: string;
  limit: UploadSizeLimit;
}

/** The type of the first bytes, refused unless allowed, and the byte limit of that type. */
async function sniff(head: Buffer, options: UploadOptions, fields: Readonly<Record<string, string>>): Promise<Sniffed> {
  const found = await fileTypeFromBuffer(head);
  if (!found || !options.allowedMimeTypes.includes(found.mime)) {
    throw badRequest(`Unsupported file type${found ? ` ${found.mime}` : ''}; allowed: ${options.allowedMimeTypes.join(', ')}.`, 'UNSUPPORTED_FILE_TYPE');
  }
  const limit = typeof options.maxBytes === 'function' ? options.maxBytes(found.mime, fields) : options.maxBytes;
  return { mime: found.mime, ext: found.ext, limit };
}

/**
 * Passes the file through to its temporary file: holds back the first `SNIFF_BYTES` until the type is known (and
 * refused at once when not allowed), then counts, and fails as soon as the count passes that type's limit. At most
 * the sniffed head and one chunk are in memory at any time.
 */
class UploadGuard extends Transform {
  sniffed: Sniffed | null = null;
  sizeBytes = 0;
  private head: Buffer[] = [];
  private headBytes = 0;

  constructor(
    private readonly options: UploadOptions,
    private readonly fields: Readonly<Record<string, string>>,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
    this.sizeBytes += chunk.length;
    if (this.sniffed) {
      if (this.sizeBytes > limitBytes(this.sniffed.limit)) return done(tooLarge(this.sniffed.limit));
      return done(null, chunk);
    }
    this.head.push(chunk);
    this.headBytes += chunk.length;
    if (this.headBytes < SNIFF_BYTES) return done();
    this.release().then(() => done(), done);
  }

  override _flush(done: TransformCallback) {
    if (this.sniffed || this.headBytes === 0) return done();
    this.release().then(() => done(), done);
  }

  private async release() {
    const head = Buffer.concat(this.head);
    this.head = [];
    this.sniffed = await sniff(head, this.options, { ...this.fields });
    if (this.sizeBytes > limitBytes(this.sniffed.limit)) throw tooLarge(this.sniffed.limit);
    this.push(head);
  }
}

/**
 * Streams one file part to a new temporary file; the file is removed again when anything fails. `fields` are the
 * text fields received before this file (its limit may depend on them).
 */
async function receiveFile(file: Readable & { truncated?: boolean }, options: UploadOptions, fields: Readonly<Record<string, string>>) {
  const dir = options.tempDir ?? UPLOAD_TEMP_DIR;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${UPLOAD_TEMP_PREFIX}${randomUUID()}`);
  const guard = new UploadGuard(options, fields);
  try {
    await pipeline(file, guard, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
    if (file.truncated) throw tooLarge(guard.sniffed?.limit ?? null);
  } catch (error) {
    await rm(path, { force: true }).catch(() => undefined);
    throw error;
  }
  return { path, sizeBytes: guard.sizeBytes, sniffed: guard.sniffed };
}

/**
 * How far above `largestLimitBytes` the parser's cap is set: more than the parser reads ahead of the guard (a few
 * chunks), so that the guard has refused, and the parser stopped, before the cap truncates anything.
 */
const PARSER_CAP_MARGIN = 1024 * 1024;

/** The parser's file size cap of this request: a margin above `largestLimitBytes`, else the app-wide one. */
const parserFileCap = (options: UploadOptions) => (options.largestLimitBytes === undefined ? {} : { fileSize: options.largestLimitBytes + PARSER_CAP_MARGIN });

const maxFieldBytesOf = (options: UploadOptions) => options.maxFieldBytes ?? 10_000;

/**
 * One text part into `fields`, refused (400 naming the field) rather than read wrong: a value the parser cut at
 * `maxFieldBytes` (it would be stored cut short), a name sent twice (which of the two was meant?), and a part in the
 * file field without a filename (the parser reads it as text: the file would be lost without a word).
 */
function takeTextField(part: MultipartValue, fields: Record<string, string>, options: UploadOptions) {
  const name = part.fieldname;
  if (name === options.field) throw validationFailed(name, 'send each file as a file part, with a filename');
  if (part.valueTruncated) throw validationFailed(name, `the value is longer than ${maxFieldBytesOf(options)} bytes`);
  if (Object.hasOwn(fields, name)) throw validationFailed(name, 'the field is sent more than once');
  if (typeof part.value === 'string') fields[name] = part.value;
}

/** A refusal sent while the client is still sending: the connection is closed after it, the rest never read. */
function closingConnection(error: AppError, request: FastifyRequest) {
  if (request.raw.complete) return error;
  return new AppError(error.code, error.problemCode, error.message, {
    errors: error.errors,
    headers: { ...error.headers, Connection: 'close' },
  });
}

/**
 * Reads a multipart/form-data request holding ONE file in `options.field` plus optional text fields. The file is
 * streamed to a temporary file, never held in memory: its type is sniffed with `file-type` from the first bytes and
 * a type outside `allowedMimeTypes` (or an unrecognisable one, e.g. a text file renamed .png) is a 400 at once; then
 * the rest is counted against that type's limit and one byte more is a 400 `FILE_TOO_LARGE`, with the rest of the
 * body left unread. The caller owns the temporary file: use `withUpload`, which removes it in every case.
 */
export async function readUpload(request: FastifyRequest, options: UploadOptions): Promise<Upload> {
  if (!request.isMultipart()) {
    throw badRequest('The request must be multipart/form-data.', 'INVALID_MULTIPART');
  }
  let file: (Awaited<ReturnType<typeof receiveFile>> & { name: string | undefined }) | null = null;
  const fields: Record<string, string> = {};
  try {
    const parts = request.parts({
      limits: { files: 1, fields: MAX_TEXT_FIELDS, fieldSize: maxFieldBytesOf(options), ...parserFileCap(options) },
      throwFileSizeLimit: true,
    } as Parameters<FastifyRequest['parts']>[0]);
    for await (const part of parts) {
      if (part.type === 'file') {
        const filePart = part as MultipartFile;
        if (filePart.fieldname !== options.field) {
          filePart.file.destroy();
          throw validationFailed(filePart.fieldname, `unexpected file field; send the file in "${options.field}"`);
        }
        file = { ...(await receiveFile(filePart.file, options, fields)), name: filePart.filename };
      } else {
        takeTextField(part as MultipartValue, fields, options);
      }
    }
  } catch (error) {
    if (file) await rm(file.path, { force: true }).catch(() => undefined);
    throw closingConnection(error instanceof AppError ? error : parserError(error, options), request);
  }

  if (!file) throw validationFailed(options.field, 'a file is required');
  if (file.sizeBytes === 0 || !file.sniffed) {
    await rm(file.path, { force: true }).catch(() => undefined);
    throw validationFailed(options.field, 'the file is empty');
  }
  return {
    path: file.path,
    sizeBytes: file.sizeBytes,
    mimeType: file.sniffed.mime,
    ext: file.sniffed.ext,
    fileName: cleanFileName(file.name),
    fields,
  };
}

/** Reads the upload, hands it to `use`, and removes its temporary file afterwards, whatever happens. */
export async function withUpload<T>(request: FastifyRequest, options: UploadOptions, use: (upload: Upload) => Promise<T>): Promise<T> {
  const upload = await readUpload(request, options);
  try {
    return await use(upload);
  } finally {
    await discardUpload(upload);
  }
}

export interface MultiUploadOptions extends UploadOptions {
  /** The most files accepted in `field` (each file is one part of that name); none is fine. */
  maxFiles: number;
}

/**
 * A refusal of one file of several names the request's field (and which file), so a client can point at it: a
 * refusal naming no field, or only the media service's own `file` (v1's upload field), is renamed; one naming
 * another field is left as it is.
 */
export function refusalOfFile(error: AppError, field: string, position: number): AppError {
  if (error.errors?.some((e) => e.field !== 'file')) return error;
  return new AppError(error.code, error.problemCode, error.message, {
    errors: [{ field, message: `file ${position}: ${error.errors?.[0]?.message ?? error.message}` }],
    headers: error.headers,
  });
}

/**
 * Reads a multipart/form-data request holding 0..`maxFiles` files, all in `options.field`, plus text fields. Each
 * file is received exactly as `readUpload` receives its one file (streamed to its own temporary file, type sniffed,
 * that type's limit, the rest of the body left unread on a refusal); a refusal names the field and the file. When
 * anything fails, the temporary files already written are removed. The caller owns the files: use `withUploads`.
 */
export async function readUploads(request: FastifyRequest, options: MultiUploadOptions): Promise<{ files: Upload[]; fields: Record<string, string> }> {
  if (!request.isMultipart()) {
    throw badRequest('The request must be multipart/form-data.', 'INVALID_MULTIPART');
  }
  const received: (Awaited<ReturnType<typeof receiveFile>> & { name: string | undefined })[] = [];
  const fields: Record<string, string> = {};
  const discardAll = () => Promise.all(received.map((f) => rm(f.path, { force: true }).catch(() => undefined)));
  try {
    const parts = request.parts({
      limits: { files: options.maxFiles, fields: MAX_TEXT_FIELDS, fieldSize: maxFieldBytesOf(options), ...parserFileCap(options) },
      throwFileSizeLimit: true,
    } as Parameters<FastifyRequest['parts']>[0]);
    for await (const part of parts) {
      if (part.type === 'file') {
        const filePart = part as MultipartFile;
        if (filePart.fieldname !== options.field) {
          filePart.file.destroy();
          throw validationFailed(filePart.fieldname, `unexpected file field; send the files in "${options.field}"`);
        }
        const position = received.length + 1;
        try {
          const file = { ...(await receiveFile(filePart.file, options, fields)), name: filePart.filename };
          received.push(file);
          if (file.sizeBytes === 0 || !file.sniffed) throw validationFailed(options.field, `file ${position} is empty`);
        } catch (error) {
          throw error instanceof AppError ? refusalOfFile(error, options.field, position) : error;
        }
      } else {
        takeTextField(part as MultipartValue, fields, options);
      }
    }
  } catch (error) {
    await discardAll();
    if ((error as { code?: string }).code === 'FST_FILES_LIMIT') {
      const message = `at most ${options.maxFiles} files are accepted`;
      throw closingConnection(
        badRequest(`At most ${options.maxFiles} files are accepted in "${options.field}".`, 'TOO_MANY_FILES', [{ field: options.field, message }]),
        request,
      );
    }
    throw closingConnection(error instanceof AppError ? error : parserError(error, options), request);
  }
  const files = received.map((file) => ({
    path: file.path,
    sizeBytes: file.sizeBytes,
    mimeType: file.sniffed!.mime,
    ext: file.sniffed!.ext,
    fileName: cleanFileName(file.name),
    fields,
  }));
  return { files, fields };
}

/** Reads the uploads, hands them to `use`, and removes their temporary files afterwards, whatever happens. */
export async function withUploads<T>(
  request: FastifyRequest,
  options: MultiUploadOptions,
  use: (files: Upload[], fields: Record<string, string>) => Promise<T>,
): Promise<T> {
  const { files, fields } = await readUploads(request, options);
  try {
    return await use(files, fields);
  } finally {
    await Promise.all(files.map((file) => discardUpload(file)));
  }
}
