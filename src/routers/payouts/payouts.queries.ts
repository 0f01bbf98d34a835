/**
 * SQL of the payout reads: a territory's payout configuration (its one row) and pages of payouts, a territory's
 * through `payout_territory_idx`, a seller's through `payout_seller_idx` (test/money/seller-balance-indexes.test.ts).
 * Amounts leave as text (bigint cents) and are converted by the services.
 */
import { isoColumn, type SqlQuery } from '../../db/sql.js';
import type { PayoutFrequency } from '../../entities/payout-config.entity.js';
import type { PayoutStatus } from '../../entities/payout.entity.js';

export interface PayoutConfigRow {
  id: string;
  territory_id: string;
  retention_period_days: number;
  minimum_payout_amount_in_cents: string;
  maximum_payout_amount_in_cents: string | null;
  frequency: PayoutFrequency;
  auto_payout_enabled: boolean;
  requires_approval: boolean;
  currency: string;
  is_active: boolean;
  created_at_utc: string;
  updated_at_utc: string;
}

const CONFIG_COLUMNS = `id, territory_id, retention_period_days, minimum_payout_amount_in_cents::text as minimum_payout_amount_in_cents,
  maximum_payout_amount_in_cents::text as maximum_payout_amount_in_cents, frequency, auto_payout_enabled, requires_approval, currency, is_active,
  ${isoColumn('created_at_utc')} as created_at_utc, ${isoColumn('updated_at_utc')} as updated_at_utc`;

/** The territory's payout configuration (unique per territory): the active one, or, for its writer, the row locked. */
export const payoutConfigQuery = (territoryId: string, which: 'active' | 'for update'): SqlQuery => ({
  sql: `select ${CONFIG_COLUMNS} from payout_config where territory_id = ?::uuid ${which === 'active' ? 'and is_active' : 'for update'}`,
  params: [territoryId],
});

export interface PayoutRow {
  id: string;
  territory_id: string;
  seller_user_id: string;
  amount: string;
  currency: string;
  status: PayoutStatus;
  transaction_ids: string[];
  /** What it carries of each seller transaction (`payout_line`), in the order the run cut them. */
  lines: { transactionId: string; amountInCents: number }[];
  failure_reason: string | null;
  created_at: string;
  completed_at: string | null;
  /** How many payouts match, past the page too. */
  total: string;
}

const PAYOUT_COLUMNS = `id, territory_id, seller_user_id, amount_in_cents::text as amount, currency, status, transaction_ids, failure_reason,
  ${isoColumn('created_at_utc')} as created_at, ${isoColumn('completed_at_utc')} as completed_at, count(*) over ()::text as total`;

/** Which payouts a page lists: a condition on `payout` and its parameters. */
export type PayoutFilter = SqlQuery;

/** A territory's payouts, optionally of one status or seller. */
export const territoryPayouts = (territoryId: string, status: PayoutStatus | undefined, sellerUserId: string | undefined): PayoutFilter => ({
  sql: 'territory_id = ?::uuid and (?::text is null or status = ?::text) and (?::uuid is null or seller_user_id = ?::uuid)',
  params: [territoryId, status ?? null, status ?? null, sellerUserId ?? null, sellerUserId ?? null],
});

/** A seller's payouts in a territory. */
export const sellerPayouts = (sellerUserId: string, territoryId: string): PayoutFilter => ({
  sql: 'seller_user_id = ?::uuid and territory_id = ?::uuid',
  params: [sellerUserId, territoryId],
});

/**
 * A page of the payouts, newest first, each row with the number of all that match and its lines, read for the page's
 * rows only, in their order (through `payout_line_payout_seq_index`).
 */
export const payoutsPageQuery = (filter: PayoutFilter, page: { offset: number; limit: number }): SqlQuery => ({
  sql: `select p.*, (select coalesce(json_agg(json_build_object('transactionId', l.seller_transaction_id, 'amountInCents', l.amount_in_cents)
                                               order by l.seq), '[]'::json)
                       from payout_line l where l.payout_id = p.id) as lines
          from (select ${PAYOUT_COLUMNS}, created_at_utc from payout where ${filter.sql}
                 order by created_at_utc desc, id desc offset ?::int limit ?::int) p
         order by p.created_at_utc desc, p.id desc`,
  params: [...filter.params, page.offset, page.limit],
});

/** How many payouts match (a page past the last one has no row to carry it). */
export const payoutsCountQuery = (filter: PayoutFilter): SqlQuery => ({
  sql: `select count(*)::text as total from payout where ${filter.sql}`,
  params: filter.params,
});
