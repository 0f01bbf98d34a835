import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import type { ItemType } from './item.entity.js';
import { Item } from './item.entity.js';
import { financialTraceTriggers } from './financial-transaction.entity.js';
import { Store } from './store.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

/** DESIGN section 13 "Checkout states": AWAITING_PAYMENT -> PAID -> REFUNDED; AWAITING_PAYMENT -> PAYMENT_FAILED | CANCELED. */
export const CHECKOUT_STATUSES = ['AWAITING_PAYMENT', 'PAID', 'PAYMENT_FAILED', 'CANCELED', 'REFUNDED'] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];
export const PAYMENT_METHODS = ['PIX', 'CARD', 'BOLETO'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];
export const SELLER_TRANSACTION_STATUSES = ['PENDING', 'READY', 'PAID', 'CANCELED'] as const;
export type SellerTransactionStatus = (typeof SELLER_TRANSACTION_STATUSES)[number];

/** Where a checkout's goods go (the journeys checkout sends it; the v1 cart checkout does not). */
export interface ShippingAddress {
  street: string;
  number: string;
  complement: string | null;
  neighborhood: string | null;
  city: string;
  state: string;
  zipCode: string;
  /** ISO 3166-1 alpha-2, upper case. */
  country: string;
}

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * One store's part of a cart checkout: integer cents, one currency. The platform fee is taken from the seller, so
 * the buyer pays the subtotal (`total = items subtotal`, checked by PostgreSQL).
 */
export const Checkout = defineEntity({
  name: 'Checkout',
  tableName: 'checkout',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    storeId: () => p.manyToOne(Store).mapToPk().fieldName('store_id').deleteRule('cascade'),
    buyerUserId: () => p.manyToOne(User).mapToPk().fieldName('buyer_user_id').deleteRule('cascade'),
    /** The store's owner when the checkout was made (who is paid). */
    sellerUserId: () => p.manyToOne(User).mapToPk().fieldName('seller_user_id').deleteRule('cascade').index(),
    status: p.string().length(30).$type<CheckoutStatus>(),
    paymentMethod: p.string().length(20).$type<PaymentMethod>(),
    currency: p.string().length(3),
    itemsSubtotalInCents: p.bigint('number'),
    platformFeeInCents: p.bigint('number'),
    totalInCents: p.bigint('number'),
    message: p.string().length(2000).nullable(),
    /** Null when the buyer gave none (v1 checkouts). */
    shippingAddress: p.json<ShippingAddress>().nullable(),
    paidAtUtc: p.datetime().nullable(),
    canceledAtUtc: p.datetime().nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [
    { name: 'checkout_status_check', expression: `status in (${list(CHECKOUT_STATUSES)})` },
    { name: 'checkout_payment_method_check', expression: `payment_method in (${list(PAYMENT_METHODS)})` },
    {
      name: 'checkout_amounts_check',
      expression:
        'items_subtotal_in_cents > 0 and platform_fee_in_cents >= 0 and platform_fee_in_cents <= items_subtotal_in_cents and total_in_cents = items_subtotal_in_cents',
    },
  ],
  indexes: [
    // `/checkouts/me` and a store's orders, newest first.
    { name: 'checkout_buyer_idx', expression: `create index "checkout_buyer_idx" on "checkout" ("buyer_user_id", "created_at_utc" desc, "id" desc)` },
    { name: 'checkout_store_idx', expression: `create index "checkout_store_idx" on "checkout" ("store_id", "created_at_utc" desc, "id" desc)` },
  ],
  triggers: financialTraceTriggers('checkout', 'checkouts'),
});

/** A line of a checkout: title and price snapshotted at checkout time, with its own platform fee. */
export const CheckoutItem = defineEntity({
  name: 'CheckoutItem',
  tableName: 'checkout_item',
  properties: {
    ...baseProperties,
    checkoutId: () => p.manyToOne(Checkout).mapToPk().fieldName('checkout_id').deleteRule('cascade').index(),
    // No cascade from the catalogue: an order outlives its item.
    itemId: () => p.manyToOne(Item).mapToPk().fieldName('item_id').deleteRule('no action').index(),
    itemType: p.string().length(20).$type<ItemType>(),
    titleSnapshot: p.string().length(200),
    quantity: p.integer(),
    unitPriceInCents: p.bigint('number'),
    lineSubtotalInCents: p.bigint('number'),
    platformFeeInCents: p.bigint('number'),
    position: p.integer(),
  },
  checks: [
    {
      name: 'checkout_item_amounts_check',
      expression:
        'quantity > 0 and unit_price_in_cents > 0 and line_subtotal_in_cents = unit_price_in_cents * quantity and platform_fee_in_cents >= 0 and platform_fee_in_cents <= line_subtotal_in_cents',
    },
  ],
});

/**
 * A paid sale as the seller's balance sees it (DESIGN section 13 "Ledger"): one per checkout (unique), written in the
 * transaction that marks the checkout PAID. `payoutId` is set by the payout jobs (not built yet).
 */
export const SellerTransaction = defineEntity({
  name: 'SellerTransaction',
  tableName: 'seller_transaction',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    storeId: () => p.manyToOne(Store).mapToPk().fieldName('store_id').deleteRule('cascade'),
    checkoutId: () => p.manyToOne(Checkout).mapToPk().fieldName('checkout_id').deleteRule('cascade').unique(),
    sellerUserId: () => p.manyToOne(User).mapToPk().fieldName('seller_user_id').deleteRule('cascade'),
    grossAmountInCents: p.bigint('number'),
    platformFeeInCents: p.bigint('number'),
    netAmountInCents: p.bigint('number'),
    currency: p.string().length(3),
    status: p.string().length(20).$type<SellerTransactionStatus>(),
    readyForPayoutAtUtc: p.datetime(),
    payoutId: p.uuid().nullable(),
    paidAtUtc: p.datetime(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [
    { name: 'seller_transaction_status_check', expression: `status in (${list(SELLER_TRANSACTION_STATUSES)})` },
    {
      name: 'seller_transaction_amounts_check',
      expression:
        'gross_amount_in_cents > 0 and platform_fee_in_cents >= 0 and net_amount_in_cents = gross_amount_in_cents - platform_fee_in_cents and net_amount_in_cents >= 0',
    },
  ],
  indexes: [
    {
      name: 'seller_transaction_seller_idx',
      expression: `create index "seller_transaction_seller_idx" on "seller_transaction" ("seller_user_id", "territory_id", "created_at_utc" desc)`,
    },
  ],
  triggers: financialTraceTriggers('seller_transaction', 'seller_transactions'),
});

/**
 * The `Idempotency-Key` of a cart checkout (DESIGN section 13): unique per (user, key), holding the hash of the
 * body and the answer given. A concurrent repeat waits on the unique index until the first commits, then replays
 * the answer; a record older than 24 hours is taken over by the next use of its key.
 */
export const CheckoutIdempotencyRecord = defineEntity({
  name: 'CheckoutIdempotencyRecord',
  tableName: 'checkout_idempotency_record',
  properties: {
    ...baseProperties,
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade'),
    idempotencyKey: p.string().length(255),
    bodyHash: p.string().length(64),
    responseStatus: p.integer().nullable(),
    responseBody: p.json<unknown>().nullable(),
  },
  uniques: [{ name: 'checkout_idempotency_record_user_key_unique', properties: ['userId', 'idempotencyKey'] }],
});
