/**
 * Seller balances (DESIGN section 13 "Balances"): projections of the seller's ledger accounts, read on every call,
 * never stored. The balance id (also the wallet id) is the id of the seller's `seller_pending` account of the
 * territory and currency, which exists from the first paid sale on.
 */
import { managerOf } from '../../db/request-manager.js';
import { type HotReadSource, runHotRead } from '../../db/sql.js';
import type { SellerTransactionStatus } from '../../entities/checkout.entity.js';
import { forbidden, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { ledgerAccountId } from '../ledger/ledger.js';
import { MARKETPLACE } from './payout-config.service.js';
import type { SellerBalanceInput, SellerBalanceOutput, SellerTransactionOutput, SellerTransactionsInput, WalletOutput } from './payouts.schemas.js';
import {
  balanceAccountQuery,
  latestSellerCurrencyQuery,
  sellerBalanceSumsQuery,
  sellerCurrenciesQuery,
  sellerInTransitQuery,
  sellerPendingAccountQuery,
  sellerSaleInCurrencyQuery,
  sellerTransactionsQuery,
} from './seller-balance.queries.js';

const noBalance = () => notFound('Seller balance', 'NO_SELLER_BALANCE');

/** One balance: the seller's money in one territory and one currency (the answer adds the seller's other currencies). */
export type SellerBalance = Omit<SellerBalanceOutput, 'currencies'>;

/**
 * The projection of the seller accounts of (territory, currency, owner) named by its seller_pending account. Given a
 * request's context, its reads run on the pool.
 */
async function projectBalance(source: HotReadSource, balanceId: string): Promise<SellerBalance | null> {
  const [account] = await runHotRead<{ territory_id: string; currency: string; owner_user_id: string; created_at_utc: string }>(
    source,
    balanceAccountQuery(balanceId),
    { prepared: true },
  );
  if (!account) return null;
  const sums = await runHotRead<{ kind: string; total: string; last: string | null }>(
    source,
    sellerBalanceSumsQuery(account.territory_id, account.currency, account.owner_user_id),
  );
  const total = (kind: string) => Number(sums.find((s) => s.kind === kind)?.total ?? 0);
  const [transit] = await runHotRead<{ total: string }>(source, sellerInTransitQuery(account.territory_id, account.currency, account.owner_user_id));
  const last = sums.map((s) => s.last).filter((v): v is string => v !== null);
  return {
    id: balanceId,
    territoryId: account.territory_id,
    sellerUserId: account.owner_user_id,
    pendingAmountInCents: total('seller_pending'),
    readyForPayoutAmountInCents: total('seller_ready'),
    inTransitAmountInCents: Number(transit?.total ?? 0),
    paidAmountInCents: total('seller_paid'),
    currency: account.currency,
    updatedAtUtc: last.length > 0 ? last.sort().at(-1)! : account.created_at_utc,
  };
}

/**
 * The seller's balance in the territory in `currency`, or, without one, in the currency of their latest sale; null
 * before the first paid sale (in that currency). The seller_pending account is resolved (created on first use,
 * idempotently), so a sale whose whole amount went to fees still has a balance. It is looked up first (a prepared key
 * lookup), so reading a balance writes nothing once the account exists; a currency asked for without an account is
 * checked against the seller's sales before one is created, so asking never opens a balance the seller has no sale in.
 */
export async function sellerBalanceOf(source: HotReadSource, territoryId: string, sellerUserId: string, currency?: string): Promise<SellerBalance | null> {
  let wanted = currency;
  if (wanted === undefined) {
    const [latest] = await runHotRead<{ currency: string }>(source, latestSellerCurrencyQuery(territoryId, sellerUserId));
    if (!latest) return null;
    wanted = latest.currency;
  }
  const [account] = await runHotRead<{ id: string }>(source, sellerPendingAccountQuery(territoryId, wanted, sellerUserId), { prepared: true });
  if (!account && currency !== undefined) {
    const [sale] = await runHotRead<{ found: number }>(source, sellerSaleInCurrencyQuery(territoryId, sellerUserId, currency));
    if (!sale) return null;
  }
  const id = account?.id ?? (await ledgerAccountId(managerOf(source), territoryId, wanted, { kind: 'seller_pending', ownerUserId: sellerUserId }));
  return projectBalance(source, id);
}

/**
 * `GET .../seller-balance/me[?currency=]`: the balance in one currency (DESIGN section 13: amounts of different
 * currencies are never summed) and the list of the seller's currencies, so money in another currency is always
 * reachable; 404 NO_SELLER_BALANCE before the first paid sale, or before the first one in the currency asked for.
 */
export async function getMySellerBalance(ctx: ServiceContext, input: SellerBalanceInput): Promise<SellerBalanceOutput> {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  const balance = await sellerBalanceOf(ctx, access.territoryId, ctx.user.id, input.currency);
  if (!balance) throw noBalance();
  // Read after the balance, which may just have opened its currency's account.
  const currencies = await runHotRead<{ currency: string }>(ctx, sellerCurrenciesQuery(access.territoryId, ctx.user.id));
  return { ...balance, currencies: currencies.map((c) => c.currency) };
}

interface SellerTransactionRow {
  id: string;
  territory_id: string;
  store_id: string;
  checkout_id: string;
  seller_user_id: string;
  gross: string;
  fee: string;
  net: string;
  currency: string;
  status: SellerTransactionStatus;
  ready_at: string;
  payout_id: string | null;
  paid_at: string;
  created_at: string;
  updated_at: string;
}

/**
 * `GET .../seller-balance/me/transactions?skip&take`: the seller's transactions in the territory, newest first (id
 * breaking ties); 404 NO_SELLER_BALANCE before the first paid sale. A page past the last one is empty (200): only an
 * empty first page, or an empty later page of a seller without any sale, means an empty ledger.
 */
export async function getMySellerTransactions(ctx: ServiceContext, input: SellerTransactionsInput): Promise<SellerTransactionOutput[]> {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  const rows = await runHotRead<SellerTransactionRow>(ctx, sellerTransactionsQuery(access.territoryId, ctx.user.id, { offset: input.skip, limit: input.take }));
  if (rows.length === 0) {
    const [anySale] = input.skip === 0 ? [] : await runHotRead<{ currency: string }>(ctx, latestSellerCurrencyQuery(access.territoryId, ctx.user.id));
    if (!anySale) throw noBalance();
    return [];
  }
  return rows.map((r) => ({
    id: r.id,
    territoryId: r.territory_id,
    storeId: r.store_id,
    checkoutId: r.checkout_id,
    sellerUserId: r.seller_user_id,
    grossAmountInCents: Number(r.gross),
    platformFeeInCents: Number(r.fee),
    netAmountInCents: Number(r.net),
    currency: r.currency,
    status: r.status,
    readyForPayoutAtUtc: r.ready_at,
    payoutId: r.payout_id,
    paidAtUtc: r.paid_at,
    createdAtUtc: r.created_at,
    updatedAtUtc: r.updated_at,
  }));
}

/** `GET /api/v1/wallets/{walletId}`: the seller balance by id, for its holder only (403); unknown 404. */
export async function getWallet(ctx: ServiceContext, input: { walletId: string }): Promise<WalletOutput> {
  const balance = await projectBalance(ctx, input.walletId);
  if (!balance) throw notFound('Wallet');
  if (balance.sellerUserId !== ctx.user.id) throw forbidden('Only the holder of a wallet can read it.');
  await requireTerritory(ctx, balance.territoryId, { flag: MARKETPLACE, status: 'ANY' });
  const cents = balance.pendingAmountInCents + balance.readyForPayoutAmountInCents;
  return {
    id: balance.id,
    ownerType: 'seller',
    ownerId: balance.sellerUserId,
    territoryId: balance.territoryId,
    balance: cents / 100,
    currency: balance.currency,
    updatedAtUtc: balance.updatedAtUtc,
  };
}
