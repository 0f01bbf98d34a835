/**
 * SQL of the fiscal reads (a territory's pack binding and payment methods), and the read the checkout makes
 * (`enabledPaymentMethods`): other domains never type SQL against these tables themselves.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, isoColumn, runSql, type SqlQuery } from '../../db/sql.js';
import type { PaymentMethod } from '../../entities/checkout.entity.js';
import type { FiscalPackId, FiscalPackStatus } from '../../entities/fiscal.entity.js';

export interface FiscalPackRow {
  territory_id: string;
  pack_id: FiscalPackId;
  status: FiscalPackStatus;
  municipality_ibge: string | null;
  activated_by_user_id: string | null;
  activated_at_utc: string | null;
}

export function fiscalPackQuery(territoryId: string): SqlQuery {
  return {
    sql: `select territory_id, pack_id, status, municipality_ibge, activated_by_user_id, ${isoColumn('activated_at_utc')} as activated_at_utc
          from territory_fiscal_pack where territory_id = ?::uuid`,
    params: [territoryId],
  };
}

export interface PaymentMethodsRow {
  methods: PaymentMethod[];
  updated_at_utc: string;
}

export function paymentMethodsQuery(territoryId: string): SqlQuery {
  return {
    sql: `select methods, ${isoColumn('updated_at_utc')} as updated_at_utc from territory_payment_methods where territory_id = ?::uuid`,
    params: [territoryId],
  };
}

/** The advisory lock of a territory's fiscal configuration (its `?` is the territory id). */
export const FISCAL_LOCK_KEY = `hashtextextended('fiscal:' || ?, 0)`;

/**
 * The payment methods the territory configured; null when it never did (every method is accepted then). In `tx`,
 * after a shared hold on the territory's fiscal lock (the one its fiscal writes take): a change committed while the
 * checkout waited is read, and a change begun after waits for the checkout to commit.
 */
export async function enabledPaymentMethods(tx: EntityManager, territoryId: string): Promise<PaymentMethod[] | null> {
  await execSql(tx, `select pg_advisory_xact_lock_shared(${FISCAL_LOCK_KEY})`, [territoryId]);
  const [row] = await runSql<PaymentMethodsRow>(tx, paymentMethodsQuery(territoryId));
  return row ? row.methods : null;
}
