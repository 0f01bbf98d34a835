import type { FastifyReply } from 'fastify';
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

/** Streams an opened evidence file as an attachment, never cached. */
export function sendEvidenceFile(reply: FastifyReply, download: EvidenceDownload) {
  return reply
    .status(200)
    .header('Content-Type', download.mimeType)
    .header('Content-Length', String(download.sizeBytes))
    .header('Content-Disposition', `attachment; filename="${download.fileName}"`)
    .header('Cache-Control', 'private, no-store')
    .send(download.stream);
}

/** Evidence downloads are streams, so plain routes. */
export const evidenceRoutes: PlainRoutes = {
  register(app, deps) {
    app.get(ADMIN_DOWNLOAD_PATH.replace('{evidenceId}', ':evidenceId'), async (request, reply) => {
      requirePermission(request, 'SYSTEM_ADMIN');
      // A ZodError is rendered as a 400 VALIDATION_FAILED naming the field.
      const { evidenceId } = evidenceParams.parse(request.params);
      return sendEvidenceFile(reply, await openEvidence(serviceContextOf(request, deps), { evidenceId }));
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
          '400': { description: 'Malformed id' },
          '401': { description: 'Unauthorized' },
          '403': { description: 'Forbidden' },
          '404': { description: 'Unknown evidence or missing file' },
        },
      },
    },
  },
};
