import { Migration } from '@mikro-orm/migrations';

export class Migration20261125145906 extends Migration {

  override name = 'Migration20261125145906';

  override up(): void | Promise<void> {
    this.addSql(`create table "subscription_plan" ("id" uuid not null, "created_at_utc" timestamptz not null, "code" varchar(20) not null, "name" varchar(100) not null, "price_in_cents" bigint not null, "currency" varchar(3) not null, "quota_ai" int not null, "quota_media" int not null, "quota_notifications" int not null, primary key ("id"));`);
    this.addSql(`alter table "subscription_plan" add constraint "subscription_plan_code_unique" unique ("code");`);

    this.addSql(`create table "territory_payment_methods" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "methods" text[] not null, "updated_by_user_id" uuid not null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "territory_payment_methods" add constraint "territory_payment_methods_territory_id_unique" unique ("territory_id");`);

    this.addSql(`create table "territory_fiscal_pack" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "pack_id" varchar(50) not null, "status" varchar(10) not null, "municipality_ibge" varchar(7) null, "activated_by_user_id" uuid null, "activated_at_utc" timestamptz null, "updated_by_user_id" uuid not null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "territory_fiscal_pack" add constraint "territory_fiscal_pack_territory_id_unique" unique ("territory_id");`);

    this.addSql(`create table "merchant_subscription" ("id" uuid not null, "created_at_utc" timestamptz not null, "store_id" uuid not null, "plan_id" uuid not null, "status" varchar(20) not null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "merchant_subscription" add constraint "merchant_subscription_store_id_unique" unique ("store_id");`);
    this.addSql(`create index "merchant_subscription_plan_id_index" on "merchant_subscription" ("plan_id");`);

    this.addSql(`create table "consumption_meter" ("id" uuid not null, "created_at_utc" timestamptz not null, "subscription_id" uuid not null, "metric" varchar(20) not null, "period_start_utc" timestamptz not null, "period_end_utc" timestamptz not null, "recorded_usage" bigint not null default '0', primary key ("id"));`);
    this.addSql(`alter table "consumption_meter" add constraint "consumption_meter_period_unique" unique ("subscription_id", "metric", "period_start_utc");`);

    this.addSql(`alter table "subscription_plan" add constraint "subscription_plan_code_check" check (code in ('FREE', 'BASIC', 'PRO'));`);
    this.addSql(`alter table "subscription_plan" add constraint "subscription_plan_amounts_check" check (price_in_cents >= 0 and quota_ai >= 0 and quota_media >= 0 and quota_notifications >= 0);`);
    this.addSql(`alter table "subscription_plan" add constraint "subscription_plan_currency_check" check (currency ~ '^[A-Z]{3}\$');`);

    this.addSql(`alter table "territory_payment_methods" add constraint "territory_payment_methods_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "territory_payment_methods" add constraint "territory_payment_methods_methods_check" check (cardinality(methods) >= 1 and methods <@ array['PIX', 'CARD', 'BOLETO']::text[]);`);

    this.addSql(`alter table "territory_fiscal_pack" add constraint "territory_fiscal_pack_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "territory_fiscal_pack" add constraint "territory_fiscal_pack_pack_check" check (pack_id in ('brazil.v1'));`);
    this.addSql(`alter table "territory_fiscal_pack" add constraint "territory_fiscal_pack_status_check" check (status in ('Off', 'Active'));`);
    this.addSql(`alter table "territory_fiscal_pack" add constraint "territory_fiscal_pack_ibge_check" check (municipality_ibge is null or municipality_ibge ~ '^[0-9]{7}\$');`);

    this.addSql(`alter table "merchant_subscription" add constraint "merchant_subscription_store_id_foreign" foreign key ("store_id") references "store" ("id") on delete cascade;`);
    this.addSql(`alter table "merchant_subscription" add constraint "merchant_subscription_plan_id_foreign" foreign key ("plan_id") references "subscription_plan" ("id");`);
    this.addSql(`alter table "merchant_subscription" add constraint "merchant_subscription_status_check" check (status in ('ACTIVE'));`);

    this.addSql(`alter table "consumption_meter" add constraint "consumption_meter_subscription_id_foreign" foreign key ("subscription_id") references "merchant_subscription" ("id") on delete cascade;`);
    this.addSql(`alter table "consumption_meter" add constraint "consumption_meter_metric_check" check (metric in ('ai', 'media', 'notifications'));`);
    this.addSql(`alter table "consumption_meter" add constraint "consumption_meter_period_check" check (period_end_utc > period_start_utc and recorded_usage >= 0);`);

    // The seeded subscription plans (DESIGN section 13 "Merchants"), with fixed ids so every installation shares them.
    this.addSql(`insert into "subscription_plan" ("id", "created_at_utc", "code", "name", "price_in_cents", "currency", "quota_ai", "quota_media", "quota_notifications") values
      ('0193a000-0000-7000-8000-000000000001', now(), 'FREE', 'Free', 0, 'BRL', 0, 20, 100),
      ('0193a000-0000-7000-8000-000000000002', now(), 'BASIC', 'Basic', 2990, 'BRL', 100, 200, 1000),
      ('0193a000-0000-7000-8000-000000000003', now(), 'PRO', 'Pro', 9990, 'BRL', 1000, 2000, 10000)
      on conflict ("code") do nothing;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "merchant_subscription" drop constraint "merchant_subscription_plan_id_foreign";`);
    this.addSql(`alter table "consumption_meter" drop constraint "consumption_meter_subscription_id_foreign";`);

    this.addSql(`drop table if exists "subscription_plan" cascade;`);
    this.addSql(`drop table if exists "territory_payment_methods" cascade;`);
    this.addSql(`drop table if exists "territory_fiscal_pack" cascade;`);
    this.addSql(`drop table if exists "merchant_subscription" cascade;`);
    this.addSql(`drop table if exists "consumption_meter" cascade;`);
  }

}
