/**
 * `POST /api/v1/checkouts/{checkoutId}/refund` (DESIGN section 13): the store owner or a SYSTEM_ADMIN refunds a PAID
 * checkout whose seller money has not been paid out (its seller transaction PENDING or READY, in no payout); else
 * 409. In one transaction, under the checkout's and the seller transaction's row locks (so the release job and a
 * concurrent refund wait): the gateway refunds the payment, the ledger reverses the sale under `checkout:{id}:refunded`
 * (gateway_clearing +gross, seller_pending or seller_ready -net, platform_revenue -fee: revenue shows a negative line),
 * the checkout and payment become REFUNDED, the seller transaction CANCELED, and the refund is audited.
 */
import { execSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import type { SellerTransactionStatus } from '../../entities/checkout.entity.js';
import { conflict, forbidden, notFound } from '../../platform/problems.js';
import { isSystemAdmin, type ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { checkoutRow, paymentOfCheckout } from '../checkouts/checkouts.queries.js';
import type { CheckoutOutput } from '../checkouts/checkouts.schemas.js';
import { getCheckout } from '../checkouts/checkouts.service.js';
import { postLedgerTransaction } from '../ledger/ledger.js';
import { paymentGatewayOf } from '../payments/gateway.js';
import { MARKETPLACE } from './payout-config.service.js';

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
    const [sale] = await execSql<{ id: string; status: SellerTransactionStatus; payout_id: string | null; net: string; fee: string; gross: string }>(
      tx,
      `select id, status, payout_id, net_amount_in_cents::text as net, platform_fee_in_cents::text as fee, gross_amount_in_cents::text as gross
         from seller_transaction where checkout_id = ? for update`,
      [checkout.id],
    );
    if (!sale || sale.payout_id !== null || (sale.status !== 'PENDING' && sale.status !== 'READY')) throw refusal('the seller has been paid out');
    const payment = await paymentOfCheckout(tx, checkout.id, { lock: true });
    const gateway = paymentGatewayOf(ctx.config);
    if (!payment || !gateway) throw refusal('no payment to refund');
    const gross = Number(sale.gross);
    const net = Number(sale.net);
    const fee = Number(sale.fee);
    const { refundId } = await gateway.refund({
      providerPaymentId: payment.provider_payment_id,
      amountInCents: gross,
      currency: checkout.currency,
      reason: 'refund requested',
    });
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
    const now = ctx.clock.now();
    await execSql(tx, `update checkout set status = 'REFUNDED', updated_at_utc = ? where id = ?`, [now, checkout.id]);
    await execSql(tx, `update payment set status = 'REFUNDED', updated_at_utc = ? where id = ?`, [now, payment.id]);
    await execSql(tx, `update seller_transaction set status = 'CANCELED', updated_at_utc = ? where id = ?`, [now, sale.id]);
    audit(tx, {
      actorUserId: ctx.user.id,
      action: 'checkout.refunded',
      subjectType: 'Checkout',
      subjectId: checkout.id,
      territoryId: checkout.territory_id,
      data: {
        refundId,
        paymentId: payment.id,
        grossAmountInCents: gross,
        platformFeeInCents: fee,
        netAmountInCents: net,
        currency: checkout.currency,
        from: sellerKind,
      },
    });
    await tx.flush();
  });
  return getCheckout(ctx, input);
}
