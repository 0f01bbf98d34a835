import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

/** DESIGN section 13 "Payout jobs": PENDING (claimed, not yet accepted by the gateway) -> PROCESSING -> COMPLETED | FAILED. */
export const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];
/** The payout gateways that can have transferred a payout. */
export const PAYOUT_PROVIDERS = ['fake'] as const;
export type PayoutProvider = (typeof PAYOUT_PROVIDERS)[number];

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * One transfer to a seller: some of their READY seller transactions (never a part of one), in one currency. Written
 * by the payouts jobs only. Its id is the gateway's idempotency key, so a run retried after a crash asks the gateway
 * for the same transfer again instead of a second one. `transactionIds` keeps what the payout carried even after a
 * failure gives the transactions back (their `payout_id` is cleared then); a transaction is in at most one live
 * payout because claiming it is a compare-and-set on `seller_transaction.payout_id` under its row lock. PostgreSQL
 * checks that each status has its timestamps, and the gateway's reference is unique.
 */
export const Payout = defineEntity({
  name: 'Payout',
  tableName: 'payout',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    // No cascade: a payout is a money record, it outlives the account (users are anonymised, never deleted).
    sellerUserId: () => p.manyToOne(User).mapToPk().fieldName('seller_user_id').deleteRule('no action'),
    amountInCents: p.bigint('number'),
    currency: p.string().length(3),
    status: p.string().length(20).$type<PayoutStatus>(),
    transactionIds: p.array().$type<string[]>(),
    /** The gateway that accepted it; null while PENDING. */
    provider: p.string().length(20).$type<PayoutProvider>().nullable(),
    /** The gateway's id of the transfer; null while PENDING. */
    gatewayReference: p.string().length(200).nullable().unique(),
    failureReason: p.string().length(500).nullable(),
    submittedAtUtc: p.datetime().nullable(),
    completedAtUtc: p.datetime().nullable(),
    failedAtUtc: p.datetime().nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [
    { name: 'payout_status_check', expression: `status in (${list(PAYOUT_STATUSES)})` },
    { name: 'payout_amount_check', expression: 'amount_in_cents > 0' },
    { name: 'payout_currency_check', expression: `currency ~ '^[A-Z]{3}$'` },
    { name: 'payout_transactions_check', expression: 'cardinality(transaction_ids) >= 1' },
    { name: 'payout_submitted_check', expression: `(status = 'PENDING') = (gateway_reference is null)` },
    { name: 'payout_completed_check', expression: `(status = 'COMPLETED') = (completed_at_utc is not null)` },
    { name: 'payout_failed_check', expression: `(status = 'FAILED') = (failed_at_utc is not null)` },
  ],
  indexes: [
    // The territory's payouts and the seller's own, newest first.
    { name: 'payout_territory_idx', expression: `create index "payout_territory_idx" on "payout" ("territory_id", "created_at_utc" desc, "id" desc)` },
    {
      name: 'payout_seller_idx',
      expression: `create index "payout_seller_idx" on "payout" ("seller_user_id", "territory_id", "created_at_utc" desc, "id" desc)`,
    },
    // What the jobs still have to submit or settle.
    {
      name: 'payout_open_idx',
      expression: `create index "payout_open_idx" on "payout" ("status", "created_at_utc") where status in ('PENDING', 'PROCESSING')`,
    },
  ],
});
