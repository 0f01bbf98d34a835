/**
 * Gateway webhooks (DESIGN section 13 "Payments"): the one path that marks a checkout PAID. Each event is verified
 * (signature of the raw body), recorded once (unique per provider and event id, inserted first: a replay or a
 * concurrent duplicate waits for the first, then changes nothing), checked against the checkout (amount and
 * currency: 400, nothing written) and applied under the checkout's row lock, all in one transaction.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppConfig } from '../../config.js';
import { execSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { newId } from '../../platform/ids.js';
import { badRequest, forbidden, notFound } from '../../platform/problems.js';
import { isSystemAdmin, type Clock, type ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { postLedgerTransaction } from '../ledger/ledger.js';
import { enqueueNotification } from '../notifications/outbox.js';
import { checkoutRow, type CheckoutRow, paymentOfCheckout, type PaymentRow, toCheckoutOutputs } from './checkouts.queries.js';
import type { CheckoutOutput } from './checkouts.schemas.js';
import { paymentGatewayOf, signWebhook, type WebhookEvent } from '../payments/gateway.js';

/**
 * Days recorded at payment before a sale may leave pending: none here. The territory's retention period is applied
 * where the money is read and released (`EFFECTIVE_READY_AT`, seller-balance.queries.ts: the later of this time and
 * the payment time plus the active configuration's retention), so this module reads no payout configuration.
 */
const RETENTION_PERIOD_DAYS = 0;

/**
 * What a refund the gateway reports does to a checkout: the payouts domain decides (its seller transactions and
 * ledger), registered by the composition root (src/routers/index.ts) so this module imports nothing of it. Runs in
 * the webhook's transaction, the checkout and its payment locked.
 */
export type ReportedRefundHandler = (
  tx: EntityManager,
  refund: { checkout: CheckoutRow; paymentId: string; eventId: string; now: Date },
) => Promise<'REFUNDED' | 'REFUNDED_AFTER_PAYOUT' | 'IGNORED'>;

let reportedRefundHandler: ReportedRefundHandler | null = null;
export function registerReportedRefundHandler(handler: ReportedRefundHandler) {
  reportedRefundHandler = handler;
}

/** What a webhook did (its 200 answer names it; webhook.routes.ts documents them). */
export const WEBHOOK_OUTCOMES = [
  'DUPLICATE',
  'PAID',
  'ALREADY_SETTLED',
  'LATE_SUCCESS_REFUNDED',
  'FAILED',
  'REFUNDED',
  'REFUNDED_AFTER_PAYOUT',
  'IGNORED',
] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

async function markPaid(tx: EntityManager, checkout: CheckoutRow, payment: PaymentRow, event: WebhookEvent, now: Date) {
  const gross = Number(checkout.total_in_cents);
  const fee = Number(checkout.platform_fee_in_cents);
  const net = gross - fee;
  const readyAt = new Date(now.getTime() + RETENTION_PERIOD_DAYS * 86_400_000);
  await execSql(tx, `update checkout set status = 'PAID', paid_at_utc = ?, updated_at_utc = ? where id = ?`, [now, now, checkout.id]);
  await execSql(tx, `update payment set status = 'SUCCEEDED', updated_at_utc = ? where id = ?`, [now, payment.id]);
  await execSql(
    tx,
    `insert into seller_transaction (id, created_at_utc, territory_id, store_id, checkout_id, seller_user_id, gross_amount_in_cents,
       platform_fee_in_cents, net_amount_in_cents, currency, status, ready_for_payout_at_utc, payout_id, paid_at_utc, updated_at_utc)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', ?, null, ?, ?)`,
    [newId(), now, checkout.territory_id, checkout.store_id, checkout.id, checkout.seller_user_id, gross, fee, net, checkout.currency, readyAt, now, now],
  );
  // gateway_clearing -> seller_pending (net) and -> platform_revenue (fee); zero amounts are not entries.
  const entries = [
    { account: { kind: 'gateway_clearing' as const }, amountInCents: -gross },
    { account: { kind: 'seller_pending' as const, ownerUserId: checkout.seller_user_id }, amountInCents: net },
    { account: { kind: 'platform_revenue' as const }, amountInCents: fee },
  ].filter((e) => e.amountInCents !== 0);
  await postLedgerTransaction(tx, { idempotencyKey: `checkout:${checkout.id}:paid`, territoryId: checkout.territory_id, currency: checkout.currency, entries });
  audit(tx, {
    actorUserId: null,
    action: 'checkout.paid',
    subjectType: 'Checkout',
    subjectId: checkout.id,
    territoryId: checkout.territory_id,
    data: { eventId: event.id, paymentId: payment.id, grossAmountInCents: gross, platformFeeInCents: fee, netAmountInCents: net, currency: checkout.currency },
  });
  enqueueNotification(tx, {
    type: 'ORDER_PAID',
    recipientUserIds: [checkout.seller_user_id],
    title: 'New paid order',
    body: `An order of ${(gross / 100).toFixed(2)} ${checkout.currency} was paid.`,
    data: { territoryId: checkout.territory_id, storeId: checkout.store_id, checkoutId: checkout.id },
    sourceKey: `checkout:${checkout.id}:paid`,
  });
}

