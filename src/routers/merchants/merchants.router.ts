import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure, publicProcedure } from '../../trpc/procedures.js';
import { consumptionOutput, merchantIdInput, subscribeInput, subscriptionIdInput, subscriptionOutput, subscriptionPlanOutput } from './merchants.schemas.js';
import * as merchants from './merchants.service.js';

const TAGS = ['Merchants'];

export const merchantsRouter = router({
  plans: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/subscription-plans',
        tags: TAGS,
        summary: 'The subscription plans (FREE, BASIC, PRO) with their quotas',
        protect: false,
      },
    })
    .input(z.object({}))
    .output(z.array(subscriptionPlanOutput))
    .query(({ ctx }) => merchants.listPlans(ctx)),

  subscribe: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/merchants/{merchantId}/subscription',
        tags: TAGS,
        summary: 'Subscribe the store (merchantId = store id) to a plan, owner only; the same plan again 200, another plan changes it (200)',
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(subscribeInput)
    .output(subscriptionOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, subscription } = await merchants.subscribe(ctx, input);
      if (created) ctx.resp.headers.Location = `/api/v1/subscriptions/${subscription.id}`;
      else ctx.resp.status = 200;
      return subscription;
    }),

  subscription: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/subscriptions/{id}', tags: TAGS, summary: "A store's subscription, for the store's owner" } })
    .input(subscriptionIdInput)
    .output(subscriptionOutput)
    .query(({ ctx, input }) => merchants.getSubscription(ctx, input)),

  consumption: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/merchants/{merchantId}/consumption',
        tags: TAGS,
        summary: "The store's consumption meters (ai, media, notifications) this month, owner only; the first read subscribes it to FREE",
      },
    })
    .input(merchantIdInput)
    .output(consumptionOutput)
    .query(({ ctx, input }) => merchants.getConsumption(ctx, input)),
});
