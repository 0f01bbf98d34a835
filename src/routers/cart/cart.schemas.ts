import { z } from 'zod';
import { CART_QUANTITY_MAX } from '../../entities/cart.entity.js';
import { ITEM_STATUSES, ITEM_TYPES, PRICING_TYPES } from '../../entities/item.entity.js';
import { STORE_STATUSES } from '../../entities/store.entity.js';
import { zId } from '../../platform/ids.js';
import { zOptionalText, zText } from '../../platform/text.js';

/** Not in the spec: a cart line's notes are short. */
export const CART_NOTES_MAX = 500;

const quantity = z.number().int().min(1).max(CART_QUANTITY_MAX);

export const cartLineItem = z
  .object({
    id: z.uuid(),
    title: z.string(),
    type: z.enum(ITEM_TYPES),
    pricingType: z.enum(PRICING_TYPES),
    /** Integer cents; null when the item has no price. */
    priceInCents: z.number().int().nullable(),
    currency: z.string(),
    status: z.enum(ITEM_STATUSES),
  })
  .meta({ id: 'CartLineItem' });

export const cartLineStore = z
  .object({ id: z.uuid(), displayName: z.string(), status: z.enum(STORE_STATUSES), paymentsEnabled: z.boolean() })
  .meta({ id: 'CartLineStore' });

export const cartLineOutput = z
  .object({
    id: z.uuid(),
    itemId: z.uuid(),
    quantity: z.number().int(),
    notes: z.string().nullable(),
    item: cartLineItem,
    store: cartLineStore,
    /** Item ACTIVE, pricing FIXED, store ACTIVE with payments, and payments on: checked out and paid; else an inquiry. */
    isPurchasable: z.boolean(),
    /** price x quantity in integer cents; null when the item has no price. */
    lineSubtotalInCents: z.number().int().nullable(),
  })
  .meta({ id: 'CartLine' });
export type CartLineOutput = z.infer<typeof cartLineOutput>;

/** What the purchasable lines priced in one currency add up to (what the checkouts in that currency charge). */
export const cartSubtotal = z
  .object({
    currency: z.string(),
    subtotalInCents: z.number().int(),
  })
  .meta({ id: 'CartSubtotal' });

/**
 * A cart holds one currency (adding an item in another is a 400), but a seller may re-price a line's item in another
 * currency afterwards. Amounts of different currencies are never added up: `subtotalInCents` counts only the lines in
 * `currency`, and `subtotals` has one entry per currency of the lines, so a line in another currency shows there (the
 * checkout charges it in its own currency, in a checkout of its own).
 */
export const cartOutput = z
  .object({
    cartId: z.uuid(),
    territoryId: z.uuid(),
    items: z.array(cartLineOutput),
    /** The sum of the purchasable lines priced in `currency` (what the checkouts in it charge), integer cents. */
    subtotalInCents: z.number().int(),
    /** The cart's currency: its first line's (BRL when empty). */
    currency: z.string(),
    /** One entry per currency of the lines, in the order of their first line; the first is `currency` (empty cart: none). */
    subtotals: z.array(cartSubtotal),
  })
  .meta({ id: 'Cart' });
export type CartOutput = z.infer<typeof cartOutput>;
export type CartSubtotal = z.infer<typeof cartSubtotal>;

export const getCartInput = z.object({ territoryId: zId.optional() });

export const addCartItemInput = z.object({
  /** Optional: the item's territory; when given it must be the item's. */
  territoryId: zId.nullish(),
  itemId: zId,
  quantity,
  notes: zOptionalText(CART_NOTES_MAX),
});
export type AddCartItemInput = z.infer<typeof addCartItemInput>;

/** `notes` omitted keeps them, null or empty clears them. */
const updateFields = {
  quantity,
  notes: zText({ min: 0, max: CART_NOTES_MAX }).nullable().optional(),
};
export const updateCartLineByIdInput = z.object({ id: zId, ...updateFields });
export const updateCartLineByItemInput = z.object({ itemId: zId, ...updateFields });
export type UpdateCartLineInput = { ref: string; quantity: number; notes?: string | null | undefined };

export const cartLineRefInput = z.object({ itemId: zId });
