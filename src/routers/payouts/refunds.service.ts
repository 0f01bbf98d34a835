/**
 * `POST /api/v1/checkouts/{checkoutId}/refund` (DESIGN section 13): the store owner or a SYSTEM_ADMIN refunds a PAID
 * checkout whose seller money has not been paid out (its seller transaction PENDING or READY, in no payout); else
 * 409. In one transaction, under the checkout's and the seller transaction's row locks (so the release job and a
 * concurrent refund wait): the gateway refunds the payment, the ledger reverses the sale under `checkout:{id}:refunded`
 * (gateway_clearing +gross, seller_pending or seller_ready -net, platform_revenue -fee: revenue shows a negative line),
 * the checkout and payment become REFUNDED, the seller transaction CANCELED, and the refund is audited.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import type { SellerTransactionStatus } from '../../entities/checkout.entity.js';
import { conflict, forbidden, notFound } from '../../platform/problems.js';
import { isSystemAdmin, type ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { checkoutRow, type CheckoutRow, paymentOfCheckout } from '../checkouts/checkouts.queries.js';
import type { ReportedRefundHandler } from '../checkouts/payments.service.js';
import type { CheckoutOutput } from '../checkouts/checkouts.schemas.js';
import { getCheckout } from '../checkouts/checkouts.service.js';
import { postLedgerTransaction } from '../ledger/ledger.js';
import { paymentGatewayOf } from '../payments/gateway.js';
import { MARKETPLACE } from './payout-config.service.js';

/** A checkout's seller transaction, as a refund reverses it. */
interface PaidSale {
  id: string;
  status: SellerTransactionStatus;
  payout_id: string | null;
  net: string;
  fee: string;
  gross: string;
}

/** The checkout's seller transaction, locked for update (the release job and a concurrent refund wait). */
async function saleOfCheckoutLocked(tx: EntityManager, checkoutId: string): Promise<PaidSale | undefined> {
  const [sale] = await execSql<PaidSale>(
    tx,
    `select id, status, payout_id, net_amount_in_cents::text as net, platform_fee_in_cents::text as fee, gross_amount_in_cents::text as gross
       from seller_transaction where checkout_id = ? for update`,
    [checkoutId],
  );
  return sale;
}

/** Whether the sale's money can still be taken back from the seller: not paid out, in no payout. */
const stillWithThePlatform = (sale: PaidSale) => sale.payout_id === null && (sale.status === 'PENDING' || sale.status === 'READY');

/**
 * Reverses a PAID checkout whose payment the gateway has refunded, in the caller's transaction: the ledger under
 * `checkout:{id}:refunded` (gateway_clearing +gross, seller_pending or seller_ready -net, platform_revenue -fee), the
 * checkout and payment REFUNDED, the seller transaction CANCELED, and the audit row.
 */
async function reverseRefundedSale(
  tx: EntityManager,
  refund: { checkout: CheckoutRow; paymentId: string; sale: PaidSale; now: Date; actorUserId: string | null; action: string; data: Record<string, unknown> },
) {
  const { checkout, sale, now } = refund;
  const gross = Number(sale.gross);
  const net = Number(sale.net);
  const fee = Number(sale.fee);
  const sellerKind = sale.status === 'PENDING' ? ('seller_pending' as const) : ('seller_ready' as const);
  await postLedgerTransaction(tx, {
    idempotencyKey: `checkout:${checkout.id}:refunded`,
    territoryId: checkout.territory_id,
    currency: checkout.currency,
    entries: [
      { account: { kind: 'gateway_clearing' as const }, amountInCents: gross },
      { account: { kind: sellerKind, ownerUserId: checkout.seller_user_id }, amountInCents: -net },
      { account: { kind: 'platform_revenue' as const }, amountInCents: -fee },
    ].filter((e) => e.amountInCents !== 0),
  });
  await execSql(tx, `update checkout set status = 'REFUNDED', updated_at_utc = ? where id = ?`, [now, checkout.id]);
  await execSql(tx, `update payment set status = 'REFUNDED', updated_at_utc = ? where id = ?`, [now, refund.paymentId]);
  await execSql(tx, `update seller_transaction set status = 'CANCELED', updated_at_utc = ? where id = ?`, [now, sale.id]);
  audit(tx, {
    actorUserId: refund.actorUserId,
    action: refund.action,
    subjectType: 'Checkout',
    subjectId: checkout.id,
    territoryId: checkout.territory_id,
    data: {
      ...refund.data,
      paymentId: refund.paymentId,
      grossAmountInCents: gross,
      platformFeeInCents: fee,
      netAmountInCents: net,
      currency: checkout.currency,
      from: sellerKind,
    },
  });
}

