import type { AppConfig } from '../../config.js';
import { execSql } from '../../db/sql.js';
import type { AccountEraser } from '../../platform/account-erasure.js';
import { newId } from '../../platform/ids.js';
import { badRequest, conflict, notFound, validationFailed } from '../../platform/problems.js';
import { DEFAULT_CURRENCY } from '../../platform/currency.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { CART_LINES_MAX } from '../../entities/cart.entity.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { itemFacts } from '../items/items.queries.js';
import { cartLineOf, cartLines, type CartLineRow, ensureCart, otherLineCurrencies } from './cart.queries.js';
import type { AddCartItemInput, CartLineOutput, CartOutput, CartSubtotal, UpdateCartLineInput } from './cart.schemas.js';

const MARKETPLACE = 'MARKETPLACEENABLED' as const;

/**
 * DESIGN section 13: item ACTIVE, pricing FIXED (with a price), store ACTIVE with payments enabled; and payments on
 * (provider other than `none`), else every line becomes an inquiry.
 */
export function isPurchasable(row: CartLineRow, config: AppConfig): boolean {
  return (
    config.payments.provider !== 'none' &&
    row.item_status === 'ACTIVE' &&
    row.pricing_type === 'FIXED' &&
    row.price_in_cents !== null &&
    Number(row.price_in_cents) > 0 &&
    row.store_status === 'ACTIVE' &&
    row.payments_enabled
  );
}

export function toLineOutput(row: CartLineRow, config: AppConfig): CartLineOutput {
  const price = row.price_in_cents === null ? null : Number(row.price_in_cents);
  return {
    id: row.id,
    itemId: row.item_id,
    quantity: row.quantity,
    notes: row.notes,
    item: {
      id: row.item_id,
      title: row.item_title,
      type: row.item_type,
      pricingType: row.pricing_type,
      priceInCents: price,
      currency: row.currency,
      status: row.item_status,
    },
    store: { id: row.store_id, displayName: row.store_display_name, status: row.store_status, paymentsEnabled: row.payments_enabled },
    isPurchasable: isPurchasable(row, config),
    lineSubtotalInCents: price === null ? null : price * row.quantity,
  };
}

/** The caller's cart in the territory (the given one, else the X-Session-Id selection); created on first read. */
export async function getCart(ctx: ServiceContext, input: { territoryId?: string | undefined }): Promise<CartOutput> {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  // Given the context, the reads of an existing cart run on the pool; only a first read creates it (a write).
  const cartId = await ensureCart(ctx, ctx.user.id, access.territoryId, ctx.clock.now());
  const lines = (await cartLines(ctx, cartId)).map((r) => toLineOutput(r, ctx.config));
  const subtotals = subtotalsByCurrency(lines);
  const currency = subtotals[0]?.currency ?? DEFAULT_CURRENCY;
  return {
    cartId,
    territoryId: access.territoryId,
    items: lines,
    subtotalInCents: subtotals[0]?.subtotalInCents ?? 0,
    currency,
    subtotals,
  };
}

/**
 * The purchasable lines summed per currency, one entry per currency of the lines in the order of their first line
 * (so the first is the cart's currency): a seller may re-price an item in the cart in another currency, and amounts of
 * different currencies are never added up (DESIGN section 13), as the checkout charges each currency apart.
 */
function subtotalsByCurrency(lines: CartLineOutput[]): CartSubtotal[] {
  const sums = new Map<string, number>();
  for (const line of lines) {
    const sum = sums.get(line.item.currency) ?? 0;
    sums.set(line.item.currency, line.isPurchasable ? sum + (line.lineSubtotalInCents ?? 0) : sum);
  }
  return [...sums].map(([currency, subtotalInCents]) => ({ currency, subtotalInCents }));
}

/**
 * Puts an ACTIVE item of someone else's store in the caller's cart of the item's territory: a new line (created),
 * or the same item again replaces quantity and notes (one `insert ... on conflict do update`). A cart holds one
 * currency (400 otherwise).
 */
