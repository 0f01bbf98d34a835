import { Migration } from '@mikro-orm/migrations';

/** The tables whose amounts are traced, with the name of their transition tables (src/entities/financial-transaction.entity.ts). */
const TRACED: ReadonlyArray<readonly [table: string, rows: string]> = [
  ['checkout', 'checkouts'],
  ['payment', 'payments'],
  ['seller_transaction', 'seller_transactions'],
  ['payout', 'payouts'],
];

/**
 * What the rows of each traced table say as financial transactions; `rows` is the SQL of a set of its rows (a
 * transition table, or the table itself).
 */
const FACTS: Record<string, (rows: string) => string> = {
  checkout: (rows) => `
    select n.territory_id, 'CHECKOUT' as type,
           case n.status when 'AWAITING_PAYMENT' then 'PENDING' when 'PAYMENT_FAILED' then 'FAILED' when 'CANCELED' then 'CANCELED' else 'COMPLETED' end as status,
           n.status as entity_status, n.total_in_cents as amount_in_cents, n.currency, 'CHECKOUT' as related_entity_type, n.id as related_entity_id
      from ${rows} n`,
  payment: (rows) => `
    select c.territory_id, t.type,
           case when t.type = 'REFUND' then 'COMPLETED' when n.status = 'PENDING' then 'PROCESSING' when n.status = 'FAILED' then 'FAILED' else 'COMPLETED' end as status,
           n.status as entity_status, n.amount_in_cents, n.currency, 'PAYMENT' as related_entity_type, n.id as related_entity_id
      from ${rows} n join checkout c on c.id = n.checkout_id
      join (values ('PAYMENT'), ('REFUND')) as t(type) on t.type = 'PAYMENT' or n.status = 'REFUNDED'`,
  seller_transaction: (rows) => `
    select n.territory_id, t.type,
           case when n.status = 'CANCELED' then 'CANCELED' when t.type = 'PLATFORM_FEE' or n.status = 'PAID' then 'COMPLETED' when n.status = 'READY' then 'PROCESSING' else 'PENDING' end as status,
           n.status as entity_status, case t.type when 'SELLER' then n.net_amount_in_cents else n.platform_fee_in_cents end as amount_in_cents, n.currency,
           'SELLER_TRANSACTION' as related_entity_type, n.id as related_entity_id
      from ${rows} n
      join (values ('SELLER'), ('PLATFORM_FEE')) as t(type) on t.type = 'SELLER' or n.platform_fee_in_cents > 0`,
  payout: (rows) => `
    select n.territory_id, 'PAYOUT' as type, n.status, n.status as entity_status, n.amount_in_cents, n.currency, 'PAYOUT' as related_entity_type, n.id as related_entity_id
      from ${rows} n`,
};

/**
 * Traces the rows of `table` (`rows`: the SQL of a set of them): each is inserted, or moved to its new
 * status with a status change row; a record whose financial status stays as it was is left alone.
 */
const trace = (table: string, rows: string) => `
  with facts as (${FACTS[table]!(rows)}),
  traced as (
    insert into financial_transaction as t (id, created_at_utc, updated_at_utc, territory_id, type, status, amount_in_cents, currency, related_entity_type, related_entity_id)
    select gen_random_uuid(), now(), now(), f.territory_id, f.type, f.status, f.amount_in_cents, f.currency, f.related_entity_type, f.related_entity_id from facts f
    on conflict (related_entity_id, type) do update set status = excluded.status, updated_at_utc = excluded.updated_at_utc
     where t.status is distinct from excluded.status
    returning t.id, t.type, t.related_entity_id, t.status
  )
  insert into financial_transaction_status_change (id, created_at_utc, financial_transaction_id, status, entity_status)
  select gen_random_uuid(), clock_timestamp(), traced.id, traced.status, f.entity_status
    from traced join facts f on f.type = traced.type and f.related_entity_id = traced.related_entity_id`;

/** Traces every existing record, with its current status (also run by test/money/financial-transactions.test.ts). */
export const TRACE_EXISTING_RECORDS: readonly string[] = TRACED.map(([table]) => `${trace(table, `"${table}"`)};`);

