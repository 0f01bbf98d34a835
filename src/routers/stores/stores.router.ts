import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { listStoresInput, storeIdInput, storeOutput, updateStoreInput, upsertStoreInput } from './stores.schemas.js';
import * as stores from './stores.service.js';
import { sessionTerritoryHeader } from '../../platform/service-context.js';

const TAGS = ['Marketplace'];

export const storesRouter = router({
  upsert: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/stores',
        tags: TAGS,
        summary: 'Open my store in the territory (verified residents or curators); a repeat updates it (200)',
        requestHeaders: sessionTerritoryHeader,
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(upsertStoreInput)
    .output(storeOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, store } = await stores.upsertStore(ctx, input);
      if (created) ctx.resp.headers.Location = `/api/v1/stores/${store.id}`;
      else ctx.resp.status = 200;
      return store;
    }),

  list: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/stores', tags: TAGS, summary: "The territory's ACTIVE stores, by name", requestHeaders: sessionTerritoryHeader },
    })
    .input(listStoresInput)
    .output(z.array(storeOutput))
    .query(({ ctx, input }) => stores.listStores(ctx, input)),

  byId: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/stores/{storeId}', tags: TAGS, summary: 'Get a store (a Private contact only for its owner and curators)' },
    })
    .input(storeIdInput)
    .output(storeOutput)
    .query(({ ctx, input }) => stores.getStore(ctx, input)),

  update: authedProcedure
    .meta({ openapi: { method: 'PATCH', path: '/api/v1/stores/{storeId}', tags: TAGS, summary: 'Edit a store, status ACTIVE or PAUSED (owner or curator)' } })
    .input(updateStoreInput)
    .output(storeOutput)
    .mutation(({ ctx, input }) => stores.updateStore(ctx, input)),
});