export async function addCartItem(ctx: ServiceContext, input: AddCartItemInput): Promise<{ created: boolean; line: CartLineOutput }> {
  const item = await itemFacts(ctx.em, input.itemId);
  if (!item) throw notFound('Item');
  await requireTerritory(ctx, item.territoryId, { flag: MARKETPLACE });
  if (input.territoryId && input.territoryId.toLowerCase() !== item.territoryId) throw validationFailed('itemId', 'must be an item of the given territory');
  if (item.storeOwnerUserId === ctx.user.id) throw badRequest('You cannot buy your own item.', 'CANNOT_BUY_OWN_ITEM');
  if (item.status !== 'ACTIVE') throw conflict('The item is archived.', 'ITEM_ARCHIVED');
  const now = ctx.clock.now();
  const { created, lineId } = await ctx.em.transactional(async (tx) => {
    const cartId = await ensureCart(tx, ctx.user.id, item.territoryId, now);
    // The cart's row lock first: two adds at once count each other's lines.
    await execSql(tx, 'update cart set updated_at_utc = ? where id = ?', [now, cartId]);
    const [{ currency }] = (await execSql<{ currency: string }>(tx, 'select currency from item where id = ?', [item.id])) as [{ currency: string }];
    const others = await otherLineCurrencies(tx, cartId, item.id);
    if (others.some((c) => c !== currency)) {
      throw badRequest(`The cart holds items priced in ${[...new Set(others)].join(', ')}; this item is priced in ${currency}.`, 'CART_CURRENCY_MISMATCH');
    }
    if (others.length >= CART_LINES_MAX) {
      throw badRequest(`A cart holds at most ${CART_LINES_MAX} different items; check out or remove one first.`, 'CART_FULL');
    }
    const [row] = await execSql<{ id: string; created: boolean }>(
      tx,
      `insert into cart_item (id, created_at_utc, cart_id, item_id, quantity, notes, updated_at_utc) values (?, ?, ?, ?, ?, ?, ?)
       on conflict (cart_id, item_id) do update set quantity = excluded.quantity, notes = excluded.notes, updated_at_utc = excluded.updated_at_utc
       returning id, (xmax = 0) as created`,
      [newId(), now, cartId, item.id, input.quantity, input.notes, now],
    );
    return { created: row!.created, lineId: row!.id };
  });
  const line = await cartLineOf(ctx.em, ctx.user.id, lineId);
  return { created, line: toLineOutput(line!, ctx.config) };
}

/** The caller's line (by line id or catalogue item id); someone else's or none: 404. */
async function ownLine(ctx: ServiceContext, ref: string): Promise<CartLineRow> {
  const line = await cartLineOf(ctx.em, ctx.user.id, ref);
  if (!line) throw notFound('Cart item');
  await requireTerritory(ctx, line.territory_id, { flag: MARKETPLACE });
  return line;
}

/** Sets a line's quantity (and notes, when given: null clears them). */
export async function updateCartLine(ctx: ServiceContext, input: UpdateCartLineInput): Promise<CartLineOutput> {
  const line = await ownLine(ctx, input.ref);
  const notes = input.notes === undefined ? line.notes : input.notes || null;
  await execSql(ctx.em, 'update cart_item set quantity = ?, notes = ?, updated_at_utc = ? where id = ?', [input.quantity, notes, ctx.clock.now(), line.id]);
  return toLineOutput((await cartLineOf(ctx.em, ctx.user.id, line.id))!, ctx.config);
}

/** Removes a line from the caller's cart. */
export async function removeCartLine(ctx: ServiceContext, input: { ref: string }): Promise<void> {
  const line = await ownLine(ctx, input.ref);
  await execSql(ctx.em, 'delete from cart_item where id = ?', [line.id]);
}

/** Account deletion: the person's carts go (their lines with them). */
export const eraseCarts: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from cart where user_id = ?', [userId]);
};
