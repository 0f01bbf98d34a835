import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { requirePermission } from '../../http/route-auth.js';
import { zId } from '../../platform/ids.js';
import type { PlainRoutes } from '../plain-routes.js';
import { findEvidence, sendEvidence } from './evidence.service.js';

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

/** Evidence downloads are streams, so plain routes. */
export const evidenceRoutes: PlainRoutes = {
  register(app, deps) {
    app.get(ADMIN_DOWNLOAD_PATH.replace('{evidenceId}', ':evidenceId'), async (request, reply) => {
      const user = requirePermission(request, 'SYSTEM_ADMIN');
      // A ZodError is rendered as a 400 VALIDATION_FAILED naming the field.
      const { evidenceId } = evidenceParams.parse(request.params);
      const em = deps.orm.em.fork() as EntityManager;
      const evidence = await findEvidence(em, evidenceId);
      return sendEvidence(em, deps.storage, reply, evidence, user.id);
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
