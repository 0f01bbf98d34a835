import { Migration } from '@mikro-orm/migrations';

export class Migration20261125141812 extends Migration {

  override name = 'Migration20261125141812';

  override up(): void | Promise<void> {
    this.addSql(`create table "payout_config" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "retention_period_days" int not null, "minimum_payout_amount_in_cents" bigint not null, "maximum_payout_amount_in_cents" bigint null, "frequency" varchar(20) not null, "auto_payout_enabled" boolean not null, "requires_approval" boolean not null, "currency" varchar(3) not null, "is_active" boolean not null default true, "updated_by_user_id" uuid null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "payout_config" add constraint "payout_config_territory_id_unique" unique ("territory_id");`);

    this.addSql(`alter table "payout_config" add constraint "payout_config_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "payout_config" add constraint "payout_config_retention_check" check (retention_period_days >= 0 and retention_period_days <= 365);`);
    this.addSql(`alter table "payout_config" add constraint "payout_config_amounts_check" check (minimum_payout_amount_in_cents >= 0 and (maximum_payout_amount_in_cents is null or maximum_payout_amount_in_cents >= minimum_payout_amount_in_cents));`);
    this.addSql(`alter table "payout_config" add constraint "payout_config_frequency_check" check (frequency in ('Daily', 'Weekly', 'Monthly', 'Manual'));`);
    this.addSql(`alter table "payout_config" add constraint "payout_config_currency_check" check (currency ~ '^[A-Z]{3}\$');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "payout_config" cascade;`);
  }

}
