import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, refuseDeletedAccountTrigger } from './base.entity.js';
import { Item } from './item.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

/** The largest quantity of one cart line (DESIGN section 13). */
export const CART_QUANTITY_MAX = 999;
/**
 * The most lines (distinct items) a cart holds: with items at most ITEM_PRICE_MAX (10^11 cents) and quantities at most
 * 999, a full cart's total stays below 2^53 cents, so every amount of its checkout is an exact integer in JSON and in
 * JavaScript (91 lines of the dearest item went past it: a checkout the webhook could never match, a cart unreadable).
 */
export const CART_LINES_MAX = 50;

/** A buyer's cart in one territory (DESIGN section 13 "Cart"): unique per (user, territory), so concurrent first adds make one. */
export const Cart = defineEntity({
  name: 'Cart',
  tableName: 'cart',
  triggers: [refuseDeletedAccountTrigger('cart', 'user_id')],
  properties: {
    ...baseProperties,
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade'),
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade').index(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  uniques: [{ name: 'cart_user_territory_unique', properties: ['userId', 'territoryId'] }],
});

/** One item in a cart: unique per (cart, item), so adding the same item again replaces quantity and notes. */
export const CartItem = defineEntity({
  name: 'CartItem',
  tableName: 'cart_item',
  properties: {
    ...baseProperties,
    cartId: () => p.manyToOne(Cart).mapToPk().fieldName('cart_id').deleteRule('cascade'),
    itemId: () => p.manyToOne(Item).mapToPk().fieldName('item_id').deleteRule('cascade').index(),
    quantity: p.integer(),
    notes: p.string().length(500).nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [{ name: 'cart_item_quantity_check', expression: `quantity >= 1 and quantity <= ${CART_QUANTITY_MAX}` }],
  uniques: [{ name: 'cart_item_cart_item_unique', properties: ['cartId', 'itemId'] }],
});
