import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { Checkout, CheckoutItem, type ShippingAddress } from '../../entities/checkout.entity.js';
import type { ItemType } from '../../entities/item.entity.js';
import { Payment } from '../../entities/payment.entity.js';
import { newId } from '../../platform/ids.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../platform/problems.js';
import { isSystemAdmin, type ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { cartLines, type CartLineRow, emptyCart, lockCart } from '../cart/cart.queries.js';
import { isPurchasable } from '../cart/cart.service.js';
import { createInquiry } from '../inquiries/inquiries.service.js';
import type { InquiryOutput } from '../inquiries/inquiries.schemas.js';
import { type PaymentGateway, paymentGatewayOf } from '../payments/gateway.js';
import { platformFeeInCents } from '../platform-fees/platform-fee.js';
import { enabledPaymentMethods } from '../fiscal/fiscal.queries.js';
import { activePlatformFee } from '../platform-fees/platform-fees.queries.js';
import { storeFacts } from '../stores/stores.queries.js';
import { buyerCheckoutCount, buyerCheckoutRows, checkoutRow, type CheckoutRow, storeCheckoutRows, toCheckoutOutputs } from './checkouts.queries.js';
import { CHECKOUT_MESSAGE_MAX, type CheckoutCartInput, type CheckoutOutput, type CheckoutResultOutput, IDEMPOTENCY_KEY_MAX } from './checkouts.schemas.js';

const MARKETPLACE = 'MARKETPLACEENABLED' as const;
/** How long an Idempotency-Key replays its first answer. */
const IDEMPOTENCY_WINDOW_HOURS = 24;

const declined = () => new AppError('PAYMENT_REQUIRED', 'PAYMENT_DECLINED', 'The payment was declined; the cart was left as it was.');

/** The card's client secret is the buyer's alone. */
function forViewer(checkout: CheckoutOutput, viewerId: string): CheckoutOutput {
  if (checkout.buyerUserId === viewerId || !checkout.payment) return checkout;
  return { ...checkout, payment: { ...checkout.payment, clientSecret: null } };
}

/** A cart checkout as callers ask for it: the journeys checkout adds the shipping address, stored on each checkout. */
type CheckoutRequest = CheckoutCartInput & { shippingAddress?: ShippingAddress | null };

/** The same body, whatever the key order or the spelling of defaults. */
function bodyHash(input: CheckoutRequest): string {
  const fields: unknown[] = [input.territoryId?.toLowerCase() ?? null, input.paymentMethod, input.message, input.paymentToken ?? null];
  // Only when given, so the hashes of bodies without one (v1) stay what they were.
  if (input.shippingAddress) fields.push(input.shippingAddress);
  const canonical = JSON.stringify(fields);
  return createHash('sha256').update(canonical).digest('hex');
}

/** The `Idempotency-Key` header: absent, or 1..255 visible characters (else 400). */
export function idempotencyKeyOf(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^[\x21-\x7e]+$/.test(value.trim()) || value.trim().length > IDEMPOTENCY_KEY_MAX) {
    throw badRequest(`Idempotency-Key: must be 1..${IDEMPOTENCY_KEY_MAX} visible ASCII characters`, 'VALIDATION_FAILED', [
      { field: 'Idempotency-Key', message: `must be 1..${IDEMPOTENCY_KEY_MAX} visible ASCII characters` },
    ]);
  }
  return value.trim();
}

interface StoredAnswer {
  status: number;
  body: CheckoutResultOutput | null;
}

/**
 * Claims (user, key) in the caller's transaction: `insert ... on conflict do update ... where` the record is older
 * than the window. A concurrent first use holds the unique index, so this waits until it commits (or rolls back).
 * Returns null when claimed (go on), else the stored answer; another body with the key is a 409.
 */
async function claimIdempotencyKey(tx: EntityManager, userId: string, key: string, hash: string, now: Date): Promise<StoredAnswer | null> {
  const claimed = await execSql<{ id: string }>(
    tx,
    `insert into checkout_idempotency_record (id, created_at_utc, user_id, idempotency_key, body_hash, response_status, response_body)
     values (?, ?, ?, ?, ?, null, null)
     on conflict (user_id, idempotency_key) do update set created_at_utc = excluded.created_at_utc, body_hash = excluded.body_hash,
       response_status = null, response_body = null
       where checkout_idempotency_record.created_at_utc < excluded.created_at_utc - make_interval(hours => ?)
     returning id`,
    [newId(), now, userId, key, hash, IDEMPOTENCY_WINDOW_HOURS],
  );
  if (claimed.length > 0) return null;
  const [existing] = await execSql<{ body_hash: string; response_status: number | null; response_body: CheckoutResultOutput | null }>(
    tx,
    'select body_hash, response_status, response_body from checkout_idempotency_record where user_id = ? and idempotency_key = ?',
    [userId, key],
  );
  if (!existing || existing.body_hash !== hash) {
    throw conflict('This Idempotency-Key was used with another request body.', 'IDEMPOTENCY_KEY_REUSED');
  }
  return { status: existing.response_status ?? 201, body: existing.response_body };
}