export async function refundCheckout(ctx: ServiceContext, input: { checkoutId: string }): Promise<CheckoutOutput> {
  await ctx.em.transactional(async (tx) => {
    const checkout = await checkoutRow(tx, input.checkoutId, { lock: true });
    const sees = checkout && (checkout.buyer_user_id === ctx.user.id || checkout.store_owner_user_id === ctx.user.id || isSystemAdmin(ctx.user));
    if (!checkout || !sees) throw notFound('Checkout');
    await requireTerritory({ ...ctx, em: tx }, checkout.territory_id, { flag: MARKETPLACE, status: 'ANY' });
    if (checkout.store_owner_user_id !== ctx.user.id && !isSystemAdmin(ctx.user))
      throw forbidden('Only the store owner or a system admin can refund a checkout.');
    const refusal = (why: string) => conflict(`The checkout cannot be refunded: ${why}.`, 'CHECKOUT_NOT_REFUNDABLE');
    if (checkout.status !== 'PAID') throw refusal(`it is ${checkout.status}, not PAID`);
    const sale = await saleOfCheckoutLocked(tx, checkout.id);
    if (!sale || !stillWithThePlatform(sale)) throw refusal('the seller has been paid out');
    const payment = await paymentOfCheckout(tx, checkout.id, { lock: true });
    const gateway = paymentGatewayOf(ctx.config);
    if (!payment || !gateway) throw refusal('no payment to refund');
    const { refundId } = await gateway.refund({
      providerPaymentId: payment.provider_payment_id,
      amountInCents: Number(sale.gross),
      currency: checkout.currency,
      reason: 'refund requested',
    });
    await reverseRefundedSale(tx, {
      checkout,
      paymentId: payment.id,
      sale,
      now: ctx.clock.now(),
      actorUserId: ctx.user.id,
      action: 'checkout.refunded',
      data: { refundId },
    });
    await tx.flush();
  });
  return getCheckout(ctx, input);
}

/**
 * The gateway reports a refund made outside this API (its dashboard, a dispute), in the webhook's transaction with
 * the checkout and payment locked. A PAID checkout whose money is still with the platform is reversed as
 * `POST .../refund` does (without asking the gateway again): REFUNDED. One already paid out to the seller cannot be
 * taken back here: it is audited for the finance team (`checkout.refunded_after_payout`) and left PAID. A checkout
 * refunded already (our own refund's event) or never paid: nothing to do.
 */
export const applyReportedRefund: ReportedRefundHandler = async (tx, refund) => {
  const { checkout } = refund;
  if (checkout.status !== 'PAID') return 'IGNORED';
  const sale = await saleOfCheckoutLocked(tx, checkout.id);
  if (!sale || !stillWithThePlatform(sale)) {
    audit(tx, {
      actorUserId: null,
      action: 'checkout.refunded_after_payout',
      subjectType: 'Checkout',
      subjectId: checkout.id,
      territoryId: checkout.territory_id,
      data: { eventId: refund.eventId, paymentId: refund.paymentId, sellerTransactionId: sale?.id ?? null, sellerTransactionStatus: sale?.status ?? null },
    });
    return 'REFUNDED_AFTER_PAYOUT';
  }
  await reverseRefundedSale(tx, {
    checkout,
    paymentId: refund.paymentId,
    sale,
    now: refund.now,
    actorUserId: null,
    action: 'checkout.refunded',
    data: { eventId: refund.eventId, reportedBy: 'gateway' },
  });
  return 'REFUNDED';
};
