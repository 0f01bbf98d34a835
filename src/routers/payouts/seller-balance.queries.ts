/**
 * The reads behind the seller balance and its transactions (DESIGN section 13 "Balances"), as query builders so
 * test/money/seller-balance-indexes.test.ts can EXPLAIN exactly what the service sends. Each is index-backed however
 * large the ledger grows: the seller's accounts through `ledger_account_unique` / `ledger_account_owner_user_id_index`
 * and their entries through `ledger_entry_account_id_index`; the open payouts through `payout_seller_idx`; the seller
 * transactions through `seller_transaction_seller_idx`.
 */
import { isoColumn, type SqlQuery } from '../../db/sql.js';
import { DEFAULT_PAGE_SIZE } from '../../platform/pagination.js';

/** When a seller transaction leaves pending: its recorded time, or the payment time plus the territory's retention period, whichever is later. */
export const EFFECTIVE_READY_AT = `greatest(st.ready_for_payout_at_utc,
  st.paid_at_utc + make_interval(days => coalesce((select pc.retention_period_days from payout_config pc where pc.territory_id = st.territory_id and pc.is_active), 0)))`;

/** The currency of the seller's latest sale in the territory (none before the first paid sale). */
export const latestSellerCurrencyQuery = (territoryId: string, sellerUserId: string): SqlQuery => ({
  sql: 'select currency from seller_transaction where territory_id = ? and seller_user_id = ? order by created_at_utc desc, id desc limit 1',
  params: [territoryId, sellerUserId],
});

/**
 * Whether the seller sold in this currency in the territory (a sale whose whole amount went to fees has no account
 * yet). Read only when the seller_pending account of the currency is missing, through `seller_transaction_seller_idx`.
 */
export const sellerSaleInCurrencyQuery = (territoryId: string, sellerUserId: string, currency: string): SqlQuery => ({
  sql: 'select 1 as found from seller_transaction where territory_id = ? and seller_user_id = ? and currency = ? limit 1',
  params: [territoryId, sellerUserId, currency],
});

/**
 * The currencies of the seller's balances in the territory: those of their seller_pending accounts (money always
 * enters a seller's balance there first), through `ledger_account_owner_user_id_index`.
 */
export const sellerCurrenciesQuery = (territoryId: string, sellerUserId: string): SqlQuery => ({
  sql: `select currency from ledger_account where owner_user_id = ?::uuid and territory_id = ?::uuid and kind = 'seller_pending' order by currency`,
  params: [sellerUserId, territoryId],
});

/** The id of the seller's seller_pending account of the territory and currency (`ledger_account_unique`); none before it is created. */
export const sellerPendingAccountQuery = (territoryId: string, currency: string, sellerUserId: string): SqlQuery => ({
  sql: `select id from ledger_account where territory_id = ?::uuid and currency = ? and kind = 'seller_pending' and owner_user_id = ?::uuid`,
  params: [territoryId, currency, sellerUserId],
});

/** The seller_pending account that names a balance (its id is the balance and wallet id). */
export const balanceAccountQuery = (balanceId: string): SqlQuery => ({
  sql: `select territory_id, currency, owner_user_id, ${isoColumn('created_at_utc')} as created_at_utc from ledger_account where id = ? and kind = 'seller_pending'`,
  params: [balanceId],
});

/** The sums (and latest entry time) of the seller's pending, ready and paid accounts: the balance is this projection. */
export const sellerBalanceSumsQuery = (territoryId: string, currency: string, sellerUserId: string): SqlQuery => ({
  sql: `select a.kind, coalesce(sum(e.amount_in_cents), 0)::text as total, ${isoColumn('max(e.created_at_utc)')} as last
          from ledger_account a left join ledger_entry e on e.account_id = a.id
         where a.territory_id = ? and a.currency = ? and a.owner_user_id = ? and a.kind in ('seller_pending', 'seller_ready', 'seller_paid')
         group by a.kind`,
  params: [territoryId, currency, sellerUserId],
});

/**
 * The seller's money in transit: the platform's payouts_in_transit account holds every seller's open payouts, so the
 * seller's part is the amounts of their payouts not settled yet (written in the same transactions as those entries).
 */
export const sellerInTransitQuery = (territoryId: string, currency: string, sellerUserId: string): SqlQuery => ({
  sql: `select coalesce(sum(amount_in_cents), 0)::text as total from payout
         where seller_user_id = ? and territory_id = ? and currency = ? and status in ('PENDING', 'PROCESSING')`,
  params: [sellerUserId, territoryId, currency],
});

/**
 * A page of the seller's transactions in the territory, newest first (a pending one shows when it becomes ready under
 * the current retention). The id breaks ties of the creation time, so pages neither repeat nor skip a row; the index
 * (seller, territory, created_at_utc desc) hands the rows over in that order and only equal times are sorted.
 */
export const sellerTransactionsQuery = (
  territoryId: string,
  sellerUserId: string,
  page: { offset: number; limit: number } = { offset: 0, limit: DEFAULT_PAGE_SIZE },
): SqlQuery => ({
  sql: `select st.id, st.territory_id, st.store_id, st.checkout_id, st.seller_user_id, st.gross_amount_in_cents::text as gross,
               st.platform_fee_in_cents::text as fee, st.net_amount_in_cents::text as net, st.currency, st.status,
               ${isoColumn(`(case when st.status = 'PENDING' then ${EFFECTIVE_READY_AT} else st.ready_for_payout_at_utc end)`)} as ready_at,
               st.payout_id, ${isoColumn('st.paid_at_utc')} as paid_at, ${isoColumn('st.created_at_utc')} as created_at, ${isoColumn('st.updated_at_utc')} as updated_at
          from seller_transaction st
         where st.territory_id = ? and st.seller_user_id = ?
         order by st.created_at_utc desc, st.id desc
         offset ?::int limit ?::int`,
  params: [territoryId, sellerUserId, page.offset, page.limit],
});