async function storeAnswer(tx: EntityManager, userId: string, key: string, answer: StoredAnswer) {
  await execSql(tx, 'update checkout_idempotency_record set response_status = ?, response_body = ?::jsonb where user_id = ? and idempotency_key = ?', [
    answer.status,
    JSON.stringify(answer.body),
    userId,
    key,
  ]);
}

/** The message of the inquiry a non-purchasable line becomes. */
function inquiryMessage(line: CartLineRow, message: string | null): string {
  const parts = [message ?? `I would like ${line.quantity} x ${line.item_title}.`];
  if (message) parts.push(`(${line.quantity} x ${line.item_title})`);
  if (line.notes) parts.push(`Notes: ${line.notes}`);
  const text = parts.join(' ');
  return text.length <= CHECKOUT_MESSAGE_MAX ? text : text.slice(0, CHECKOUT_MESSAGE_MAX);
}

interface PlannedCheckout {
  id: string;
  storeId: string;
  sellerUserId: string;
  currency: string;
  lines: Array<{ line: CartLineRow; unitPrice: number; subtotal: number; fee: number }>;
}

/** Purchasable lines grouped per store (and currency), with their prices and platform fees; in cart order. */
async function planCheckouts(tx: EntityManager, territoryId: string, lines: CartLineRow[]): Promise<PlannedCheckout[]> {
  const fees = new Map<ItemType, Awaited<ReturnType<typeof activePlatformFee>>>();
  const plans = new Map<string, PlannedCheckout>();
  for (const line of lines) {
    if (!fees.has(line.item_type)) fees.set(line.item_type, await activePlatformFee(tx, territoryId, line.item_type));
    const unitPrice = Number(line.price_in_cents);
    const subtotal = unitPrice * line.quantity;
    const fee = platformFeeInCents(fees.get(line.item_type) ?? null, subtotal, line.quantity);
    const key = `${line.store_id}|${line.currency}`;
    let plan = plans.get(key);
    if (!plan) {
      plan = { id: newId(), storeId: line.store_id, sellerUserId: line.store_owner_user_id, currency: line.currency, lines: [] };
      plans.set(key, plan);
    }
    plan.lines.push({ line, unitPrice, subtotal, fee });
  }
  return [...plans.values()];
}

/** Asks the gateway for each checkout's payment, then writes the checkouts; false when the gateway declined one. */
async function writeCheckouts(
  ctx: ServiceContext,
  tx: EntityManager,
  gateway: PaymentGateway,
  territoryId: string,
  plans: PlannedCheckout[],
  input: CheckoutRequest,
): Promise<boolean> {
  const now = ctx.clock.now();
  const payments = [];
  for (const plan of plans) {
    const total = plan.lines.reduce((sum, l) => sum + l.subtotal, 0);
    const paymentId = newId();
    const result = await gateway.createPayment({
      paymentId,
      checkoutId: plan.id,
      amountInCents: total,
      currency: plan.currency,
      method: input.paymentMethod,
      paymentToken: input.paymentToken ?? null,
    });
    payments.push({ plan, paymentId, total, result });
  }
  // One declined payment fails the attempt: its checkouts are kept as PAYMENT_FAILED, the cart stays as it was.
  const accepted = payments.every((p) => p.result.outcome === 'PENDING');
  for (const { plan, paymentId, total, result } of payments) {
    tx.create(Checkout, {
      id: plan.id,
      createdAtUtc: now,
      updatedAtUtc: now,
      territoryId,
      storeId: plan.storeId,
      buyerUserId: ctx.user.id,
      sellerUserId: plan.sellerUserId,
      status: accepted ? 'AWAITING_PAYMENT' : 'PAYMENT_FAILED',
      paymentMethod: input.paymentMethod,
      currency: plan.currency,
      itemsSubtotalInCents: total,
      platformFeeInCents: plan.lines.reduce((sum, l) => sum + l.fee, 0),
      totalInCents: total,
      message: input.message,
      shippingAddress: input.shippingAddress ?? null,
      paidAtUtc: null,
      canceledAtUtc: null,
    });
    plan.lines.forEach((l, position) =>
      tx.create(CheckoutItem, {
        createdAtUtc: now,
        checkoutId: plan.id,
        itemId: l.line.item_id,
        itemType: l.line.item_type,
        titleSnapshot: l.line.item_title,
        quantity: l.line.quantity,
        unitPriceInCents: l.unitPrice,
        lineSubtotalInCents: l.subtotal,
        platformFeeInCents: l.fee,
        position,
      }),
    );
    tx.create(Payment, {
      id: paymentId,
      createdAtUtc: now,
      updatedAtUtc: now,
      checkoutId: plan.id,
      provider: gateway.provider,
      providerPaymentId: result.providerPaymentId,
      method: input.paymentMethod,
      status: accepted ? 'PENDING' : 'FAILED',
      amountInCents: total,
      currency: plan.currency,
      pixCopyPasteCode: accepted && result.outcome === 'PENDING' ? result.pixCopyPasteCode : null,
      clientSecret: accepted && result.outcome === 'PENDING' ? result.clientSecret : null,
    });
  }
  if (!accepted) {
    audit(tx, {
      actorUserId: ctx.user.id,
      action: 'checkout.payment.declined',
      subjectType: 'Checkout',
      subjectId: plans[0]?.id ?? null,
      territoryId,
      data: { checkoutIds: plans.map((p) => p.id), method: input.paymentMethod },
    });
  }
  await tx.flush();
  return accepted;
}

