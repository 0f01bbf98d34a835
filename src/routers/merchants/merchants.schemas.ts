import { z } from 'zod';
import { METER_METRICS, PLAN_CODES, SUBSCRIPTION_STATUSES } from '../../entities/subscription.entity.js';
import { zId } from '../../platform/ids.js';

export const subscriptionPlanOutput = z
  .object({
    id: z.uuid(),
    code: z.enum(PLAN_CODES),
    name: z.string(),
    /** Monthly price. */
    priceInCents: z.number().int(),
    currency: z.string(),
    /** Per month (a calendar month, UTC). */
    quotas: z.object({ ai: z.number().int(), media: z.number().int(), notifications: z.number().int() }),
  })
  .meta({ id: 'SubscriptionPlan' });
export type SubscriptionPlanOutput = z.infer<typeof subscriptionPlanOutput>;

export const subscriptionOutput = z
  .object({
    id: z.uuid(),
    /** The store id. */
    merchantId: z.uuid(),
    planId: z.uuid(),
    planCode: z.enum(PLAN_CODES),
    status: z.enum(SUBSCRIPTION_STATUSES),
    createdAtUtc: z.iso.datetime(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'MerchantSubscription' });
export type SubscriptionOutput = z.infer<typeof subscriptionOutput>;

export const consumptionOutput = z
  .object({
    merchantId: z.uuid(),
    subscriptionId: z.uuid(),
    planCode: z.enum(PLAN_CODES),
    /** The current billing period: the calendar month (UTC), start inclusive, end exclusive. */
    periodStartUtc: z.iso.datetime(),
    periodEndUtc: z.iso.datetime(),
    meters: z.array(z.object({ metric: z.enum(METER_METRICS), usage: z.number().int(), quota: z.number().int() })),
  })
  .meta({ id: 'MerchantConsumption' });
export type ConsumptionOutput = z.infer<typeof consumptionOutput>;

/** merchantId is the store id (the spec). */
export const merchantIdInput = z.object({ merchantId: zId });
export const subscribeInput = z.object({ merchantId: zId, planId: zId });
export type SubscribeInput = z.infer<typeof subscribeInput>;
export const subscriptionIdInput = z.object({ id: zId });
