import { type PlainRoutes, serviceContextOf } from '../../http/plain-routes.js';
import { rateLimitRouteConfig } from '../../http/rate-limit.js';
import { validationFailed } from '../../platform/problems.js';
import { confirmationQuery, entityIdInput, mapEntityOutput } from './map.schemas.js';
import { confirmEntity } from './map.service.js';

export const CONFIRMATIONS_PATH = '/api/v1/map/entities/{entityId}/confirmations';

function parsed<T>(
  result: { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } },
  fallback: string,
): T {
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw validationFailed(String(issue?.path[0] ?? fallback), issue?.message ?? 'invalid value');
}

/**
 * `POST .../confirmations?territoryId=`: the spec puts the territory in the query of a POST, which the REST bridge
 * (JSON body and path only) does not read, so REST serves it here; it calls the same service as the tRPC procedure.
 * First confirmation 201, a repeat 200 (counted once either way).
 */
export const mapRoutes: PlainRoutes = {
  register(app, deps) {
    app.post(
      CONFIRMATIONS_PATH.replace('{entityId}', ':entityId'),
      { config: { rateLimit: rateLimitRouteConfig(deps.config, 'write') } },
      async (request, reply) => {
        const ctx = serviceContextOf(request, deps);
        const { entityId } = parsed(entityIdInput.safeParse(request.params), 'entityId');
        const { territoryId } = parsed(confirmationQuery.safeParse(request.query ?? {}), 'territoryId');
        const { created, entity } = await confirmEntity(ctx, { entityId, territoryId });
        return reply
          .status(created ? 201 : 200)
          .type('application/json')
          .send(JSON.stringify(mapEntityOutput.parse(entity)));
      },
    );
  },
  openapi: {
    [CONFIRMATIONS_PATH]: {
      post: {
        tags: ['Map'],
        summary: 'Confirm a map entity (members of its territory; counted once per user)',
        description: 'A repeat answers 200 with the entity and leaves confirmationCount unchanged.',
        security: [{ BearerAuth: [] }],
        requestParams: { path: entityIdInput, query: confirmationQuery },
        responses: {
          '201': { description: 'Confirmed; the entity with its confirmationCount', content: { 'application/json': { schema: mapEntityOutput } } },
          '200': { description: 'Already confirmed by the caller', content: { 'application/json': { schema: mapEntityOutput } } },
          '400': { description: 'Malformed entityId or missing/malformed territoryId' },
          '401': { description: 'Unauthorized' },
          '403': { description: 'Not a member of the territory' },
          '404': { description: 'Unknown entity, entity of another territory, rejected or not visible to the caller' },
        },
      },
    },
  },
};