/**
 * Verifies and applies one webhook of `provider`. Succeeded: an AWAITING_PAYMENT checkout becomes PAID in this one
 * transaction (seller transaction, ledger entries under `checkout:{id}:paid`, audit, ORDER_PAID to the seller); a
 * PAID (or REFUNDED) one is left alone; a CANCELED or PAYMENT_FAILED one is never paid: the late payment is recorded,
 * audited and refunded through the gateway. Failed: AWAITING_PAYMENT becomes PAYMENT_FAILED. Refunded (at the
 * gateway, outside this API): the registered `ReportedRefundHandler` (refunds.service.ts `applyReportedRefund`).
 */
export async function handleWebhook(
  em: EntityManager,
  config: AppConfig,
  clock: Clock,
  provider: string,
  rawBody: Buffer,
  headers: IncomingHttpHeaders,
): Promise<WebhookOutcome> {
  // The signature first: a request our gateway did not sign learns nothing (400), not even which providers exist.
  const gateway = paymentGatewayOf(config);
  if (!gateway) throw notFound('Payment provider');
  const event = gateway.parseWebhook(rawBody, headers);
  if (gateway.provider !== provider) throw notFound('Payment provider');
  // A genuine event we do not act on: 200, so the gateway does not retry it for days.
  if (!event) return 'IGNORED';
  return em.transactional(async (tx): Promise<WebhookOutcome> => {
    const now = clock.now();
    const recorded = await execSql<{ id: string }>(
      tx,
      `insert into payment_webhook_event (id, created_at_utc, provider, event_id, type, payment_id, checkout_id, payload)
       values (?, ?, ?, ?, ?, ?, ?, ?::jsonb) on conflict (provider, event_id) do nothing returning id`,
      [newId(), now, gateway.provider, event.id, event.type, event.paymentId, event.checkoutId, JSON.stringify(event.payload)],
    );
    if (recorded.length === 0) return 'DUPLICATE';
    const checkout = await checkoutRow(tx, event.checkoutId, { lock: true });
    const payment = checkout && (await paymentOfCheckout(tx, checkout.id, { lock: true }));
    if (!checkout || !payment || payment.id !== event.paymentId) throw badRequest('The webhook names no payment of a checkout here.', 'VALIDATION_FAILED');
    if (event.amountInCents !== Number(checkout.total_in_cents) || event.currency !== checkout.currency) {
      throw badRequest('The webhook amount or currency differs from the checkout.', 'WEBHOOK_AMOUNT_MISMATCH');
    }
    const subject = { subjectType: 'Checkout', subjectId: checkout.id, territoryId: checkout.territory_id };
    let outcome: WebhookOutcome = 'IGNORED';
    if (event.type === 'payment.succeeded') {
      if (checkout.status === 'AWAITING_PAYMENT') {
        await markPaid(tx, checkout, payment, event, now);
        outcome = 'PAID';
      } else if (checkout.status === 'CANCELED' || checkout.status === 'PAYMENT_FAILED') {
        const { refundId } = await gateway.refund({
          providerPaymentId: payment.provider_payment_id,
          amountInCents: Number(payment.amount_in_cents),
          currency: payment.currency,
          reason: `checkout ${checkout.status}`,
        });
        await execSql(tx, `update payment set status = 'REFUNDED', updated_at_utc = ? where id = ?`, [now, payment.id]);
        audit(tx, {
          actorUserId: null,
          action: 'checkout.payment.late_success_refunded',
          ...subject,
          data: { eventId: event.id, status: checkout.status, refundId },
        });
        outcome = 'LATE_SUCCESS_REFUNDED';
      } else {
        outcome = 'ALREADY_SETTLED';
      }
    } else if (event.type === 'payment.failed') {
      if (checkout.status === 'AWAITING_PAYMENT') {
        await execSql(tx, `update checkout set status = 'PAYMENT_FAILED', updated_at_utc = ? where id = ?`, [now, checkout.id]);
        await execSql(tx, `update payment set status = 'FAILED', updated_at_utc = ? where id = ?`, [now, payment.id]);
        audit(tx, { actorUserId: null, action: 'checkout.payment.failed', ...subject, data: { eventId: event.id } });
        outcome = 'FAILED';
      }
    } else {
      if (!reportedRefundHandler) throw new Error('No handler of reported refunds is registered.');
      outcome = await reportedRefundHandler(tx, { checkout, paymentId: payment.id, eventId: event.id, now });
    }
    await tx.flush();
    return outcome;
  });
}

