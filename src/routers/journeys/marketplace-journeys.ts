import { z } from 'zod';
import { execSql } from '../../db/sql.js';
import { CART_QUANTITY_MAX } from '../../entities/cart.entity.js';
import { ITEM_TYPES } from '../../entities/item.entity.js';
import { zId } from '../../platform/ids.js';
import { pageInput } from '../../platform/pagination.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { zText } from '../../platform/text.js';
import { cartOutput } from '../cart/cart.schemas.js';
import { addCartItem, getCart } from '../cart/cart.service.js';
import { checkoutCartInput, checkoutOutput, checkoutResultOutput, paymentOutput } from '../checkouts/checkouts.schemas.js';
import { checkoutCart, idempotencyKeyOf } from '../checkouts/checkouts.service.js';
import { itemOutput, itemType } from '../items/items.schemas.js';
import { pageItems } from '../items/items.service.js';
import { storeOutput } from '../stores/stores.schemas.js';
import { listStores } from '../stores/stores.service.js';
import { journeyPagination, journeySuggestion, type JourneySuggestion, paginationOf } from './journey-common.js';

// ---- Search ----

export const searchInput = z.object({
  territoryId: zId,
  query: zText({ min: 0, max: 200 }).optional(),
  category: zText({ min: 0, max: 100 }).optional(),
  type: itemType.optional(),
  ...pageInput,
});

export const searchOutput = z
  .object({
    items: z.array(itemOutput),
    stores: z.array(storeOutput),
    filters: z.object({
      categories: z.array(z.string()),
      types: z.array(z.enum(ITEM_TYPES)),
      priceRange: z.object({ minInCents: z.number().int().nullable(), maxInCents: z.number().int().nullable() }),
    }),
    pagination: journeyPagination,
    suggestions: z.array(journeySuggestion),
  })
  .meta({ id: 'JourneyMarketplaceSearch' });

const STORES_SHOWN = 20;

/** Items matching the search (newest first), the territory's stores, and the facets to refine it. */
export async function search(ctx: ServiceContext, input: z.infer<typeof searchInput>): Promise<z.infer<typeof searchOutput>> {
  const q = input.query || undefined;
  const page = await pageItems(ctx, {
    territoryId: input.territoryId,
    q,
    category: input.category || undefined,
    type: input.type,
    pageNumber: input.pageNumber,
    pageSize: input.pageSize,
  });
  const stores = await listStores(ctx, { territoryId: input.territoryId, skip: 0, take: STORES_SHOWN });
  // Facets of the territory's listed catalogue (active items of active stores), whatever the current filters.
  const facets = await execSql<{ categories: string[] | null; types: string[] | null; min: string | null; max: string | null }>(
    ctx.em,
    `select array_agg(distinct i.category) filter (where i.category is not null and i.category <> '') as categories,
            array_agg(distinct i.type) as types,
            min(i.price_in_cents)::text as min, max(i.price_in_cents)::text as max
       from item i join store s on s.id = i.store_id
      where i.territory_id = ? and i.status = 'ACTIVE' and s.status = 'ACTIVE'`,
    [input.territoryId],
  );
  const f = facets[0];
  const suggestions: JourneySuggestion[] = [];
  if (page.totalCount === 0 && (q || input.category || input.type)) {
    suggestions.push({ action: 'CLEAR_FILTERS', title: 'Search the whole marketplace', priority: 1 });
  }
  if (stores.length === 0) suggestions.push({ action: 'OPEN_STORE', title: 'Be the first to open a store here', priority: 2 });
  return {
    items: page.items,
    stores,
    filters: {
      categories: (f?.categories ?? []).sort((a, b) => a.localeCompare(b)),
      types: ITEM_TYPES.filter((t) => (f?.types ?? []).includes(t)),
      priceRange: { minInCents: f?.min ? Number(f.min) : null, maxInCents: f?.max ? Number(f.max) : null },
    },
    pagination: paginationOf(page),
    suggestions,
  };
}

// ---- Cart ----

