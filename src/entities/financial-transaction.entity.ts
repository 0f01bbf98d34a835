import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, statementTriggers } from './base.entity.js';
import { Territory } from './territory.entity.js';

/**
 * The spec's FinancialTransaction ("every amount is traced in a FinancialTransaction"; DESIGN section 13 "Ledger"):
 * the readable trace of each money movement, beside the ledger's balanced entries.
 * - CHECKOUT: what the buyer owes for one store's checkout (total); PENDING while awaiting payment.
 * - PAYMENT: the gateway's payment of it; PROCESSING at the gateway.
 * - SELLER: the seller's net of a paid sale; PENDING until paid out.
 * - PLATFORM_FEE: the fee the platform keeps of that sale (only when above zero).
 * - PAYOUT: a transfer to a seller.
 * - REFUND: a payment given back (a refunded checkout, or a late payment of a canceled one).
 */
export const FINANCIAL_TRANSACTION_TYPES = ['CHECKOUT', 'PAYMENT', 'SELLER', 'PLATFORM_FEE', 'PAYOUT', 'REFUND'] as const;
export type FinancialTransactionType = (typeof FINANCIAL_TRANSACTION_TYPES)[number];
export const FINANCIAL_TRANSACTION_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELED'] as const;
export type FinancialTransactionStatus = (typeof FINANCIAL_TRANSACTION_STATUSES)[number];
/** The record whose amount a financial transaction traces. */
export const FINANCIAL_RELATED_ENTITY_TYPES = ['CHECKOUT', 'PAYMENT', 'SELLER_TRANSACTION', 'PAYOUT'] as const;
export type FinancialRelatedEntityType = (typeof FINANCIAL_RELATED_ENTITY_TYPES)[number];

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * Written by PostgreSQL only: statement triggers on `checkout`, `payment`, `seller_transaction` and `payout`
 * (`financialTraceTriggers`, functions in Migration20261128190000) insert it when the record is created and move its
 * status when the record's status moves, in the same transaction, so no code path can move money untraced. One per
 * (type, related record).
 */
export const FinancialTransaction = defineEntity({
  name: 'FinancialTransaction',
  tableName: 'financial_transaction',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    type: p.string().length(20).$type<FinancialTransactionType>(),
    status: p.string().length(20).$type<FinancialTransactionStatus>(),
    amountInCents: p.bigint('number'),
    currency: p.string().length(3),
    relatedEntityType: p.string().length(30).$type<FinancialRelatedEntityType>(),
    relatedEntityId: p.uuid(),
    updatedAtUtc: p.datetime(),
  },
  checks: [
    { name: 'financial_transaction_type_check', expression: `type in (${list(FINANCIAL_TRANSACTION_TYPES)})` },
    { name: 'financial_transaction_status_check', expression: `status in (${list(FINANCIAL_TRANSACTION_STATUSES)})` },
    { name: 'financial_transaction_related_type_check', expression: `related_entity_type in (${list(FINANCIAL_RELATED_ENTITY_TYPES)})` },
    // Zero only for a seller's net when fees took the whole sale.
    { name: 'financial_transaction_amount_check', expression: 'amount_in_cents >= 0' },
  ],
  uniques: [{ name: 'financial_transaction_related_unique', properties: ['relatedEntityId', 'type'] }],
  indexes: [
    // The territory's trace, newest first.
    {
      name: 'financial_transaction_territory_idx',
      expression: `create index "financial_transaction_territory_idx" on "financial_transaction" ("territory_id", "created_at_utc" desc, "id" desc)`,
    },
  ],
});

/** Each status a financial transaction took, with its record's own status at that moment (`READY`, `REFUNDED`...). Append-only. */
export const FinancialTransactionStatusChange = defineEntity({
  name: 'FinancialTransactionStatusChange',
  tableName: 'financial_transaction_status_change',
  properties: {
    ...baseProperties,
    financialTransactionId: () => p.manyToOne(FinancialTransaction).mapToPk().fieldName('financial_transaction_id').deleteRule('cascade'),
    status: p.string().length(20).$type<FinancialTransactionStatus>(),
    entityStatus: p.string().length(30),
  },
  indexes: [
    {
      name: 'financial_transaction_status_change_idx',
      expression: `create index "financial_transaction_status_change_idx" on "financial_transaction_status_change" ("financial_transaction_id", "created_at_utc", "id")`,
    },
  ],
  triggers: [
    {
      name: 'financial_transaction_status_change_append_only',
      timing: 'before',
      events: ['update'],
      expression: `create trigger "financial_transaction_status_change_append_only" before update on "financial_transaction_status_change" for each row execute function ledger_refuse_change()`,
    },
  ],
});

/**
 * The AFTER INSERT and AFTER UPDATE statement triggers that trace `table`'s amounts (`financial_trace_<table>`,
 * Migration20261128190000), reading the transition tables `new_<rows>` and `old_<rows>`.
 */
export function financialTraceTriggers(table: string, rows: string) {
  return statementTriggers(table, `financial_trace_${table}`, rows, ['insert', 'update']);
}
