import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import {
  confirmationInput,
  createEntityInput,
  entityIdInput,
  entityListInput,
  entityPagedInput,
  mapEntityOutput,
  mapEntityPage,
  pinListInput,
  pinOutput,
  pinPage,
  pinPagedInput,
  relationOutput,
  validationInput,
} from './map.schemas.js';
import { CONFIRMATIONS_PATH } from './map.routes.js';
import * as map from './map.service.js';
import { sessionTerritoryHeader } from '../../platform/service-context.js';

const TAGS = ['Map'];

export const mapRouter = router({
  entities: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/map/entities',
        tags: TAGS,
        summary:
          "The territory's map entities (SUGGESTED and VALIDATED; RESIDENTS_ONLY to residents, the territory's curators and moderators and system admins; blocked users' hidden)",
        requestHeaders: sessionTerritoryHeader,
      },
    })
    .input(entityListInput)
    .output(z.array(mapEntityOutput))
    .query(({ ctx, input }) => map.listEntities(ctx, input)),

  entitiesPaged: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/map/entities/paged',
        tags: TAGS,
        summary: "The territory's map entities (paged)",
        requestHeaders: sessionTerritoryHeader,
      },
    })
    .input(entityPagedInput)
    .output(mapEntityPage)
    .query(({ ctx, input }) => map.pageEntities(ctx, input)),

  suggestEntity: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/map/entities',
        tags: TAGS,
        summary: 'Suggest a map entity (members; SUGGESTED)',
        requestHeaders: sessionTerritoryHeader,
      },
      successStatus: 201,
    })
    .input(createEntityInput)
    .output(mapEntityOutput)
    .mutation(({ ctx, input }) => map.suggestEntity(ctx, input)),

  validateEntity: authedProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/map/entities/{entityId}/validation',
        tags: TAGS,
        summary: 'Validate (true: VALIDATED) or reject (false: REJECTED, hidden) a map entity (curator; repeatable)',
      },
    })
    .input(validationInput)
    .output(mapEntityOutput)
    .mutation(({ ctx, input }) => map.validateEntity(ctx, input)),

  // REST serves this operation as a plain route (map.routes.ts): the spec puts territoryId in the query of a POST,
  // which the REST bridge does not read. tRPC callers pass it in the input.
  confirmEntity: authedProcedure
    .meta({ openapi: { enabled: false, method: 'POST', path: CONFIRMATIONS_PATH, tags: TAGS, summary: 'Confirm a map entity (members; once per user)' } })
    .input(confirmationInput)
    .output(mapEntityOutput)
    .mutation(async ({ ctx, input }) => (await map.confirmEntity(ctx, input)).entity),

  relateToEntity: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/map/entities/{entityId}/relations',
        tags: TAGS,
        summary: 'Relate yourself to a map entity (verified residents; one per user and entity, a repeat answers 200 with it)',
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(entityIdInput)
    .output(relationOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, relation } = await map.relateToEntity(ctx, input);
      if (!created) ctx.resp.status = 200;
      return relation;
    }),

  pins: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/map/pins',
        tags: TAGS,
        summary: 'Map pins of the territory (entity, post, event, asset, alert, media), by type then newest first',
        requestHeaders: sessionTerritoryHeader,
      },
    })
    .input(pinListInput)
    .output(z.array(pinOutput))
    .query(({ ctx, input }) => map.listPins(ctx, input)),

  pinsPaged: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/map/pins/paged',
        tags: TAGS,
        summary: 'Map pins of the territory (paged)',
        requestHeaders: sessionTerritoryHeader,
      },
    })
    .input(pinPagedInput)
    .output(pinPage)
    .query(({ ctx, input }) => map.pagePins(ctx, input)),
});
