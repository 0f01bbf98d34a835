/**
 * Platform financial views of a territory (DESIGN section 13 "Platform financial views"), projected from the ledger
 * on every read: revenue = the platform_revenue entries (fees of paid sales; a refund is a negative line), expenses =
 * the seller_paid entries (payouts processed); and the financial transactions, the trace of every amount.
 * SYSTEM_ADMIN or FINANCIAL_MANAGER only.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, isoColumn, runSql, type SqlQuery } from '../../db/sql.js';
import type { LedgerAccountKind } from '../../entities/ledger.entity.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { DEFAULT_CURRENCY } from '../../platform/currency.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { activePayoutConfig, MARKETPLACE, requireFinance } from '../payouts/payout-config.service.js';
import { notFound } from '../../platform/problems.js';
import type {
  FinanceBalanceInput,
  FinanceListInput,
  FinancialTransactionDetailOutput,
  FinancialTransactionInput,
  FinancialTransactionListInput,
  FinancialTransactionOutput,
  PlatformBalanceOutput,
} from './finance.schemas.js';

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

interface FinancialTransactionRow {
  id: string;
  territory_id: string;
  type: FinancialTransactionOutput['type'];
  status: FinancialTransactionOutput['status'];
  amount: string;
  currency: string;
  related_entity_type: FinancialTransactionOutput['relatedEntityType'];
  related_entity_id: string;
  created_at: string;
  updated_at: string;
}

const FINANCIAL_TRANSACTION_COLUMNS = `id, territory_id, type, status, amount_in_cents::text as amount, currency, related_entity_type, related_entity_id,
  ${isoColumn('created_at_utc')} as created_at, ${isoColumn('updated_at_utc')} as updated_at`;

const financialTransaction = (r: FinancialTransactionRow): FinancialTransactionOutput => ({
  id: r.id,
  territoryId: r.territory_id,
  type: r.type,
  status: r.status,
  amountInCents: Number(r.amount),
  currency: r.currency,
  relatedEntityType: r.related_entity_type,
  relatedEntityId: r.related_entity_id,
  createdAtUtc: r.created_at,
  updatedAtUtc: r.updated_at,
});

/**
 * What a list of financial transactions (the trace PostgreSQL keeps of every amount, see
 * src/entities/financial-transaction.entity.ts) is filtered by: the territory and the list's own filters.
 */
function financialTransactionFilter(territoryId: string, input: FinancialTransactionListInput): SqlQuery {
  return {
    sql: `territory_id = ? and (?::text is null or type = ?) and (?::text is null or status = ?) and (?::uuid is null or related_entity_id = ?)
      and (?::text is null or currency = ?) and (?::timestamptz is null or created_at_utc >= ?::timestamptz) and (?::timestamptz is null or created_at_utc < ?::timestamptz)`,
    params: [
      territoryId,
      ...[input.type, input.status, input.relatedEntityId, input.currency, input.fromUtc, input.toUtc].flatMap((v) => [v ?? null, v ?? null]),
    ],
  };
}

/** A page of financial transactions, newest first, with the count of all that match (the territory index walked backwards). */
export function financialTransactionsPageQuery(territoryId: string, input: FinancialTransactionListInput, offset: number, limit: number): SqlQuery {
  const filter = financialTransactionFilter(territoryId, input);
  return {
    sql: `select ${FINANCIAL_TRANSACTION_COLUMNS}, count(*) over ()::text as total from financial_transaction
           where ${filter.sql} order by created_at_utc desc, id desc offset ? limit ?`,
    params: [...filter.params, offset, limit],
  };
}

/** The territory's financial transactions, newest first, paged. */
export async function listFinancialTransactions(ctx: ServiceContext, input: FinancialTransactionListInput) {
  const territoryId = await access(ctx, input.territoryId);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const rows = await runSql<FinancialTransactionRow & { total: string }>(ctx.em, financialTransactionsPageQuery(territoryId, input, offset, limit));
  let total = Number(rows[0]?.total ?? 0);
  if (rows.length === 0 && offset > 0) {
    const filter = financialTransactionFilter(territoryId, input);
    const [count] = await execSql<{ total: string }>(ctx.em, `select count(*)::text as total from financial_transaction where ${filter.sql}`, filter.params);
    total = Number(count?.total ?? 0);
  }
  return toPage(rows.map(financialTransaction), total, input.pageNumber, input.pageSize);
}

/** One financial transaction of the territory with its status history, oldest first; 404 for one of another territory. */
export async function getFinancialTransaction(ctx: ServiceContext, input: FinancialTransactionInput): Promise<FinancialTransactionDetailOutput> {
  const territoryId = await access(ctx, input.territoryId);
  const [row] = await execSql<FinancialTransactionRow>(
    ctx.em,
    `select ${FINANCIAL_TRANSACTION_COLUMNS} from financial_transaction where id = ? and territory_id = ?`,
    [input.financialTransactionId, territoryId],
  );
  if (!row) throw notFound('Financial transaction');
  const history = await execSql<{ status: FinancialTransactionOutput['status']; entity_status: string; changed_at: string }>(
    ctx.em,
    `select status, entity_status, ${isoColumn('created_at_utc')} as changed_at from financial_transaction_status_change
      where financial_transaction_id = ? order by created_at_utc, id`,
    [row.id],
  );
  return {
    ...financialTransaction(row),
    statusHistory: history.map((h) => ({ status: h.status, entityStatus: h.entity_status, changedAtUtc: h.changed_at })),
  };
}
