import { Migration } from '@mikro-orm/migrations';

export class Migration20261125150504 extends Migration {

  override name = 'Migration20261125150504';

  override up(): void | Promise<void> {
    this.addSql(`create table "payout" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "seller_user_id" uuid not null, "amount_in_cents" bigint not null, "currency" varchar(3) not null, "status" varchar(20) not null, "transaction_ids" text[] not null, "provider" varchar(20) null, "gateway_reference" varchar(200) null, "failure_reason" varchar(500) null, "submitted_at_utc" timestamptz null, "completed_at_utc" timestamptz null, "failed_at_utc" timestamptz null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "payout" add constraint "payout_gateway_reference_unique" unique ("gateway_reference");`);
    this.addSql(`create index "payout_territory_idx" on "payout" ("territory_id", "created_at_utc" desc, "id" desc);`);
    this.addSql(`create index "payout_seller_idx" on "payout" ("seller_user_id", "territory_id", "created_at_utc" desc, "id" desc);`);
    this.addSql(`create index "payout_open_idx" on "payout" ("status", "created_at_utc") where status in ('PENDING', 'PROCESSING');`);

    this.addSql(`alter table "payout" add constraint "payout_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "payout" add constraint "payout_seller_user_id_foreign" foreign key ("seller_user_id") references "app_user" ("id") on delete no action;`);
    this.addSql(`alter table "payout" add constraint "payout_status_check" check (status in ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'));`);
    this.addSql(`alter table "payout" add constraint "payout_amount_check" check (amount_in_cents > 0);`);
    this.addSql(`alter table "payout" add constraint "payout_currency_check" check (currency ~ '^[A-Z]{3}\$');`);
    this.addSql(`alter table "payout" add constraint "payout_transactions_check" check (cardinality(transaction_ids) >= 1);`);
    this.addSql(`alter table "payout" add constraint "payout_submitted_check" check ((status = 'PENDING') = (gateway_reference is null));`);
    this.addSql(`alter table "payout" add constraint "payout_completed_check" check ((status = 'COMPLETED') = (completed_at_utc is not null));`);
    this.addSql(`alter table "payout" add constraint "payout_failed_check" check ((status = 'FAILED') = (failed_at_utc is not null));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "payout" cascade;`);
  }

}
