/**
 * SQL of the checkout reads (by id, a buyer's, a store's) and the mapping to the wire shape, shared by the checkout
 * service and the payments service (which answers simulate-payment with the checkout).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { managerOf } from '../../db/request-manager.js';
import { execSql, type HotReadSource, isoColumn, pgArray, runHotRead } from '../../db/sql.js';
import type { CheckoutStatus, PaymentMethod } from '../../entities/checkout.entity.js';
import type { PaymentProvider, PaymentStatus } from '../../entities/payment.entity.js';
import type { CheckoutOutput } from './checkouts.schemas.js';

export interface CheckoutRow {
  id: string;
  territory_id: string;
  store_id: string;
  buyer_user_id: string;
  seller_user_id: string;
  store_owner_user_id: string;
  status: CheckoutStatus;
  payment_method: PaymentMethod;
  currency: string;
  items_subtotal_in_cents: string;
  platform_fee_in_cents: string;
  total_in_cents: string;
  message: string | null;
  paid_at_utc: string | null;
  canceled_at_utc: string | null;
  created_at_utc: string;
  updated_at_utc: string;
}

const COLUMNS = `c.id, c.territory_id, c.store_id, c.buyer_user_id, c.seller_user_id, s.owner_user_id as store_owner_user_id, c.status,
  c.payment_method, c.currency, c.items_subtotal_in_cents::text as items_subtotal_in_cents, c.platform_fee_in_cents::text as platform_fee_in_cents,
  c.total_in_cents::text as total_in_cents, c.message, ${isoColumn('c.paid_at_utc')} as paid_at_utc, ${isoColumn('c.canceled_at_utc')} as canceled_at_utc,
  ${isoColumn('c.created_at_utc')} as created_at_utc, ${isoColumn('c.updated_at_utc')} as updated_at_utc`;
const FROM = 'from checkout c join store s on s.id = c.store_id';

const BY_ID = `select ${COLUMNS} ${FROM} where c.id = ?::uuid`;
/** A checkout by its key: locked on the transaction's connection, or a prepared read (src/db/sql.ts `runHotRead`). */
export async function checkoutRow(source: HotReadSource, id: string, opts: { lock?: boolean } = {}): Promise<CheckoutRow | undefined> {
  const [row] = opts.lock
    ? await execSql<CheckoutRow>(managerOf(source), `${BY_ID} for update of c`, [id])
    : await runHotRead<CheckoutRow>(source, { sql: BY_ID, params: [id] }, { prepared: true });
  return row;
}

/** A buyer's checkouts, newest first (`checkout_buyer_idx`). */
export function buyerCheckoutRows(source: HotReadSource, buyerUserId: string, offset: number, limit: number): Promise<CheckoutRow[]> {
  return runHotRead<CheckoutRow>(source, {
    sql: `select ${COLUMNS} ${FROM} where c.buyer_user_id = ? order by c.created_at_utc desc, c.id desc offset ?::int limit ?::int`,
    params: [buyerUserId, offset, limit],
  });
}

export async function buyerCheckoutCount(source: HotReadSource, buyerUserId: string): Promise<number> {
  const [row] = await runHotRead<{ total: number }>(source, {
    sql: 'select count(*)::int as total from checkout where buyer_user_id = ?',
    params: [buyerUserId],
  });
  return row?.total ?? 0;
}

/** A store's orders, newest first (`checkout_store_idx`). */
export function storeCheckoutRows(source: HotReadSource, storeId: string, offset: number, limit: number): Promise<CheckoutRow[]> {
  return runHotRead<CheckoutRow>(source, {
    sql: `select ${COLUMNS} ${FROM} where c.store_id = ? order by c.created_at_utc desc, c.id desc offset ?::int limit ?::int`,
    params: [storeId, offset, limit],
  });
}

interface ItemRow {
  checkout_id: string;
  item_id: string;
  title_snapshot: string;
  quantity: number;
  unit_price_in_cents: string;
  line_subtotal_in_cents: string;
  platform_fee_in_cents: string;
}

export interface PaymentRow {
  id: string;
  checkout_id: string;
  provider: PaymentProvider;
  provider_payment_id: string;
  method: PaymentMethod;
  status: PaymentStatus;
  amount_in_cents: string;
  currency: string;
  pix_copy_paste_code: string | null;
  client_secret: string | null;
}

const PAYMENT_COLUMNS = `id, checkout_id, provider, provider_payment_id, method, status, amount_in_cents::text as amount_in_cents, currency,
  pix_copy_paste_code, client_secret`;

export async function paymentOfCheckout(em: EntityManager, checkoutId: string, opts: { lock?: boolean } = {}): Promise<PaymentRow | undefined> {
  const [row] = await execSql<PaymentRow>(em, `select ${PAYMENT_COLUMNS} from payment where checkout_id = ?${opts.lock ? ' for update' : ''}`, [checkoutId]);
  return row;
}

/** The wire shape of checkouts (their lines and payment), in the order given. */
export async function toCheckoutOutputs(source: HotReadSource, rows: CheckoutRow[]): Promise<CheckoutOutput[]> {
  if (rows.length === 0) return [];
  const ids = pgArray(rows.map((r) => r.id));
  const [items, payments] = await Promise.all([
    runHotRead<ItemRow>(source, {
      sql: `select checkout_id, item_id, title_snapshot, quantity, unit_price_in_cents::text as unit_price_in_cents,
              line_subtotal_in_cents::text as line_subtotal_in_cents, platform_fee_in_cents::text as platform_fee_in_cents
         from checkout_item where checkout_id = any(?::uuid[]) order by checkout_id, position`,
      params: [ids],
    }),
    runHotRead<PaymentRow>(source, { sql: `select ${PAYMENT_COLUMNS} from payment where checkout_id = any(?::uuid[])`, params: [ids] }),
  ]);
  return rows.map((r) => {
    const payment = payments.find((p) => p.checkout_id === r.id);
    return {
      id: r.id,
      territoryId: r.territory_id,
      storeId: r.store_id,
      buyerUserId: r.buyer_user_id,
      sellerUserId: r.seller_user_id,
      status: r.status,
      paymentMethod: r.payment_method,
      currency: r.currency,
      itemsSubtotalInCents: Number(r.items_subtotal_in_cents),
      platformFeeInCents: Number(r.platform_fee_in_cents),
      totalInCents: Number(r.total_in_cents),
      message: r.message,
      items: items
        .filter((i) => i.checkout_id === r.id)
        .map((i) => ({
          itemId: i.item_id,
          titleSnapshot: i.title_snapshot,
          quantity: i.quantity,
          unitPriceInCents: Number(i.unit_price_in_cents),
          lineSubtotalInCents: Number(i.line_subtotal_in_cents),
          platformFeeInCents: Number(i.platform_fee_in_cents),
        })),
      payment: payment
        ? {
            id: payment.id,
            provider: payment.provider,
            method: payment.method,
            status: payment.status,
            amountInCents: Number(payment.amount_in_cents),
            currency: payment.currency,
            pixCopyPasteCode: payment.pix_copy_paste_code,
            clientSecret: payment.client_secret,
          }
        : null,
      paidAtUtc: r.paid_at_utc,
      canceledAtUtc: r.canceled_at_utc,
      createdAtUtc: r.created_at_utc,
      updatedAtUtc: r.updated_at_utc,
    };
  });
}