/**
 * Checks out the caller's cart in the territory (DESIGN section 13 "Checkout"), in one transaction holding the
 * cart's row lock: purchasable lines become one checkout per store (AWAITING_PAYMENT, prices and titles snapshotted,
 * a fee per line taken from the seller, a gateway payment each), the other lines of ACTIVE items become inquiries,
 * and the cart is emptied. Concurrent checkouts of one cart run one after the other: the later ones find it empty
 * (400 CART_EMPTY). With an `Idempotency-Key`, a repeat of the same body within 24 hours answers the first answer
 * again (a concurrent one waits for it); another body with the key is a 409. A payment the gateway declines at
 * once: 402 PAYMENT_DECLINED, the checkouts kept as PAYMENT_FAILED, no inquiry, the cart left as it was.
 */
export async function checkoutCart(ctx: ServiceContext, input: CheckoutRequest, idempotencyKey: string | null): Promise<CheckoutResultOutput> {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  const territoryId = access.territoryId;
  const gateway = paymentGatewayOf(ctx.config);
  const userId = ctx.user.id;
  const answer = await ctx.em.transactional(async (tx): Promise<StoredAnswer> => {
    if (idempotencyKey) {
      const stored = await claimIdempotencyKey(tx, userId, idempotencyKey, bodyHash(input), ctx.clock.now());
      if (stored) return stored;
    }
    // DESIGN 13: a territory that configured its payment methods accepts only those (never configured: all of them).
    // Checked after the replay (a retry answers its checkout even if the method was turned off since) and in the
    // transaction, against a change committed while it waited.
    const enabledMethods = await enabledPaymentMethods(tx, territoryId);
    if (enabledMethods && !enabledMethods.includes(input.paymentMethod)) {
      throw badRequest(`This territory does not accept ${input.paymentMethod}; it accepts ${enabledMethods.join(', ')}.`, 'PAYMENT_METHOD_NOT_ENABLED');
    }
    const cartId = await lockCart(tx, userId, territoryId);
    const lines = cartId ? await cartLines(tx, cartId) : [];
    if (!cartId || lines.length === 0) throw badRequest('The cart is empty.', 'CART_EMPTY');

    const purchasable = gateway ? lines.filter((l) => isPurchasable(l, ctx.config)) : [];
    // Lines of archived items can be neither bought nor asked about: they leave with the rest of the cart.
    const asked = lines.filter((l) => !purchasable.includes(l) && l.item_status === 'ACTIVE' && l.store_owner_user_id !== userId);
    const plans = await planCheckouts(tx, territoryId, purchasable);
    if (gateway && plans.length > 0 && !(await writeCheckouts(ctx, tx, gateway, territoryId, plans, input))) {
      const result: StoredAnswer = { status: 402, body: null };
      if (idempotencyKey) await storeAnswer(tx, userId, idempotencyKey, result);
      return result;
    }
    const inquiries: InquiryOutput[] = [];
    for (const line of asked) {
      inquiries.push(await createInquiry({ ...ctx, em: tx }, { itemId: line.item_id, message: inquiryMessage(line, input.message) }));
    }
    await emptyCart(tx, cartId);
    const checkouts = await toCheckoutOutputs(
      tx,
      (await Promise.all(plans.map((p) => checkoutRow(tx, p.id)))).filter((r): r is CheckoutRow => r !== undefined),
    );
    const storeIds = [...new Set([...purchasable, ...asked].map((l) => l.store_id))];
    const body: CheckoutResultOutput = {
      checkouts,
      inquiries,
      summaries: storeIds.map((storeId) => ({
        storeId,
        checkoutItemCount: purchasable.filter((l) => l.store_id === storeId).length,
        inquiryCount: asked.filter((l) => l.store_id === storeId).length,
      })),
    };
    const result = { status: 201, body };
    if (idempotencyKey) await storeAnswer(tx, userId, idempotencyKey, result);
    return result;
  });
  if (answer.status === 402 || !answer.body) throw declined();
  return answer.body;
}

