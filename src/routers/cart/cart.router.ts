import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import {
  addCartItemInput,
  cartLineOutput,
  cartLineRefInput,
  cartOutput,
  getCartInput,
  updateCartLineByIdInput,
  updateCartLineByItemInput,
} from './cart.schemas.js';
import * as cart from './cart.service.js';
import { sessionTerritoryHeader } from '../../platform/service-context.js';

const TAGS = ['Marketplace'];
const LINE_ID = 'The cart line id; the catalogue item id of a line in my cart is accepted too.';

const add = (path: `/api/v1/${string}`) =>
  authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path,
        tags: TAGS,
        summary: 'Put an item in my cart of its territory (201); the same item again replaces quantity and notes (200)',
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(addCartItemInput)
    .output(cartLineOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, line } = await cart.addCartItem(ctx, input);
      if (!created) ctx.resp.status = 200;
      return line;
    });

/** `PATCH` and `PUT /api/v1/cart/items/{id}`: the same change under both methods. */
const updateLine = (method: 'PATCH' | 'PUT') =>
  authedProcedure
    .meta({ openapi: { method, path: '/api/v1/cart/items/{id}', tags: TAGS, summary: 'Change a line of my cart (quantity, notes)', description: LINE_ID } })
    .input(updateCartLineByIdInput)
    .output(cartLineOutput)
    .mutation(({ ctx, input }) => cart.updateCartLine(ctx, { ref: input.id, quantity: input.quantity, notes: input.notes }));

export const cartRouter = router({
  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/cart', tags: TAGS, summary: 'My cart in the territory', requestHeaders: sessionTerritoryHeader } })
    .input(getCartInput)
    .output(cartOutput)
    .query(({ ctx, input }) => cart.getCart(ctx, input)),

  add: add('/api/v1/cart'),
  addItem: add('/api/v1/cart/items'),

  patchItem: updateLine('PATCH'),
  putItem: updateLine('PUT'),

  put: authedProcedure
    .meta({
      openapi: { method: 'PUT', path: '/api/v1/cart/{itemId}', tags: TAGS, summary: 'Change a line of my cart (quantity, notes)', description: LINE_ID },
    })
    .input(updateCartLineByItemInput)
    .output(cartLineOutput)
    .mutation(({ ctx, input }) => cart.updateCartLine(ctx, { ref: input.itemId, quantity: input.quantity, notes: input.notes })),

  remove: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/cart/{itemId}', tags: TAGS, summary: 'Remove a line from my cart', description: LINE_ID },
      successStatus: 204,
    })
    .input(cartLineRefInput)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      await cart.removeCartLine(ctx, { ref: input.itemId });
    }),
});
