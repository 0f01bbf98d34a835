import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, pgArray, runHotRead, runSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { METER_METRICS, type MeterMetric } from '../../entities/subscription.entity.js';
import { newId } from '../../platform/ids.js';
import { forbidden, notFound, validationFailed } from '../../platform/problems.js';
import type { PublicServiceContext, ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { storeItemMediaCount } from '../items/items.queries.js';
import { storeNotificationCount } from '../notifications/notifications.queries.js';
import { type StoreRow, storeFacts } from '../stores/stores.queries.js';
import {
  type MeterRow,
  metersQuery,
  planByIdQuery,
  type PlanRow,
  plansQuery,
  subscriptionByIdQuery,
  subscriptionOfStoreQuery,
  type SubscriptionRow,
} from './merchants.queries.js';
import type { ConsumptionOutput, SubscribeInput, SubscriptionOutput, SubscriptionPlanOutput } from './merchants.schemas.js';

const MARKETPLACE = 'MARKETPLACEENABLED' as const;

const planOutput = (r: PlanRow): SubscriptionPlanOutput => ({
  id: r.id,
  code: r.code,
  name: r.name,
  priceInCents: Number(r.price_in_cents),
  currency: r.currency,
  quotas: { ai: r.quota_ai, media: r.quota_media, notifications: r.quota_notifications },
});

const subscriptionOutput = (r: SubscriptionRow): SubscriptionOutput => ({
  id: r.subscription_id,
  merchantId: r.store_id,
  planId: r.plan_id,
  planCode: r.code,
  status: r.status,
  createdAtUtc: r.created_at_utc,
  updatedAtUtc: r.updated_at_utc,
});

/**
 * The merchant (store) the caller owns: unknown 404; a territory whose marketplace is off answers as for every
 * marketplace operation (404 MARKETPLACE_DISABLED); anyone but the owner 403, system admins and curators included
 * (the spec: "owner only").
 */
async function ownedStore(ctx: ServiceContext, storeId: string): Promise<StoreRow> {
  const store = await storeFacts(ctx, storeId);
  if (!store) throw notFound('Merchant');
  await requireTerritory(ctx, store.territory_id, { flag: MARKETPLACE, status: 'ANY' });
  if (store.owner_user_id !== ctx.user.id) throw forbidden("Only the store's owner can manage its subscription.", 'NOT_STORE_OWNER');
  return store;
}

/** The seeded plans, cheapest first; public. */
export async function listPlans(ctx: PublicServiceContext): Promise<SubscriptionPlanOutput[]> {
  return (await runHotRead<PlanRow>(ctx, plansQuery(), { prepared: true })).map(planOutput);
}

/**
 * Subscribes the owner's store to a plan. The first time creates the subscription (`created`: 201); the same plan
 * again changes nothing (200); another plan replaces it in place (200), audited with the plans before and after.
 * The insert is `on conflict do nothing` and the repeat path locks the row, so concurrent calls converge on one.
 */
export async function subscribe(ctx: ServiceContext, input: SubscribeInput): Promise<{ created: boolean; subscription: SubscriptionOutput }> {
  const store = await ownedStore(ctx, input.merchantId);
  const [plan] = await runSql<PlanRow>(ctx.em, planByIdQuery(input.planId));
  if (!plan) throw validationFailed('planId', 'no subscription plan has this id (see GET /api/v1/subscription-plans)');
  const { em, user } = ctx;
  const now = ctx.clock.now();
  const result = await em.transactional(async (tx) => {
    const [inserted] = await execSql<{ id: string }>(
      tx,
      `insert into merchant_subscription (id, created_at_utc, store_id, plan_id, status, updated_at_utc) values (?, ?, ?, ?, 'ACTIVE', ?)
       on conflict (store_id) do nothing returning id`,
      [newId(), now, store.id, plan.id, now],
    );
    const record = (action: string, data: Record<string, unknown>, subjectId: string) =>
      audit(tx, { actorUserId: user.id, action, subjectType: 'MerchantSubscription', subjectId, territoryId: store.territory_id, data });
    if (inserted) {
      record('merchant-subscription.created', { storeId: store.id, planCode: plan.code }, inserted.id);
      await tx.flush();
      return { created: true, id: inserted.id };
    }
    const [current] = await execSql<{ id: string; plan_id: string }>(tx, 'select id, plan_id from merchant_subscription where store_id = ?::uuid for update', [
      store.id,
    ]);
    if (current!.plan_id !== plan.id) {
      await execSql(tx, 'update merchant_subscription set plan_id = ?, updated_at_utc = ? where id = ?', [plan.id, now, current!.id]);
      record('merchant-subscription.plan-changed', { storeId: store.id, beforePlanId: current!.plan_id, afterPlanCode: plan.code }, current!.id);
      await tx.flush();
    }
    return { created: false, id: current!.id };
  });
  const [row] = await runSql<SubscriptionRow>(em, subscriptionByIdQuery(result.id));
  return { created: result.created, subscription: subscriptionOutput(row!) };
}

/** A subscription by id, for its store's owner only (403 for anyone else; 404 when unknown). */
export async function getSubscription(ctx: ServiceContext, input: { id: string }): Promise<SubscriptionOutput> {
  const [row] = await runHotRead<SubscriptionRow>(ctx, subscriptionByIdQuery(input.id), { prepared: true });
  if (!row) throw notFound('Subscription');
  await ownedStore(ctx, row.store_id);
  return subscriptionOutput(row);
}

/** The billing period containing `now`: its calendar month in UTC, start inclusive, end exclusive. */
export function periodOf(now: Date): { start: Date; end: Date } {
  return {
    start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}

/**
 * Creates, when missing, the store's subscription (FREE) and the period's three meters, in one transaction. Both
 * inserts are `on conflict do nothing` on their unique keys, so concurrent first reads wait for the first writer and
 * then find its rows: one subscription, three meters.
 */
async function ensureMeters(tx: EntityManager, storeId: string, period: { start: Date; end: Date }, now: Date): Promise<SubscriptionRow> {
  await execSql(
    tx,
    `insert into merchant_subscription (id, created_at_utc, store_id, plan_id, status, updated_at_utc)
     select ?, ?, ?, p.id, 'ACTIVE', ? from subscription_plan p where p.code = 'FREE'
     on conflict (store_id) do nothing`,
    [newId(), now, storeId, now],
  );
  const [subscription] = await runSql<SubscriptionRow>(tx, subscriptionOfStoreQuery(storeId));
  if (!subscription) throw new Error('The FREE subscription plan is missing: the migration seeds it.');
  await execSql(
    tx,
    `insert into consumption_meter (id, created_at_utc, subscription_id, metric, period_start_utc, period_end_utc, recorded_usage)
     select m.id, ?, ?, m.metric, ?, ?, 0 from unnest(?::uuid[], ?::text[]) as m(id, metric)
     on conflict (subscription_id, metric, period_start_utc) do nothing`,
    [now, subscription.subscription_id, period.start, period.end, pgArray(METER_METRICS.map(() => newId())), pgArray(METER_METRICS)],
  );
  return subscription;
}

/**
 * The store's consumption in the current period (owner only). The first read creates the subscription and meters
 * (see `ensureMeters`). Usage: `media` = media attached to the store's items in the period, `notifications` =
 * notifications generated for the store in the period (both projected from their domains on every read), `ai` = what
 * was recorded on its meter (nothing writes it yet: 0).
 */
export async function getConsumption(ctx: ServiceContext, input: { merchantId: string }): Promise<ConsumptionOutput> {
  const store = await ownedStore(ctx, input.merchantId);
  const now = ctx.clock.now();
  const period = periodOf(now);
  const { subscription, meters } = await ctx.em.transactional(async (tx) => {
    const subscription = await ensureMeters(tx, store.id, period, now);
    const meters = await runSql<MeterRow>(tx, metersQuery(subscription.subscription_id, period.start));
    return { subscription, meters };
  });
  const recorded = new Map(meters.map((m) => [m.metric, Number(m.recorded_usage)]));
  const media = await storeItemMediaCount(ctx.em, store.id, period.start, period.end);
  const notifications = await storeNotificationCount(ctx.em, store.id, period.start, period.end);
  const usage: Record<MeterMetric, number> = { ai: recorded.get('ai') ?? 0, media, notifications };
  const quota: Record<MeterMetric, number> = { ai: subscription.quota_ai, media: subscription.quota_media, notifications: subscription.quota_notifications };
  return {
    merchantId: store.id,
    subscriptionId: subscription.subscription_id,
    planCode: subscription.code,
    periodStartUtc: period.start.toISOString(),
    periodEndUtc: period.end.toISOString(),
    meters: METER_METRICS.map((metric) => ({ metric, usage: usage[metric], quota: quota[metric] })),
  };
}