/**
 * The spec's FinancialTransaction ("every amount is traced in a FinancialTransaction"), written by PostgreSQL in the
 * transaction that creates a checkout, a payment, a seller transaction or a payout or moves its status: no code path
 * can move money untraced, and batch jobs (a payout run over thousands of sellers) pay one statement per statement,
 * not per row. A status change is recorded only when the financial status moves (a seller transaction going from
 * READY to PAID does; a refunded checkout's CHECKOUT stays COMPLETED, its REFUND records the money going back).
 * Existing records are traced once, with their current status.
 */
export class Migration20261128190000 extends Migration {
  override name = 'Migration20261128190000';

  override up(): void | Promise<void> {
    this.addSql(`create table "financial_transaction" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "type" varchar(20) not null, "status" varchar(20) not null, "amount_in_cents" bigint not null, "currency" varchar(3) not null, "related_entity_type" varchar(30) not null, "related_entity_id" uuid not null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "financial_transaction_territory_idx" on "financial_transaction" ("territory_id", "created_at_utc" desc, "id" desc);`);
    this.addSql(`alter table "financial_transaction" add constraint "financial_transaction_related_unique" unique ("related_entity_id", "type");`);
    this.addSql(`create table "financial_transaction_status_change" ("id" uuid not null, "created_at_utc" timestamptz not null, "financial_transaction_id" uuid not null, "status" varchar(20) not null, "entity_status" varchar(30) not null, primary key ("id"));`);
    this.addSql(`create index "financial_transaction_status_change_idx" on "financial_transaction_status_change" ("financial_transaction_id", "created_at_utc", "id");`);
    this.addSql(`alter table "financial_transaction" add constraint "financial_transaction_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "financial_transaction" add constraint "financial_transaction_type_check" check (type in ('CHECKOUT', 'PAYMENT', 'SELLER', 'PLATFORM_FEE', 'PAYOUT', 'REFUND'));`);
    this.addSql(`alter table "financial_transaction" add constraint "financial_transaction_status_check" check (status in ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELED'));`);
    this.addSql(`alter table "financial_transaction" add constraint "financial_transaction_related_type_check" check (related_entity_type in ('CHECKOUT', 'PAYMENT', 'SELLER_TRANSACTION', 'PAYOUT'));`);
    this.addSql(`alter table "financial_transaction" add constraint "financial_transaction_amount_check" check (amount_in_cents >= 0);`);
    this.addSql(`alter table "financial_transaction_status_change" add constraint "financial_transaction_status_change_financial_tr_6f7f7_foreign" foreign key ("financial_transaction_id") references "financial_transaction" ("id") on delete cascade;`);
    this.addSql(`create trigger "financial_transaction_status_change_append_only" before update on "financial_transaction_status_change" for each row execute function ledger_refuse_change();`);

    for (const [table, rows] of TRACED) {
      this.addSql(`create function financial_trace_${table}() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then${trace(table, `new_${rows}`)};
  else${trace(table, `(select n.* from new_${rows} n join old_${rows} o on o.id = n.id where o.status is distinct from n.status)`)};
  end if;
  return null;
end $$;`);
    }
    for (const statement of TRACE_EXISTING_RECORDS) this.addSql(statement);
    for (const [table, rows] of TRACED) {
      this.addSql(
        `create trigger "financial_trace_${table}_insert" after insert on "${table}" referencing new table as new_${rows} for each statement execute function financial_trace_${table}();`,
      );
      this.addSql(
        `create trigger "financial_trace_${table}_update" after update on "${table}" referencing old table as old_${rows} new table as new_${rows} for each statement execute function financial_trace_${table}();`,
      );
    }
  }

  override down(): void | Promise<void> {
    for (const [table] of TRACED) {
      this.addSql(`drop trigger "financial_trace_${table}_insert" on "${table}";`);
      this.addSql(`drop trigger "financial_trace_${table}_update" on "${table}";`);
      this.addSql(`drop function financial_trace_${table}();`);
    }
    this.addSql(`drop table "financial_transaction_status_change";`);
    this.addSql(`drop table "financial_transaction";`);
  }
}
