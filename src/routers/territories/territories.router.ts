import { adminProcedure, authedProcedure, publicProcedure } from '../../trpc/procedures.js';
import { router } from '../../trpc/init.js';
import {
  adminCreateInput,
  byIdInput,
  featuresOutput,
  listInput,
  nearbyInput,
  nearbyTerritoryOutput,
  pagedInput,
  searchInput,
  searchPagedInput,
  selectionInput,
  selectionOutput,
  suggestionInput,
  territoryOutput,
  territoryPage,
  updateFeaturesInput,
} from './territories.schemas.js';
import * as territories from './territories.service.js';
import { z } from 'zod';

const TAGS = ['Territories'];
/** Documents the session header; the services answer 400 when it is missing. */
const sessionHeader = z.object({ 'X-Session-Id': z.string().min(1).describe('Identifies the client session (any unique string).') });

export const territoriesRouter = router({
  list: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/territories', tags: TAGS, summary: 'List active territories', protect: false } })
    .input(listInput)
    .output(z.array(territoryOutput))
    .query(({ ctx, input }) => territories.listActive(ctx, input)),

  paged: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/territories/paged', tags: TAGS, summary: 'List active territories (paged)', protect: false } })
    .input(pagedInput)
    .output(territoryPage)
    .query(({ ctx, input }) => territories.pageActive(ctx, input)),

  nearby: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/territories/nearby', tags: TAGS, summary: 'Active territories near a point, nearest first', protect: false },
    })
    .input(nearbyInput)
    .output(z.array(nearbyTerritoryOutput))
    .query(({ ctx, input }) => territories.nearby(ctx, input)),

  search: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/territories/search', tags: TAGS, summary: 'Search active territories by q, city and state', protect: false },
    })
    .input(searchInput)
    .output(z.array(territoryOutput))
    .query(({ ctx, input }) => territories.search(ctx, input)),

  searchPaged: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/territories/search/paged', tags: TAGS, summary: 'Search active territories (paged)', protect: false },
    })
    .input(searchPagedInput)
    .output(territoryPage)
    .query(({ ctx, input }) => territories.searchPaged(ctx, input)),

  byId: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/territories/{id}', tags: TAGS, summary: 'Get a territory' } })
    .input(byIdInput)
    .output(territoryOutput)
    .query(({ ctx, input }) => territories.getById(ctx, input)),

  suggest: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/territories/suggestions', tags: TAGS, summary: 'Suggest a territory (PENDING until curated)' },
      successStatus: 201,
    })
    .input(suggestionInput)
    .output(territoryOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await territories.suggest(ctx, input);
      ctx.resp.headers.Location = `/api/v1/territories/${created.id}`;
      return created;
    }),

  select: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/territories/selection',
        tags: TAGS,
        summary: "Select the session's territory (X-Session-Id)",
        requestHeaders: sessionHeader,
      },
    })
    .input(selectionInput)
    .output(selectionOutput)
    .mutation(({ ctx, input }) => territories.selectTerritory(ctx, input)),

  selection: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/territories/selection',
        tags: TAGS,
        summary: "The session's selected territory (X-Session-Id)",
        requestHeaders: sessionHeader,
      },
    })
    // No parameters besides the header; the empty input is what makes the generator document that header.
    .input(z.object({}))
    .output(selectionOutput)
    .query(({ ctx }) => territories.getSelection(ctx)),

  features: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/territories/{id}/features', tags: TAGS, summary: "A territory's enabled feature flags" } })
    .input(byIdInput)
    .output(featuresOutput)
    .query(({ ctx, input }) => territories.getFeatures(ctx, input)),

  updateFeatures: authedProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/v1/territories/{id}/features', tags: TAGS, summary: "Replace a territory's feature flags (curator)" },
    })
    .input(updateFeaturesInput)
    .output(featuresOutput)
    .mutation(({ ctx, input }) => territories.updateFeatures(ctx, input)),

  adminCreate: adminProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/admin/territories', tags: ['Administration'], summary: 'Create an ACTIVE territory' },
      successStatus: 201,
    })
    .input(adminCreateInput)
    .output(territoryOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await territories.createActive(ctx, input);
      ctx.resp.headers.Location = `/api/v1/territories/${created.id}`;
      return created;
    }),
});
