import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { fileTypeFromBuffer } from 'file-type';
import { AppError, badRequest, validationFailed } from '../platform/problems.js';
import { sanitizeText } from '../platform/text.js';
import type { Upload } from '../platform/upload.js';

export interface UploadOptions {
  /** Name of the one file field to read (e.g. `file`). */
  field: string;
  maxBytes: number;
  /** MIME types accepted, as sniffed from the bytes (e.g. `image/png`, `application/pdf`). */
  allowedMimeTypes: readonly string[];
  /** Largest text field value in bytes (default 10 000). */
  maxFieldBytes?: number;
}

const MAX_TEXT_FIELDS = 20;

/** Multipart parser errors are the client's fault: they become 400 problems, never 500. */
function parserError(error: unknown, options: UploadOptions) {
  const code = (error as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') {
    return badRequest(`The file is larger than the limit of ${formatBytes(options.maxBytes)}.`, 'FILE_TOO_LARGE');
  }
  if (code === 'FST_FILES_LIMIT') return badRequest(`Send exactly one file, in the "${options.field}" field.`, 'TOO_MANY_FILES');
  if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') return badRequest('The form has too many fields.', 'TOO_MANY_FIELDS');
  return badRequest('The multipart/form-data body is malformed.', 'INVALID_MULTIPART');
}

function formatBytes(bytes: number) {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`;
}

function cleanFileName(name: string | undefined): string | null {
  if (!name) return null;
  const base = name.replace(/\\/g, '/').split('/').pop() ?? '';
  const clean = sanitizeText(base)
    .replace(/["\r\n]/g, '')
    .slice(0, 255);
  return clean || null;
}

/**
 * Reads a multipart/form-data request holding ONE file in `options.field` plus optional text fields. The file is
 * buffered up to `maxBytes` (one byte more is a 400), its type is sniffed from the content with `file-type`, and a
 * type outside `allowedMimeTypes` (or an unrecognisable one, e.g. a text file renamed .png) is a 400.
 */
export async function readUpload(request: FastifyRequest, options: UploadOptions): Promise<Upload> {
  if (!request.isMultipart()) {
    throw badRequest('The request must be multipart/form-data.', 'INVALID_MULTIPART');
  }
  let file: { bytes: Buffer; name: string | undefined } | null = null;
  const fields: Record<string, string> = {};
  try {
    const parts = request.parts({
      limits: { fileSize: options.maxBytes, files: 1, fields: MAX_TEXT_FIELDS, fieldSize: options.maxFieldBytes ?? 10_000 },
      throwFileSizeLimit: true,
    } as Parameters<FastifyRequest['parts']>[0]);
    for await (const part of parts) {
      if (part.type === 'file') {
        const filePart = part as MultipartFile;
        // Read the part even when it is not the expected field: the parser waits until it is consumed.
        const bytes = await filePart.toBuffer();
        if (filePart.fieldname !== options.field) {
          throw validationFailed(filePart.fieldname, `unexpected file field; send the file in "${options.field}"`);
        }
        file = { bytes, name: filePart.filename };
      } else {
        const value = part as MultipartValue;
        if (fields[value.fieldname] === undefined && typeof value.value === 'string') fields[value.fieldname] = value.value;
      }
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw parserError(error, options);
  }

  if (!file) throw validationFailed(options.field, 'a file is required');
  if (file.bytes.length === 0) throw validationFailed(options.field, 'the file is empty');
  if (file.bytes.length > options.maxBytes) {
    throw badRequest(`The file is larger than the limit of ${formatBytes(options.maxBytes)}.`, 'FILE_TOO_LARGE');
  }
  const sniffed = await fileTypeFromBuffer(file.bytes);
  if (!sniffed || !options.allowedMimeTypes.includes(sniffed.mime)) {
    throw badRequest(`Unsupported file type${sniffed ? ` ${sniffed.mime}` : ''}; allowed: ${options.allowedMimeTypes.join(', ')}.`, 'UNSUPPORTED_FILE_TYPE');
  }
  return { bytes: file.bytes, mimeType: sniffed.mime, ext: sniffed.ext, fileName: cleanFileName(file.name), fields };
}
