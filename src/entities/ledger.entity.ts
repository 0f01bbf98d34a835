import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

/** Platform accounts (one per territory and currency) and per-seller accounts (DESIGN section 13 "Ledger"). */
export const PLATFORM_ACCOUNT_KINDS = ['gateway_clearing', 'platform_revenue', 'payouts_in_transit'] as const;
export const SELLER_ACCOUNT_KINDS = ['seller_pending', 'seller_ready', 'seller_paid'] as const;
export const LEDGER_ACCOUNT_KINDS = [...PLATFORM_ACCOUNT_KINDS, ...SELLER_ACCOUNT_KINDS] as const;
export type LedgerAccountKind = (typeof LEDGER_ACCOUNT_KINDS)[number];

// The trigger functions are created by the ledger migration (MikroORM does not manage routines here).
const appendOnly = (table: string) =>
  `create trigger "${table}_append_only" before update or delete on "${table}" for each row execute function ledger_refuse_change()`;

/**
 * A ledger account: unique per (territory, currency, kind, owner), NULL owners equal (`nulls not distinct`), so
 * concurrent look-ups create it once. Balances are sums of its entries, never stored.
 */
export const LedgerAccount = defineEntity({
  name: 'LedgerAccount',
  tableName: 'ledger_account',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id'),
    currency: p.string().length(3),
    kind: p.string().length(30).$type<LedgerAccountKind>(),
    // No cascade: accounts outlive anything they refer to (users are anonymised, never deleted).
    ownerUserId: () => p.manyToOne(User).mapToPk().fieldName('owner_user_id').nullable().deleteRule('no action').index(),
  },
  checks: [
    { name: 'ledger_account_kind_check', expression: `kind in (${LEDGER_ACCOUNT_KINDS.map((k) => `'${k}'`).join(', ')})` },
    // Seller accounts have an owner, platform accounts none.
    { name: 'ledger_account_owner_check', expression: `(owner_user_id is not null) = (kind in (${SELLER_ACCOUNT_KINDS.map((k) => `'${k}'`).join(', ')}))` },
    { name: 'ledger_account_currency_check', expression: `currency ~ '^[A-Z]{3}$'` },
  ],
  uniques: [
    {
      name: 'ledger_account_unique',
      expression: `create unique index "ledger_account_unique" on "ledger_account" ("territory_id", "currency", "kind", "owner_user_id") nulls not distinct`,
    },
  ],
});

/**
 * One ledger transaction: a set of entries that sums to zero per currency (checked by PostgreSQL at commit). The
 * idempotency key (`checkout:{id}:paid`...) is unique, so a money movement is recorded at most once.
 */
export const LedgerTransaction = defineEntity({
  name: 'LedgerTransaction',
  tableName: 'ledger_transaction',
  properties: {
    ...baseProperties,
    idempotencyKey: p.string().length(200).unique(),
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').index(),
  },
  triggers: [
    // A transaction without entries would record nothing: refused at commit.
    {
      name: 'ledger_transaction_has_entries',
      timing: 'after',
      events: ['insert'],
      expression: `create constraint trigger "ledger_transaction_has_entries" after insert on "ledger_transaction" deferrable initially deferred for each row execute function ledger_check_transaction_has_entries()`,
    },
    { name: 'ledger_transaction_append_only', timing: 'before', events: ['update', 'delete'], expression: appendOnly('ledger_transaction') },
  ],
});

/** One signed amount (integer cents) on one account. Append-only: PostgreSQL refuses UPDATE and DELETE. */
export const LedgerEntry = defineEntity({
  name: 'LedgerEntry',
  tableName: 'ledger_entry',
  properties: {
    ...baseProperties,
    transactionId: () => p.manyToOne(LedgerTransaction).mapToPk().fieldName('transaction_id').index(),
    accountId: () => p.manyToOne(LedgerAccount).mapToPk().fieldName('account_id').index(),
    amountInCents: p.bigint('number'),
    currency: p.string().length(3),
  },
  checks: [{ name: 'ledger_entry_amount_check', expression: 'amount_in_cents <> 0' }],
  triggers: [
    // Sum zero per currency for each ledger transaction, and each entry in its account's currency: at commit.
    {
      name: 'ledger_entry_balanced',
      timing: 'after',
      events: ['insert'],
      expression: `create constraint trigger "ledger_entry_balanced" after insert on "ledger_entry" deferrable initially deferred for each row execute function ledger_check_balanced()`,
    },
    { name: 'ledger_entry_append_only', timing: 'before', events: ['update', 'delete'], expression: appendOnly('ledger_entry') },
  ],
});
