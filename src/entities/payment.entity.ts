import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Checkout, PAYMENT_METHODS, type PaymentMethod } from './checkout.entity.js';
import { financialTraceTriggers } from './financial-transaction.entity.js';

export const PAYMENT_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED', 'REFUNDED'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];
export const PAYMENT_PROVIDERS = ['fake', 'stripe'] as const;
export type PaymentProvider = (typeof PAYMENT_PROVIDERS)[number];

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/** The gateway's payment of a checkout (one per checkout): integer cents in the checkout's currency. */
export const Payment = defineEntity({
  name: 'Payment',
  tableName: 'payment',
  properties: {
    ...baseProperties,
    checkoutId: () => p.manyToOne(Checkout).mapToPk().fieldName('checkout_id').deleteRule('cascade').unique(),
    provider: p.string().length(20).$type<PaymentProvider>(),
    /** The gateway's own id of the payment. */
    providerPaymentId: p.string().length(200).unique(),
    method: p.string().length(20).$type<PaymentMethod>(),
    status: p.string().length(20).$type<PaymentStatus>(),
    amountInCents: p.bigint('number'),
    currency: p.string().length(3),
    pixCopyPasteCode: p.text().nullable(),
    clientSecret: p.string().length(200).nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [
    { name: 'payment_status_check', expression: `status in (${list(PAYMENT_STATUSES)})` },
    { name: 'payment_method_check', expression: `method in (${list(PAYMENT_METHODS)})` },
    { name: 'payment_amount_check', expression: 'amount_in_cents > 0' },
  ],
  triggers: financialTraceTriggers('payment', 'payments'),
});

/**
 * Every gateway webhook event applied, once: unique per (provider, event id), inserted first in the transaction that
 * applies it, so a replay or a concurrent duplicate waits for the first and then changes nothing. Append-only.
 */
export const PaymentWebhookEvent = defineEntity({
  name: 'PaymentWebhookEvent',
  tableName: 'payment_webhook_event',
  properties: {
    ...baseProperties,
    provider: p.string().length(20).$type<PaymentProvider>(),
    eventId: p.string().length(200),
    type: p.string().length(50),
    paymentId: p.uuid().nullable(),
    checkoutId: p.uuid().nullable().index(),
    payload: p.json<Record<string, unknown>>(),
  },
  uniques: [{ name: 'payment_webhook_event_provider_event_unique', properties: ['provider', 'eventId'] }],
});
