import { Migration } from '@mikro-orm/migrations';

export class Migration20261125130011 extends Migration {

  override name = 'Migration20261125130011';

  override up(): void | Promise<void> {
    // Ledger invariants enforced by PostgreSQL itself (DESIGN section 13), whatever client writes: the triggers
    // declared on the ledger entities call these functions.
    this.addSql(`create or replace function ledger_refuse_change() returns trigger language plpgsql as $$
begin
  raise exception 'ledger is append-only: % on % refused', tg_op, tg_table_name using errcode = 'restrict_violation';
end $$;`);
    this.addSql(`create or replace function ledger_check_balanced() returns trigger language plpgsql as $$
declare
  off record;
begin
  select e.currency, sum(e.amount_in_cents) as total into off
    from ledger_entry e where e.transaction_id = new.transaction_id
   group by e.currency having sum(e.amount_in_cents) <> 0 limit 1;
  if found then
    raise exception 'ledger transaction % does not balance: % % off', new.transaction_id, off.total, off.currency using errcode = 'check_violation';
  end if;
  if not exists (
    select 1 from ledger_account a join ledger_transaction t on t.id = new.transaction_id
     where a.id = new.account_id and a.currency = new.currency and a.territory_id = t.territory_id
  ) then
    raise exception 'ledger entry % is not in its account''s currency and territory', new.id using errcode = 'check_violation';
  end if;
  return null;
end $$;`);
    this.addSql(`create or replace function ledger_check_transaction_has_entries() returns trigger language plpgsql as $$
begin
  if not exists (select 1 from ledger_entry where transaction_id = new.id) then
    raise exception 'ledger transaction % has no entries', new.id using errcode = 'check_violation';
  end if;
  return null;
end $$;`);

    this.addSql(`create table "platform_fee_config" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "item_type" varchar(20) not null, "fee_mode" varchar(20) not null, "fee_basis_points" int null, "fee_fixed_in_cents" bigint null, "is_active" boolean not null default true, "updated_by_user_id" uuid null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "platform_fee_config" add constraint "platform_fee_config_territory_item_type_unique" unique ("territory_id", "item_type");`);

    this.addSql(`create table "ledger_transaction" ("id" uuid not null, "created_at_utc" timestamptz not null, "idempotency_key" varchar(200) not null, "territory_id" uuid not null, primary key ("id"));`);
    this.addSql(`alter table "ledger_transaction" add constraint "ledger_transaction_idempotency_key_unique" unique ("idempotency_key");`);
    this.addSql(`create index "ledger_transaction_territory_id_index" on "ledger_transaction" ("territory_id");`);

    this.addSql(`create table "store" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "owner_user_id" uuid not null, "display_name" varchar(200) not null, "description" varchar(2000) null, "contact_visibility" varchar(20) not null, "contact_phone" varchar(50) null, "contact_email" varchar(320) null, "status" varchar(20) not null default 'ACTIVE', "payments_enabled" boolean not null default true, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "store_owner_user_id_index" on "store" ("owner_user_id");`);
    this.addSql(`create index "store_active_territory_idx" on "store" ("territory_id", "display_name", "id") where status = 'ACTIVE';`);
    this.addSql(`alter table "store" add constraint "store_territory_owner_unique" unique ("territory_id", "owner_user_id");`);

    this.addSql(`create table "ledger_account" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "currency" varchar(3) not null, "kind" varchar(30) not null, "owner_user_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "ledger_account_owner_user_id_index" on "ledger_account" ("owner_user_id");`);
    this.addSql(`create unique index "ledger_account_unique" on "ledger_account" ("territory_id", "currency", "kind", "owner_user_id") nulls not distinct;`);

    this.addSql(`create table "ledger_entry" ("id" uuid not null, "created_at_utc" timestamptz not null, "transaction_id" uuid not null, "account_id" uuid not null, "amount_in_cents" bigint not null, "currency" varchar(3) not null, primary key ("id"));`);
    this.addSql(`create index "ledger_entry_transaction_id_index" on "ledger_entry" ("transaction_id");`);
    this.addSql(`create index "ledger_entry_account_id_index" on "ledger_entry" ("account_id");`);

    this.addSql(`create table "item" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "store_id" uuid not null, "created_by_user_id" uuid not null, "type" varchar(20) not null, "title" varchar(200) not null, "description" varchar(2000) null, "category" varchar(100) null, "tags" varchar(500) null, "pricing_type" varchar(20) not null, "price_in_cents" bigint null, "currency" varchar(3) not null, "unit" varchar(50) null, "latitude" double precision null, "longitude" double precision null, "media_ids" text[] not null default '{}', "status" varchar(20) not null default 'ACTIVE', "archived_at_utc" timestamptz null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "item_store_id_index" on "item" ("store_id");`);
    this.addSql(`create index "item_created_by_user_id_index" on "item" ("created_by_user_id");`);
    this.addSql(`create index "item_active_territory_idx" on "item" ("territory_id", "created_at_utc" desc, "id" desc) where status = 'ACTIVE';`);
    this.addSql(`create index "item_active_text_trgm_idx" on "item" using gin (("title" || ' ' || coalesce("description", '')) gin_trgm_ops) where status = 'ACTIVE';`);

    this.addSql(`create table "inquiry" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "item_id" uuid not null, "store_id" uuid not null, "from_user_id" uuid not null, "message" varchar(2000) not null, "status" varchar(20) not null default 'OPEN', primary key ("id"));`);
    this.addSql(`create index "inquiry_item_id_index" on "inquiry" ("item_id");`);
    this.addSql(`create index "inquiry_from_user_idx" on "inquiry" ("from_user_id", "created_at_utc" desc, "id" desc);`);
    this.addSql(`create index "inquiry_store_idx" on "inquiry" ("store_id", "created_at_utc" desc, "id" desc);`);

    this.addSql(`alter table "platform_fee_config" add constraint "platform_fee_config_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);

    this.addSql(`alter table "ledger_transaction" add constraint "ledger_transaction_territory_id_foreign" foreign key ("territory_id") references "territory" ("id");`);
    this.addSql(`create constraint trigger "ledger_transaction_has_entries" after insert on "ledger_transaction" deferrable initially deferred for each row execute function ledger_check_transaction_has_entries();`);
    this.addSql(`create trigger "ledger_transaction_append_only" before update or delete on "ledger_transaction" for each row execute function ledger_refuse_change();`);

    this.addSql(`alter table "store" add constraint "store_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "store" add constraint "store_owner_user_id_foreign" foreign key ("owner_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "ledger_account" add constraint "ledger_account_territory_id_foreign" foreign key ("territory_id") references "territory" ("id");`);
    this.addSql(`alter table "ledger_account" add constraint "ledger_account_owner_user_id_foreign" foreign key ("owner_user_id") references "app_user" ("id") on delete no action;`);
    this.addSql(`alter table "ledger_account" add constraint "ledger_account_kind_check" check (kind in ('gateway_clearing', 'platform_revenue', 'payouts_in_transit', 'seller_pending', 'seller_ready', 'seller_paid'));`);
    this.addSql(`alter table "ledger_account" add constraint "ledger_account_owner_check" check ((owner_user_id is not null) = (kind in ('seller_pending', 'seller_ready', 'seller_paid')));`);
    this.addSql(`alter table "ledger_account" add constraint "ledger_account_currency_check" check (currency ~ '^[A-Z]{3}\$');`);

    this.addSql(`alter table "ledger_entry" add constraint "ledger_entry_transaction_id_foreign" foreign key ("transaction_id") references "ledger_transaction" ("id");`);
    this.addSql(`alter table "ledger_entry" add constraint "ledger_entry_account_id_foreign" foreign key ("account_id") references "ledger_account" ("id");`);
    this.addSql(`alter table "ledger_entry" add constraint "ledger_entry_amount_check" check (amount_in_cents <> 0);`);
    this.addSql(`create constraint trigger "ledger_entry_balanced" after insert on "ledger_entry" deferrable initially deferred for each row execute function ledger_check_balanced();`);
    this.addSql(`create trigger "ledger_entry_append_only" before update or delete on "ledger_entry" for each row execute function ledger_refuse_change();`);

    this.addSql(`alter table "item" add constraint "item_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "item" add constraint "item_store_id_foreign" foreign key ("store_id") references "store" ("id") on delete cascade;`);
    this.addSql(`alter table "item" add constraint "item_created_by_user_id_foreign" foreign key ("created_by_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "inquiry" add constraint "inquiry_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "inquiry" add constraint "inquiry_item_id_foreign" foreign key ("item_id") references "item" ("id") on delete cascade;`);
    this.addSql(`alter table "inquiry" add constraint "inquiry_store_id_foreign" foreign key ("store_id") references "store" ("id") on delete cascade;`);
    this.addSql(`alter table "inquiry" add constraint "inquiry_from_user_id_foreign" foreign key ("from_user_id") references "app_user" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "ledger_entry" drop constraint "ledger_entry_transaction_id_foreign";`);
    this.addSql(`alter table "item" drop constraint "item_store_id_foreign";`);
    this.addSql(`alter table "inquiry" drop constraint "inquiry_store_id_foreign";`);
    this.addSql(`alter table "ledger_entry" drop constraint "ledger_entry_account_id_foreign";`);
    this.addSql(`alter table "inquiry" drop constraint "inquiry_item_id_foreign";`);

    this.addSql(`drop table if exists "platform_fee_config" cascade;`);
    this.addSql(`drop trigger if exists "ledger_transaction_has_entries" on "ledger_transaction";`);
    this.addSql(`drop function if exists "ledger_transaction_ledger_transaction_has_entries_fn"();`);
    this.addSql(`drop trigger if exists "ledger_transaction_append_only" on "ledger_transaction";`);
    this.addSql(`drop function if exists "ledger_transaction_ledger_transaction_append_only_fn"();`);
    this.addSql(`drop table if exists "ledger_transaction" cascade;`);
    this.addSql(`drop table if exists "store" cascade;`);
    this.addSql(`drop table if exists "ledger_account" cascade;`);
    this.addSql(`drop trigger if exists "ledger_entry_balanced" on "ledger_entry";`);
    this.addSql(`drop function if exists "ledger_entry_ledger_entry_balanced_fn"();`);
    this.addSql(`drop trigger if exists "ledger_entry_append_only" on "ledger_entry";`);
    this.addSql(`drop function if exists "ledger_entry_ledger_entry_append_only_fn"();`);
    this.addSql(`drop table if exists "ledger_entry" cascade;`);
    this.addSql(`drop table if exists "item" cascade;`);
    this.addSql(`drop table if exists "inquiry" cascade;`);
    this.addSql(`drop function if exists ledger_check_transaction_has_entries();`);
    this.addSql(`drop function if exists ledger_check_balanced();`);
    this.addSql(`drop function if exists ledger_refuse_change();`);
  }

}