/** The checkout when the caller may see it (its buyer, its store's owner, a SYSTEM_ADMIN); otherwise 404. */
async function visibleCheckout(ctx: ServiceContext, checkoutId: string, opts: { lock?: boolean; em?: EntityManager } = {}): Promise<CheckoutRow> {
  // Without a transaction's manager, the reads are given the context: on the pool, its manager left unforked.
  const source = opts.em ? { ...ctx, em: opts.em } : ctx;
  const row = await checkoutRow(source, checkoutId, opts);
  const sees = row && (row.buyer_user_id === ctx.user.id || row.store_owner_user_id === ctx.user.id || isSystemAdmin(ctx.user));
  if (!row || !sees) throw notFound('Checkout');
  await requireTerritory(source, row.territory_id, { flag: MARKETPLACE, status: 'ANY' });
  return row;
}

export async function getCheckout(ctx: ServiceContext, input: { checkoutId: string }): Promise<CheckoutOutput> {
  const row = await visibleCheckout(ctx, input.checkoutId);
  return forViewer((await toCheckoutOutputs(ctx, [row]))[0]!, ctx.user.id);
}

/** The caller's checkouts (as a buyer), newest first. */
export async function listMyCheckouts(ctx: ServiceContext, input: { skip: number; take: number }): Promise<CheckoutOutput[]> {
  return toCheckoutOutputs(ctx, await buyerCheckoutRows(ctx, ctx.user.id, input.skip, input.take));
}

export async function pageMyCheckouts(ctx: ServiceContext, input: { pageNumber: number; pageSize: number }) {
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const [rows, total] = await Promise.all([buyerCheckoutRows(ctx, ctx.user.id, offset, limit), buyerCheckoutCount(ctx, ctx.user.id)]);
  return toPage(await toCheckoutOutputs(ctx, rows), total, input.pageNumber, input.pageSize);
}

/** A store's orders, newest first: its owner only (others 403; an unknown store 404). */
export async function listStoreOrders(ctx: ServiceContext, input: { storeId: string; skip: number; take: number }): Promise<CheckoutOutput[]> {
  const store = await storeFacts(ctx, input.storeId);
  if (!store) throw notFound('Store');
  await requireTerritory(ctx, store.territory_id, { flag: MARKETPLACE });
  if (store.owner_user_id !== ctx.user.id) throw forbidden("Only the store's owner can read its orders.", 'NOT_STORE_OWNER');
  const outputs = await toCheckoutOutputs(ctx, await storeCheckoutRows(ctx, store.id, input.skip, input.take));
  return outputs.map((c) => forViewer(c, ctx.user.id));
}

/**
 * The buyer cancels a checkout that awaits payment (CANCELED; others who see it 403, anyone else 404; any other
 * status 409), under the checkout's row lock, audited. A payment that still succeeds later is refunded by the webhook.
 */
export async function cancelCheckout(ctx: ServiceContext, input: { checkoutId: string }): Promise<CheckoutOutput> {
  await ctx.em.transactional(async (tx) => {
    const row = await visibleCheckout(ctx, input.checkoutId, { lock: true, em: tx });
    if (row.buyer_user_id !== ctx.user.id) throw forbidden('Only the buyer can cancel a checkout.', 'FORBIDDEN');
    if (row.status !== 'AWAITING_PAYMENT')
      throw conflict(`The checkout is ${row.status}: only one awaiting payment can be canceled.`, 'CHECKOUT_NOT_AWAITING_PAYMENT');
    const now = ctx.clock.now();
    await execSql(tx, `update checkout set status = 'CANCELED', canceled_at_utc = ?, updated_at_utc = ? where id = ?`, [now, now, row.id]);
    audit(tx, { actorUserId: ctx.user.id, action: 'checkout.canceled', subjectType: 'Checkout', subjectId: row.id, territoryId: row.territory_id });
    await tx.flush();
  });
  return getCheckout(ctx, input);
}
