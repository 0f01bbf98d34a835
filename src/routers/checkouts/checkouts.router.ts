import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { simulatePayment } from './payments.service.js';
import {
  checkoutCartInput,
  checkoutIdInput,
  checkoutOutput,
  checkoutPage,
  checkoutResultOutput,
  myCheckoutsInput,
  myCheckoutsPagedInput,
  simulatePaymentInput,
  storeOrdersInput,
} from './checkouts.schemas.js';
import * as checkouts from './checkouts.service.js';
import { sessionTerritoryHeader } from '../../platform/service-context.js';

const TAGS = ['Marketplace'];
const checkoutHeaders = sessionTerritoryHeader.extend({
  'Idempotency-Key': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('Same key and same body within 24 hours: the first answer again; same key with another body: 409.'),
});

export const checkoutsRouter = router({
  checkout: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/cart/checkout',
        tags: TAGS,
        summary: 'Check out my cart: one checkout per store for what can be bought, inquiries for the rest; the cart is emptied',
        description:
          'Empty cart: 400 CART_EMPTY. A payment the gateway declines at once (CARD token `tok_fake_declined` with the fake gateway): 402 ' +
          'PAYMENT_DECLINED, the checkouts kept as PAYMENT_FAILED and the cart left as it was.',
        requestHeaders: checkoutHeaders,
      },
      successStatus: 201,
    })
    .input(checkoutCartInput)
    .output(checkoutResultOutput)
    .mutation(({ ctx, input }) => checkouts.checkoutCart(ctx, input, checkouts.idempotencyKeyOf(ctx.headers['idempotency-key']))),

  mine: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/checkouts/me', tags: TAGS, summary: 'My checkouts as a buyer, newest first' } })
    .input(myCheckoutsInput)
    .output(z.array(checkoutOutput))
    .query(({ ctx, input }) => checkouts.listMyCheckouts(ctx, input)),

  minePaged: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/checkouts/me/paged', tags: TAGS, summary: 'My checkouts as a buyer (paged)' } })
    .input(myCheckoutsPagedInput)
    .output(checkoutPage)
    .query(({ ctx, input }) => checkouts.pageMyCheckouts(ctx, input)),

  byId: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/checkouts/{checkoutId}',
        tags: TAGS,
        summary: "A checkout (its buyer, its store's owner, SYSTEM_ADMIN; others 404)",
      },
    })
    .input(checkoutIdInput)
    .output(checkoutOutput)
    .query(({ ctx, input }) => checkouts.getCheckout(ctx, input)),

  cancel: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/checkouts/{checkoutId}/cancel',
        tags: TAGS,
        summary: 'Cancel my checkout before paying (AWAITING_PAYMENT only, else 409)',
      },
    })
    .input(checkoutIdInput)
    .output(checkoutOutput)
    .mutation(({ ctx, input }) => checkouts.cancelCheckout(ctx, input)),

  simulatePayment: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/checkouts/{checkoutId}/simulate-payment',
        tags: TAGS,
        summary: "Fake gateway only: pay (or fail) my checkout through the gateway's signed webhook",
        description: '404 unless PAYMENTS__PROVIDER is fake. The webhook is signed and applied through the same path as the real one.',
      },
    })
    .input(simulatePaymentInput)
    .output(checkoutOutput)
    .mutation(({ ctx, input }) => simulatePayment(ctx, input)),

  storeOrders: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/stores/{storeId}/orders', tags: TAGS, summary: "A store's orders, newest first (its owner)" } })
    .input(storeOrdersInput)
    .output(z.array(checkoutOutput))
    .query(({ ctx, input }) => checkouts.listStoreOrders(ctx, input)),
});
