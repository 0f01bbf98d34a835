import { Migration } from '@mikro-orm/migrations';

export class Migration20261125134219 extends Migration {

  override name = 'Migration20261125134219';

  override up(): void | Promise<void> {
    this.addSql(`create table "payment_webhook_event" ("id" uuid not null, "created_at_utc" timestamptz not null, "provider" varchar(20) not null, "event_id" varchar(200) not null, "type" varchar(50) not null, "payment_id" uuid null, "checkout_id" uuid null, "payload" jsonb not null, primary key ("id"));`);
    this.addSql(`create index "payment_webhook_event_checkout_id_index" on "payment_webhook_event" ("checkout_id");`);
    this.addSql(`alter table "payment_webhook_event" add constraint "payment_webhook_event_provider_event_unique" unique ("provider", "event_id");`);

    this.addSql(`create table "checkout_idempotency_record" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "idempotency_key" varchar(255) not null, "body_hash" varchar(64) not null, "response_status" int null, "response_body" jsonb null, primary key ("id"));`);
    this.addSql(`alter table "checkout_idempotency_record" add constraint "checkout_idempotency_record_user_key_unique" unique ("user_id", "idempotency_key");`);

    this.addSql(`create table "checkout" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "store_id" uuid not null, "buyer_user_id" uuid not null, "seller_user_id" uuid not null, "status" varchar(30) not null, "payment_method" varchar(20) not null, "currency" varchar(3) not null, "items_subtotal_in_cents" bigint not null, "platform_fee_in_cents" bigint not null, "total_in_cents" bigint not null, "message" varchar(2000) null, "paid_at_utc" timestamptz null, "canceled_at_utc" timestamptz null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "checkout_seller_user_id_index" on "checkout" ("seller_user_id");`);
    this.addSql(`create index "checkout_buyer_idx" on "checkout" ("buyer_user_id", "created_at_utc" desc, "id" desc);`);
    this.addSql(`create index "checkout_store_idx" on "checkout" ("store_id", "created_at_utc" desc, "id" desc);`);

    this.addSql(`create table "seller_transaction" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "store_id" uuid not null, "checkout_id" uuid not null, "seller_user_id" uuid not null, "gross_amount_in_cents" bigint not null, "platform_fee_in_cents" bigint not null, "net_amount_in_cents" bigint not null, "currency" varchar(3) not null, "status" varchar(20) not null, "ready_for_payout_at_utc" timestamptz not null, "payout_id" uuid null, "paid_at_utc" timestamptz not null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "seller_transaction" add constraint "seller_transaction_checkout_id_unique" unique ("checkout_id");`);
    this.addSql(`create index "seller_transaction_seller_idx" on "seller_transaction" ("seller_user_id", "territory_id", "created_at_utc" desc);`);

    this.addSql(`create table "payment" ("id" uuid not null, "created_at_utc" timestamptz not null, "checkout_id" uuid not null, "provider" varchar(20) not null, "provider_payment_id" varchar(200) not null, "method" varchar(20) not null, "status" varchar(20) not null, "amount_in_cents" bigint not null, "currency" varchar(3) not null, "pix_copy_paste_code" text null, "client_secret" varchar(200) null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "payment" add constraint "payment_checkout_id_unique" unique ("checkout_id");`);
    this.addSql(`alter table "payment" add constraint "payment_provider_payment_id_unique" unique ("provider_payment_id");`);

    this.addSql(`create table "checkout_item" ("id" uuid not null, "created_at_utc" timestamptz not null, "checkout_id" uuid not null, "item_id" uuid not null, "item_type" varchar(20) not null, "title_snapshot" varchar(200) not null, "quantity" int not null, "unit_price_in_cents" bigint not null, "line_subtotal_in_cents" bigint not null, "platform_fee_in_cents" bigint not null, "position" int not null, primary key ("id"));`);
    this.addSql(`create index "checkout_item_checkout_id_index" on "checkout_item" ("checkout_id");`);
    this.addSql(`create index "checkout_item_item_id_index" on "checkout_item" ("item_id");`);

    this.addSql(`create table "cart" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "territory_id" uuid not null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "cart_territory_id_index" on "cart" ("territory_id");`);
    this.addSql(`alter table "cart" add constraint "cart_user_territory_unique" unique ("user_id", "territory_id");`);

    this.addSql(`create table "cart_item" ("id" uuid not null, "created_at_utc" timestamptz not null, "cart_id" uuid not null, "item_id" uuid not null, "quantity" int not null, "notes" varchar(500) null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "cart_item_item_id_index" on "cart_item" ("item_id");`);
    this.addSql(`alter table "cart_item" add constraint "cart_item_cart_item_unique" unique ("cart_id", "item_id");`);

    this.addSql(`alter table "checkout_idempotency_record" add constraint "checkout_idempotency_record_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "checkout" add constraint "checkout_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "checkout" add constraint "checkout_store_id_foreign" foreign key ("store_id") references "store" ("id") on delete cascade;`);
    this.addSql(`alter table "checkout" add constraint "checkout_buyer_user_id_foreign" foreign key ("buyer_user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "checkout" add constraint "checkout_seller_user_id_foreign" foreign key ("seller_user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "checkout" add constraint "checkout_status_check" check (status in ('AWAITING_PAYMENT', 'PAID', 'PAYMENT_FAILED', 'CANCELED', 'REFUNDED'));`);
    this.addSql(`alter table "checkout" add constraint "checkout_payment_method_check" check (payment_method in ('PIX', 'CARD', 'BOLETO'));`);
    this.addSql(`alter table "checkout" add constraint "checkout_amounts_check" check (items_subtotal_in_cents > 0 and platform_fee_in_cents >= 0 and platform_fee_in_cents <= items_subtotal_in_cents and total_in_cents = items_subtotal_in_cents);`);

    this.addSql(`alter table "seller_transaction" add constraint "seller_transaction_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "seller_transaction" add constraint "seller_transaction_store_id_foreign" foreign key ("store_id") references "store" ("id") on delete cascade;`);
    this.addSql(`alter table "seller_transaction" add constraint "seller_transaction_checkout_id_foreign" foreign key ("checkout_id") references "checkout" ("id") on delete cascade;`);
    this.addSql(`alter table "seller_transaction" add constraint "seller_transaction_seller_user_id_foreign" foreign key ("seller_user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "seller_transaction" add constraint "seller_transaction_status_check" check (status in ('PENDING', 'READY', 'PAID', 'CANCELED'));`);
    this.addSql(`alter table "seller_transaction" add constraint "seller_transaction_amounts_check" check (gross_amount_in_cents > 0 and platform_fee_in_cents >= 0 and net_amount_in_cents = gross_amount_in_cents - platform_fee_in_cents and net_amount_in_cents >= 0);`);

    this.addSql(`alter table "payment" add constraint "payment_checkout_id_foreign" foreign key ("checkout_id") references "checkout" ("id") on delete cascade;`);
    this.addSql(`alter table "payment" add constraint "payment_status_check" check (status in ('PENDING', 'SUCCEEDED', 'FAILED', 'REFUNDED'));`);
    this.addSql(`alter table "payment" add constraint "payment_method_check" check (method in ('PIX', 'CARD', 'BOLETO'));`);
    this.addSql(`alter table "payment" add constraint "payment_amount_check" check (amount_in_cents > 0);`);

    this.addSql(`alter table "checkout_item" add constraint "checkout_item_checkout_id_foreign" foreign key ("checkout_id") references "checkout" ("id") on delete cascade;`);
    this.addSql(`alter table "checkout_item" add constraint "checkout_item_item_id_foreign" foreign key ("item_id") references "item" ("id") on delete no action;`);
    this.addSql(`alter table "checkout_item" add constraint "checkout_item_amounts_check" check (quantity > 0 and unit_price_in_cents > 0 and line_subtotal_in_cents = unit_price_in_cents * quantity and platform_fee_in_cents >= 0 and platform_fee_in_cents <= line_subtotal_in_cents);`);

    this.addSql(`alter table "cart" add constraint "cart_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "cart" add constraint "cart_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);

    this.addSql(`alter table "cart_item" add constraint "cart_item_cart_id_foreign" foreign key ("cart_id") references "cart" ("id") on delete cascade;`);
    this.addSql(`alter table "cart_item" add constraint "cart_item_item_id_foreign" foreign key ("item_id") references "item" ("id") on delete cascade;`);
    this.addSql(`alter table "cart_item" add constraint "cart_item_quantity_check" check (quantity >= 1 and quantity <= 999);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "seller_transaction" drop constraint "seller_transaction_checkout_id_foreign";`);
    this.addSql(`alter table "payment" drop constraint "payment_checkout_id_foreign";`);
    this.addSql(`alter table "checkout_item" drop constraint "checkout_item_checkout_id_foreign";`);
    this.addSql(`alter table "cart_item" drop constraint "cart_item_cart_id_foreign";`);

    this.addSql(`drop table if exists "payment_webhook_event" cascade;`);
    this.addSql(`drop table if exists "checkout_idempotency_record" cascade;`);
    this.addSql(`drop table if exists "checkout" cascade;`);
    this.addSql(`drop table if exists "seller_transaction" cascade;`);
    this.addSql(`drop table if exists "payment" cascade;`);
    this.addSql(`drop table if exists "checkout_item" cascade;`);
    this.addSql(`drop table if exists "cart" cascade;`);
    this.addSql(`drop table if exists "cart_item" cascade;`);
  }

}
