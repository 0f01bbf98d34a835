/** SQL of the merchant (store subscription) reads: plans, a subscription with its plan, a period's meters. */
import { isoColumn, type SqlQuery } from '../../db/sql.js';
import type { MeterMetric, PlanCode, SubscriptionStatus } from '../../entities/subscription.entity.js';

export interface PlanRow {
  id: string;
  code: PlanCode;
  name: string;
  price_in_cents: string;
  currency: string;
  quota_ai: number;
  quota_media: number;
  quota_notifications: number;
}

const PLAN_COLUMNS = 'p.id, p.code, p.name, p.price_in_cents::text as price_in_cents, p.currency, p.quota_ai, p.quota_media, p.quota_notifications';

export function plansQuery(): SqlQuery {
  return { sql: `select ${PLAN_COLUMNS} from subscription_plan p order by p.price_in_cents, p.code`, params: [] };
}

export function planByIdQuery(id: string): SqlQuery {
  return { sql: `select ${PLAN_COLUMNS} from subscription_plan p where p.id = ?::uuid`, params: [id] };
}

export interface SubscriptionRow extends PlanRow {
  subscription_id: string;
  store_id: string;
  plan_id: string;
  status: SubscriptionStatus;
  created_at_utc: string;
  updated_at_utc: string;
}

const SUBSCRIPTION_FROM = `select s.id as subscription_id, s.store_id, s.plan_id, s.status, ${isoColumn('s.created_at_utc')} as created_at_utc,
  ${isoColumn('s.updated_at_utc')} as updated_at_utc, ${PLAN_COLUMNS}
  from merchant_subscription s join subscription_plan p on p.id = s.plan_id`;

export function subscriptionByIdQuery(id: string): SqlQuery {
  return { sql: `${SUBSCRIPTION_FROM} where s.id = ?::uuid`, params: [id] };
}

export function subscriptionOfStoreQuery(storeId: string): SqlQuery {
  return { sql: `${SUBSCRIPTION_FROM} where s.store_id = ?::uuid`, params: [storeId] };
}

export function metersQuery(subscriptionId: string, periodStartUtc: Date): SqlQuery {
  return {
    sql: `select metric, recorded_usage::text as recorded_usage from consumption_meter where subscription_id = ?::uuid and period_start_utc = ?`,
    params: [subscriptionId, periodStartUtc],
  };
}
export interface MeterRow {
  metric: MeterMetric;
  recorded_usage: string;
}
