import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendStoredFile } from '../../http/stored-file.js';
import { z } from 'zod';
import { type PlainRoutes, serviceContextOf } from '../../http/plain-routes.js';
import { requirePermission } from '../../http/route-auth.js';
import { zId } from '../../platform/ids.js';
import { type EvidenceDownload, openEvidence } from './evidence.service.js';

const ADMIN_DOWNLOAD_PATH = '/api/v1/admin/evidences/{evidenceId}/download';
const evidenceParams = z.object({ evidenceId: zId });

/** The documented 200 of an evidence download (admin and territory queues). */
export const evidenceFileResponse = {
  description: 'The file, with its stored content type',
  headers: z.object({
    'Content-Disposition': z.string().meta({ description: 'attachment; filename="<evidenceId>.<ext>"' }),
    'Content-Length': z.string(),
  }),
  content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } },
};

/** Ranges and validators of an evidence download (src/http/stored-file.ts). */
export const evidenceRangeResponses = {
  '206': { description: 'One byte range of the file (`Range: bytes=start-end`)' },
  '304': { description: 'Not modified (`If-None-Match` names the current ETag)' },
  '416': { description: 'The range is outside the file' },
};

/** Streams an opened evidence file as an attachment (ranges and validators supported), never stored by caches. */
export function sendEvidenceFile(request: FastifyRequest, reply: FastifyReply, download: EvidenceDownload) {
  return sendStoredFile(request, reply, download.file, {
    contentType: download.mimeType,
    disposition: `attachment; filename="${download.fileName}"`,
    etag: download.etag,
    cacheControl: 'private, no-store',
  });
}

/** Evidence downloads are streams, so plain routes. */
export const evidenceRoutes: PlainRoutes = {
  register(app, deps) {
    app.get(ADMIN_DOWNLOAD_PATH.replace('{evidenceId}', ':evidenceId'), async (request, reply) => {
      requirePermission(request, 'SYSTEM_ADMIN');
      // A ZodError is rendered as a 400 VALIDATION_FAILED naming the field.
      const { evidenceId } = evidenceParams.parse(request.params);
      return sendEvidenceFile(request, reply, await openEvidence(serviceContextOf(request, deps), { evidenceId }));
    });
  },
  openapi: {
    [ADMIN_DOWNLOAD_PATH]: {
      get: {
        tags: ['Administration'],
        summary: 'Download an evidence file (streamed through the API)',
        security: [{ BearerAuth: [] }],
        requestParams: { path: evidenceParams },
        responses: {
          '200': evidenceFileResponse,
          ...evidenceRangeResponses,
          '400': { description: 'Malformed id' },
          '401': { description: 'Unauthorized' },
          '403': { description: 'Forbidden' },
          '404': { description: 'Unknown evidence or missing file' },
        },
      },
    },
  },
};