export const addToCartInput = z.object({ territoryId: zId, itemId: zId, quantity: z.number().int().min(1).max(CART_QUANTITY_MAX) });

export const addToCartOutput = z
  .object({
    cart: cartOutput,
    total: z.object({ subtotalInCents: z.number().int(), currency: z.string() }),
    suggestions: z.array(journeySuggestion),
  })
  .meta({ id: 'JourneyAddToCart' });

export async function addToCart(ctx: ServiceContext, input: z.infer<typeof addToCartInput>): Promise<z.infer<typeof addToCartOutput>> {
  await addCartItem(ctx, { territoryId: input.territoryId, itemId: input.itemId, quantity: input.quantity, notes: null });
  const cart = await getCart(ctx, { territoryId: input.territoryId });
  const suggestions: JourneySuggestion[] = [];
  if (cart.items.some((l) => l.isPurchasable)) suggestions.push({ action: 'CHECKOUT', title: 'Go to checkout', priority: 1 });
  if (cart.items.some((l) => !l.isPurchasable)) suggestions.push({ action: 'CONTACT_SELLER', title: 'Some items are arranged with the seller', priority: 2 });
  suggestions.push({ action: 'CONTINUE_SHOPPING', title: 'Keep browsing', priority: 3 });
  return { cart, total: { subtotalInCents: cart.subtotalInCents, currency: cart.currency }, suggestions };
}

// ---- Checkout ----

const addressText = (max: number) => zText({ max });

export const shippingAddressInput = z.object({
  street: addressText(200),
  number: addressText(20),
  complement: addressText(100).nullish(),
  neighborhood: addressText(100).nullish(),
  city: addressText(100),
  state: addressText(100),
  zipCode: addressText(20),
  country: z
    .string()
    .trim()
    .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 code')
    .transform((v) => v.toUpperCase())
    .default('BR'),
});

export const checkoutJourneyInput = z.object({
  territoryId: zId,
  paymentMethod: checkoutCartInput.shape.paymentMethod,
  paymentToken: checkoutCartInput.shape.paymentToken,
  message: checkoutCartInput.shape.message,
  shippingAddress: shippingAddressInput,
});

export const checkoutJourneyOutput = z
  .object({
    /** Null when nothing in the cart could be bought online (the sellers were asked instead: `inquiries`). */
    order: checkoutOutput.nullable(),
    payment: paymentOutput.nullable(),
    confirmation: z.object({ orderId: z.uuid(), confirmationNumber: z.string() }).nullable(),
    /** One order per store: the orders of the cart's other stores. */
    additionalOrders: z.array(checkoutOutput),
    /** Lines that cannot be bought online became questions to their sellers. */
    inquiries: checkoutResultOutput.shape.inquiries,
  })
  .meta({ id: 'JourneyCheckout' });

/** A short, human-readable reference of an order (derived from its id). */
const confirmationNumberOf = (orderId: string) => `ARA-${orderId.replace(/-/g, '').slice(-10).toUpperCase()}`;

/**
 * Checks out the user's cart in the territory (the v1 cart checkout, Idempotency-Key honoured): one order per
 * store, the first answered as `order`. The shipping address is stored on each of the checkouts.
 */
export async function checkout(ctx: ServiceContext & { headers: Record<string, string | string[] | undefined> }, input: z.infer<typeof checkoutJourneyInput>) {
  const result = await checkoutCart(
    ctx,
    {
      territoryId: input.territoryId,
      paymentMethod: input.paymentMethod,
      paymentToken: input.paymentToken,
      message: input.message,
      shippingAddress: {
        ...input.shippingAddress,
        complement: input.shippingAddress.complement ?? null,
        neighborhood: input.shippingAddress.neighborhood ?? null,
      },
    },
    idempotencyKeyOf(ctx.headers['idempotency-key']),
  );
  const [order, ...additionalOrders] = result.checkouts;
  return {
    order: order ?? null,
    payment: order?.payment ?? null,
    confirmation: order ? { orderId: order.id, confirmationNumber: confirmationNumberOf(order.id) } : null,
    additionalOrders,
    inquiries: result.inquiries,
  };
}
