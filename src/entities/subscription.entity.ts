import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Store } from './store.entity.js';

/** The seeded plans (DESIGN section 13 "Merchants"); a store without a subscription is on FREE. */
export const PLAN_CODES = ['FREE', 'BASIC', 'PRO'] as const;
export type PlanCode = (typeof PLAN_CODES)[number];
export const METER_METRICS = ['ai', 'media', 'notifications'] as const;
export type MeterMetric = (typeof METER_METRICS)[number];
export const SUBSCRIPTION_STATUSES = ['ACTIVE'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * A plan a store may subscribe to: a monthly price (integer cents) and a quota per meter. The rows are seeded by the
 * migration with fixed ids, so a plan id is the same on every installation; the API never writes them.
 */
export const SubscriptionPlan = defineEntity({
  name: 'SubscriptionPlan',
  tableName: 'subscription_plan',
  properties: {
    ...baseProperties,
    code: p.string().length(20).$type<PlanCode>().unique(),
    name: p.string().length(100),
    priceInCents: p.bigint('number'),
    currency: p.string().length(3),
    quotaAi: p.integer(),
    quotaMedia: p.integer(),
    quotaNotifications: p.integer(),
  },
  checks: [
    { name: 'subscription_plan_code_check', expression: `code in (${list(PLAN_CODES)})` },
    { name: 'subscription_plan_amounts_check', expression: 'price_in_cents >= 0 and quota_ai >= 0 and quota_media >= 0 and quota_notifications >= 0' },
    { name: 'subscription_plan_currency_check', expression: `currency ~ '^[A-Z]{3}$'` },
  ],
});

/**
 * A store's (merchant's) subscription: one per store (unique), so concurrent first reads of the consumption and
 * concurrent POSTs converge on one row; changing plan updates it in place.
 */
export const MerchantSubscription = defineEntity({
  name: 'MerchantSubscription',
  tableName: 'merchant_subscription',
  properties: {
    ...baseProperties,
    storeId: () => p.manyToOne(Store).mapToPk().fieldName('store_id').deleteRule('cascade').unique(),
    planId: () => p.manyToOne(SubscriptionPlan).mapToPk().fieldName('plan_id').index(),
    status: p.string().length(20).$type<SubscriptionStatus>(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [{ name: 'merchant_subscription_status_check', expression: `status in (${list(SUBSCRIPTION_STATUSES)})` }],
});

/**
 * One meter of a subscription for one billing period (a calendar month, UTC), created with its two siblings on the
 * first consumption read of the period. `recordedUsage` is what a writer records on the meter itself (the `ai`
 * meter, which has no writer yet); `media` and `notifications` are projected from their domains on every read.
 */
export const ConsumptionMeter = defineEntity({
  name: 'ConsumptionMeter',
  tableName: 'consumption_meter',
  properties: {
    ...baseProperties,
    subscriptionId: () => p.manyToOne(MerchantSubscription).mapToPk().fieldName('subscription_id').deleteRule('cascade'),
    metric: p.string().length(20).$type<MeterMetric>(),
    periodStartUtc: p.datetime(),
    periodEndUtc: p.datetime(),
    recordedUsage: p.bigint('number').default(0),
  },
  uniques: [{ name: 'consumption_meter_period_unique', properties: ['subscriptionId', 'metric', 'periodStartUtc'] }],
  checks: [
    { name: 'consumption_meter_metric_check', expression: `metric in (${list(METER_METRICS)})` },
    { name: 'consumption_meter_period_check', expression: 'period_end_utc > period_start_utc and recorded_usage >= 0' },
  ],
});