/**
 * The fake gateway's "pay now" button: the buyer (others who may see the checkout 403, anyone else 404; 404 unless
 * the fake provider is active) has the gateway send its signed webhook for the checkout's payment. The event is
 * built, signed with PAYMENTS__WEBHOOKSECRET and handed to `handleWebhook` as raw bytes, the very path of
 * `POST /api/v1/payments/webhooks/fake`, signature check included, without an HTTP round trip to ourselves.
 */
export async function simulatePayment(ctx: ServiceContext, input: { checkoutId: string; outcome: 'SUCCEEDED' | 'FAILED' }): Promise<CheckoutOutput> {
  const gateway = paymentGatewayOf(ctx.config);
  if (!gateway || gateway.provider !== 'fake') throw notFound('Checkout');
  const checkout = await checkoutRow(ctx.em, input.checkoutId);
  const sees = checkout && (checkout.buyer_user_id === ctx.user.id || checkout.store_owner_user_id === ctx.user.id || isSystemAdmin(ctx.user));
  if (!checkout || !sees) throw notFound('Checkout');
  await requireTerritory(ctx, checkout.territory_id, { flag: 'MARKETPLACEENABLED', status: 'ANY' });
  if (checkout.buyer_user_id !== ctx.user.id) throw forbidden('Only the buyer can pay a checkout.', 'FORBIDDEN');
  const payment = await paymentOfCheckout(ctx.em, checkout.id);
  if (!payment) throw notFound('Payment');
  const body = Buffer.from(
    JSON.stringify({
      id: `evt_sim_${newId()}`,
      type: input.outcome === 'SUCCEEDED' ? 'payment.succeeded' : 'payment.failed',
      data: { paymentId: payment.id, checkoutId: checkout.id, amountInCents: Number(payment.amount_in_cents), currency: payment.currency },
    }),
  );
  await handleWebhook(ctx.em, ctx.config, ctx.clock, gateway.provider, body, { 'x-signature': signWebhook(ctx.config.payments.webhookSecret, body) });
  const [output] = await toCheckoutOutputs(ctx.em, [(await checkoutRow(ctx.em, checkout.id))!]);
  return output!;
}
