import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { createItemInput, itemIdInput, itemOutput, itemPage, listItemsInput, pagedItemsInput, updateItemInput } from './items.schemas.js';
import * as items from './items.service.js';
import { sessionTerritoryHeader } from '../../platform/service-context.js';

const TAGS = ['Marketplace'];

export const itemsRouter = router({
  create: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/items', tags: TAGS, summary: "List an item in a store (the store's owner or a curator)" },
      successStatus: 201,
    })
    .input(createItemInput)
    .output(itemOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await items.createItem(ctx, input);
      ctx.resp.headers.Location = `/api/v1/items/${created.id}`;
      return created;
    }),

  list: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/items',
        tags: TAGS,
        summary: "The territory's ACTIVE items of ACTIVE stores, newest first (q: partial, case-insensitive title or description)",
        requestHeaders: sessionTerritoryHeader,
      },
    })
    .input(listItemsInput)
    .output(z.array(itemOutput))
    .query(({ ctx, input }) => items.listItems(ctx, input)),

  paged: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/items/paged',
        tags: TAGS,
        summary: "The territory's ACTIVE items (paged)",
        requestHeaders: sessionTerritoryHeader,
      },
    })
    .input(pagedItemsInput)
    .output(itemPage)
    .query(({ ctx, input }) => items.pageItems(ctx, input)),

  byId: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/items/{itemId}', tags: TAGS, summary: 'Get an item' } })
    .input(itemIdInput)
    .output(itemOutput)
    .query(({ ctx, input }) => items.getItem(ctx, input)),

  update: authedProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/items/{itemId}',
        tags: TAGS,
        summary: "Edit an item (the store's owner or a curator; media are set at creation)",
      },
    })
    .input(updateItemInput)
    .output(itemOutput)
    .mutation(({ ctx, input }) => items.updateItem(ctx, input)),

  archive: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/items/{itemId}/archive', tags: TAGS, summary: "Archive an item (the store's owner or a curator; idempotent)" },
    })
    .input(itemIdInput)
    .output(itemOutput)
    .mutation(({ ctx, input }) => items.archiveItem(ctx, input)),
});
