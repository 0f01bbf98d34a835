import { z } from 'zod';
import { type PlainRoutes, serviceContextOf } from '../../http/plain-routes.js';
import { zId } from '../../platform/ids.js';
import { evidenceFileResponse, evidenceRangeResponses, sendEvidenceFile } from '../evidence/evidence.routes.js';
import { openTerritoryEvidence } from './territory-work-items.service.js';

const DOWNLOAD_PATH = '/api/v1/territories/{territoryId}/evidences/{evidenceId}/download';
const downloadParams = z.object({ territoryId: zId, evidenceId: zId });

/** Curators and moderators read the evidence of their territory's queue; a stream, so a plain route. */
export const territoryEvidenceRoutes: PlainRoutes = {
  register(app, deps) {
    app.get(DOWNLOAD_PATH.replace('{territoryId}', ':territoryId').replace('{evidenceId}', ':evidenceId'), async (request, reply) => {
      const ctx = serviceContextOf(request, deps);
      const input = downloadParams.parse(request.params);
      return sendEvidenceFile(request, reply, await openTerritoryEvidence(ctx, input));
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
          ...evidenceRangeResponses,
          '400': { description: 'Malformed id' },
          '401': { description: 'Unauthorized' },
          '403': { description: 'Not CURATOR or MODERATOR of the territory' },
          '404': { description: 'Unknown territory, evidence of another territory, or missing file' },
        },
      },
    },
  },
};
