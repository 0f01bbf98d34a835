/**
 * Platform financial views of a territory (DESIGN section 13 "Platform financial views"), projected from the ledger
 * on every read: revenue = the platform_revenue entries (fees of paid sales; a refund is a negative line), expenses =
 * the seller_paid entries (payouts processed). SYSTEM_ADMIN or FINANCIAL_MANAGER only.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, isoColumn } from '../../db/sql.js';
import type { LedgerAccountKind } from '../../entities/ledger.entity.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { DEFAULT_CURRENCY } from '../../platform/currency.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { activePayoutConfig, MARKETPLACE, requireFinance } from '../payouts/payout-config.service.js';
import type { FinanceBalanceInput, FinanceListInput, PlatformBalanceOutput } from './finance.schemas.js';

async function access(ctx: ServiceContext, territoryId: string) {
  const territory = await requireTerritory(ctx, territoryId, { flag: MARKETPLACE });
  requireFinance(ctx, "read the platform's finances");
  return territory.territoryId;
}

/** The currency asked for, else the payout configuration's, else that of the territory's latest platform account, else BRL. */
async function currencyOf(em: EntityManager, territoryId: string, asked: string | undefined): Promise<string> {
  if (asked) return asked;
  const config = await activePayoutConfig(em, territoryId);
  if (config) return config.currency;
  const [row] = await execSql<{ currency: string }>(
    em,
    `select currency from ledger_account where territory_id = ? and kind = 'platform_revenue' order by created_at_utc desc, id desc limit 1`,
    [territoryId],
  );
  return row?.currency ?? DEFAULT_CURRENCY;
}

async function sumOf(em: EntityManager, territoryId: string, currency: string, kind: LedgerAccountKind): Promise<number> {
  const [row] = await execSql<{ total: string }>(
    em,
    `select coalesce(sum(e.amount_in_cents), 0)::text as total from ledger_entry e join ledger_account a on a.id = e.account_id
      where a.territory_id = ? and a.currency = ? and a.kind = ?`,
    [territoryId, currency, kind],
  );
  return Number(row?.total ?? 0);
}

export async function getPlatformBalance(ctx: ServiceContext, input: FinanceBalanceInput): Promise<PlatformBalanceOutput> {
  const territoryId = await access(ctx, input.territoryId);
  const currency = await currencyOf(ctx.em, territoryId, input.currency);
  const totalRevenueInCents = await sumOf(ctx.em, territoryId, currency, 'platform_revenue');
  const totalExpensesInCents = await sumOf(ctx.em, territoryId, currency, 'seller_paid');
  return { territoryId, totalRevenueInCents, totalExpensesInCents, netBalanceInCents: totalRevenueInCents - totalExpensesInCents, currency };
}

interface LineRow {
  id: string;
  ref: string | null;
  amount: string;
  currency: string;
  created_at: string;
  total: string;
}

/** The entries of `kind` accounts of the territory and currency in [fromUtc, toUtc), newest first, paged. */
async function lines(ctx: ServiceContext, input: FinanceListInput, kind: LedgerAccountKind, keyPrefix: string) {
  const territoryId = await access(ctx, input.territoryId);
  const currency = await currencyOf(ctx.em, territoryId, input.currency);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const rows = await execSql<LineRow>(
    ctx.em,
    `select e.id, substring(x.idempotency_key from '^${keyPrefix}:([0-9a-f-]{36}):') as ref, e.amount_in_cents::text as amount, e.currency,
            ${isoColumn('e.created_at_utc')} as created_at, count(*) over ()::text as total
       from ledger_entry e join ledger_account a on a.id = e.account_id join ledger_transaction x on x.id = e.transaction_id
      where a.territory_id = ? and a.currency = ? and a.kind = ?
        and (?::timestamptz is null or e.created_at_utc >= ?::timestamptz) and (?::timestamptz is null or e.created_at_utc < ?::timestamptz)
      order by e.created_at_utc desc, e.id desc offset ? limit ?`,
    [territoryId, currency, kind, input.fromUtc ?? null, input.fromUtc ?? null, input.toUtc ?? null, input.toUtc ?? null, offset, limit],
  );
  let total = Number(rows[0]?.total ?? 0);
  if (rows.length === 0 && offset > 0) {
    const [count] = await execSql<{ total: string }>(
      ctx.em,
      `select count(*)::text as total from ledger_entry e join ledger_account a on a.id = e.account_id
        where a.territory_id = ? and a.currency = ? and a.kind = ?
          and (?::timestamptz is null or e.created_at_utc >= ?::timestamptz) and (?::timestamptz is null or e.created_at_utc < ?::timestamptz)`,
      [territoryId, currency, kind, input.fromUtc ?? null, input.fromUtc ?? null, input.toUtc ?? null, input.toUtc ?? null],
    );
    total = Number(count?.total ?? 0);
  }
  return { rows, total };
}

export async function getPlatformRevenue(ctx: ServiceContext, input: FinanceListInput) {
  const { rows, total } = await lines(ctx, input, 'platform_revenue', 'checkout');
  const items = rows.map((r) => ({ id: r.id, checkoutId: r.ref, amountInCents: Number(r.amount), currency: r.currency, createdAtUtc: r.created_at }));
  return toPage(items, total, input.pageNumber, input.pageSize);
}

export async function getPlatformExpenses(ctx: ServiceContext, input: FinanceListInput) {
  const { rows, total } = await lines(ctx, input, 'seller_paid', 'payout');
  const items = rows.map((r) => ({ id: r.id, payoutId: r.ref, amountInCents: Number(r.amount), currency: r.currency, createdAtUtc: r.created_at }));
  return toPage(items, total, input.pageNumber, input.pageSize);
}
