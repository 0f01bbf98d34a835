import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, textArray } from './base.entity.js';
import { SellerTransaction } from './checkout.entity.js';
import { financialTraceTriggers } from './financial-transaction.entity.js';
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
 * One transfer to a seller, of at most the territory's maximum (spec Payout rule 4): amounts of their READY seller
 * transactions in one currency, one `PayoutLine` per transaction carried, so a transaction larger than the maximum is
 * paid in several payouts. Written by the payouts jobs only. Its id is the gateway's idempotency key, so a run retried
 * after a crash asks the gateway for the same transfer again instead of a second one. `transactionIds` lists the
 * transactions of its lines (kept after a failure gives their amounts back). PostgreSQL checks that each status has
 * its timestamps, that the gateway's reference is unique, and (trigger `payout_status_transition`) that a payout only
 * moves PENDING -> PROCESSING -> COMPLETED | FAILED, with its amount, seller, territory, currency and transactions
 * never changed: FAILED is final, which is what lets a failed payout's lines stop counting.
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
    transactionIds: textArray().$type<string[]>(),
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
  triggers: [
    {
      name: 'payout_status_transition',
      timing: 'before',
      events: ['update'],
      expression: `create trigger "payout_status_transition" before update on "payout" for each row execute function payout_status_transition()`,
    },
    ...financialTraceTriggers('payout', 'payouts'),
  ],
});

/**
 * What one payout carries of one seller transaction (integer cents; 0 only for a transaction whose whole amount went
 * to fees, which rides along to become PAID). A transaction's unpaid amount is its net minus its lines in live
 * (not FAILED) payouts; it is PAID when its lines in COMPLETED payouts add up to its net. Lines are written by the
 * payout claim only, under the seller transaction's row lock, and never changed. PostgreSQL checks at commit (the
 * deferred constraint trigger `payout_line_check`, which takes the transaction's row lock itself) that a payout's
 * lines add up to its amount and are the transactions of its `transactionIds` (checked once per payout, by its last
 * line), belong to its seller, territory and currency and to a READY transaction, and that a transaction's lines in
 * live payouts never exceed its net: no amount is paid twice. The unique (payout, transaction) pair makes a line once
 * per payout.
 */
export const PayoutLine = defineEntity({
  name: 'PayoutLine',
  tableName: 'payout_line',
  properties: {
    ...baseProperties,
    payoutId: () => p.manyToOne(Payout).mapToPk().fieldName('payout_id').deleteRule('cascade'),
    sellerTransactionId: () => p.manyToOne(SellerTransaction).mapToPk().fieldName('seller_transaction_id').deleteRule('cascade').index(),
    amountInCents: p.bigint('number'),
    /** Numbered by the trigger `payout_line_number` under the payout's row lock: a payout's lines in commit order. */
    seq: p.bigint('number'),
  },
  checks: [{ name: 'payout_line_amount_check', expression: 'amount_in_cents >= 0' }],
  uniques: [{ name: 'payout_line_payout_transaction_unique', properties: ['payoutId', 'sellerTransactionId'] }],
  // A payout's lines in order; its last line (`payout_line_check` sums the lines once per payout, by that line).
  indexes: [{ name: 'payout_line_payout_seq_index', properties: ['payoutId', 'seq'] }],
  triggers: [
    {
      name: 'payout_line_number',
      timing: 'before',
      events: ['insert'],
      expression: `create trigger "payout_line_number" before insert on "payout_line" for each row execute function payout_line_number()`,
    },
    {
      name: 'payout_line_check',
      timing: 'after',
      events: ['insert'],
      expression: `create constraint trigger "payout_line_check" after insert on "payout_line" deferrable initially deferred for each row execute function payout_line_check()`,
    },
    {
      name: 'payout_line_append_only',
      timing: 'before',
      events: ['update'],
      expression: `create trigger "payout_line_append_only" before update on "payout_line" for each row execute function payout_line_refuse_update()`,
    },
  ],
});
