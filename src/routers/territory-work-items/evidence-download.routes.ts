import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { requireUser } from '../../http/route-auth.js';
import { zId } from '../../platform/ids.js';
import { evidenceFileResponse } from '../evidence/evidence.routes.js';
import { findEvidence, sendEvidence } from '../evidence/evidence.service.js';
import type { PlainRoutes } from '../plain-routes.js';
import { requireTerritoryCapability } from '../../trpc/procedures.js';

const DOWNLOAD_PATH = '/api/v1/territories/{territoryId}/evidences/{evidenceId}/download';
const downloadParams = z.object({ territoryId: zId, evidenceId: zId });

/** Curators and moderators read the evidence of their territory's queue; a stream, so a plain route. */
export const territoryEvidenceRoutes: PlainRoutes = {
  register(app, deps) {
    app.get(DOWNLOAD_PATH.replace('{territoryId}', ':territoryId').replace('{evidenceId}', ':evidenceId'), async (request, reply) => {
      const user = requireUser(request);
      const { territoryId, evidenceId } = downloadParams.parse(request.params);
      const em = deps.orm.em.fork() as EntityManager;
      await requireTerritoryCapability(em, user, territoryId, ['CURATOR', 'MODERATOR']);
      // Evidence of another territory is a 404 here, as if it did not exist.
      const evidence = await findEvidence(em, evidenceId, { territoryId });
      return sendEvidence(em, deps.storage, reply, evidence, user.id);
    });
  },
  openapi: {
    [DOWNLOAD_PATH]: {
      get: {
        tags: ['Territory administration'],
        summary: "Download an evidence file of the territory's queue (curator or moderator; streamed through the API)",
        security: [{ BearerAuth: [] }],
        requestParams: { path: downloadParams },
        responses: {
          '200': evidenceFileResponse,
          '400': { description: 'Malformed id' },
          '401': { description: 'Unauthorized' },
          '403': { description: 'Not CURATOR or MODERATOR of the territory' },
          '404': { description: 'Unknown territory, evidence of another territory, or missing file' },
        },
      },
    },
  },
};
