import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { assetIdInput, assetListInput, assetOutput, assetPage, assetPagedInput, createAssetInput, curateInput, updateAssetInput } from './assets.schemas.js';
import * as assets from './assets.service.js';
import { sessionTerritoryHeader } from '../../platform/service-context.js';

const TAGS = ['Assets'];

export const assetsRouter = router({
  create: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/assets',
        tags: TAGS,
        summary: 'Register a territory asset (verified residents or curators; Suggested until curated)',
        requestHeaders: sessionTerritoryHeader,
      },
      successStatus: 201,
    })
    .input(createAssetInput)
    .output(assetOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await assets.createAsset(ctx, input);
      ctx.resp.headers.Location = `/api/v1/assets/${created.id}`;
      return created;
    }),

  list: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/assets',
        tags: TAGS,
        summary: "The territory's assets, newest first (Suggested and Active unless status is given; type/types filter the type)",
        requestHeaders: sessionTerritoryHeader,
      },
    })
    .input(assetListInput)
    .output(z.array(assetOutput))
    .query(({ ctx, input }) => assets.listAssets(ctx, input)),

  paged: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/assets/paged', tags: TAGS, summary: "The territory's assets (paged)", requestHeaders: sessionTerritoryHeader },
    })
    .input(assetPagedInput)
    .output(assetPage)
    .query(({ ctx, input }) => assets.pageAssets(ctx, input)),

  byId: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/assets/{assetId}', tags: TAGS, summary: 'Get a territory asset' } })
    .input(assetIdInput)
    .output(assetOutput)
    .query(({ ctx, input }) => assets.getAsset(ctx, input)),

  update: authedProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/assets/{assetId}',
        tags: TAGS,
        summary: 'Edit an asset (creator or curator); subtype: omitted keeps, null removes, a value replaces',
      },
    })
    .input(updateAssetInput)
    .output(assetOutput)
    .mutation(({ ctx, input }) => assets.updateAsset(ctx, input)),

  validate: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/assets/{assetId}/validate',
        tags: TAGS,
        summary: "Validate an asset (members of its territory; idempotent); answers its validation count and residents' percentage",
      },
    })
    .input(assetIdInput)
    .output(assetOutput)
    .mutation(({ ctx, input }) => assets.validateAsset(ctx, input)),

  curate: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/assets/{assetId}/curate',
        tags: TAGS,
        summary: 'Curate a Suggested asset (curator): APPROVED -> Active, REJECTED -> Rejected',
      },
    })
    .input(curateInput)
    .output(assetOutput)
    .mutation(({ ctx, input }) => assets.curateAsset(ctx, input)),

  archive: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/assets/{assetId}/archive', tags: TAGS, summary: 'Archive an asset (curator)' } })
    .input(assetIdInput)
    .output(assetOutput)
    .mutation(({ ctx, input }) => assets.archiveAsset(ctx, input)),
});
