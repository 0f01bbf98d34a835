import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure, territoryProcedure } from '../../trpc/procedures.js';
import { createInput, listInput, naturalAssetOutput, publishInput } from './natural-assets.schemas.js';
import * as naturalAssets from './natural-assets.service.js';

const TAGS = ['Assets'];
const BASE = '/api/v1/territories/{territoryId}/natural-assets';

export const naturalAssetsRouter = router({
  list: authedProcedure
    .meta({
      openapi: { method: 'GET', path: BASE, tags: TAGS, summary: "The territory's natural assets (PUBLISHED; PENDING ones to curators and their creator)" },
    })
    .input(listInput)
    .output(z.array(naturalAssetOutput))
    .query(({ ctx, input }) => naturalAssets.listNaturalAssets(ctx, input)),

  create: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: BASE,
        tags: TAGS,
        summary: 'Register a spring, waterfall or potable-water point (verified residents or curators; PENDING)',
      },
      successStatus: 201,
    })
    .input(createInput)
    .output(naturalAssetOutput)
    .mutation(({ ctx, input }) => naturalAssets.createNaturalAsset(ctx, input)),

  publish: territoryProcedure('CURATOR')
    .meta({ openapi: { method: 'POST', path: `${BASE}/{id}/publish`, tags: TAGS, summary: 'Publish a PENDING natural asset (curator)' } })
    .input(publishInput)
    .output(naturalAssetOutput)
    .mutation(({ ctx, input }) => naturalAssets.publishNaturalAsset(ctx, input)),
});
