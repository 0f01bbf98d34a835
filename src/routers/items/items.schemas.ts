import { z } from 'zod';
import { DEFAULT_CURRENCY, zCurrency } from '../../platform/currency.js';
import { ITEM_STATUSES, ITEM_TYPES, PRICING_TYPES } from '../../entities/item.entity.js';
import { zLatitude, zLongitude } from '../../platform/geo.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { sanitizeText, zOptionalText, zText } from '../../platform/text.js';
import { lenientEnum } from '../../platform/enums.js';

// The spec gives no item text limits; these mirror the store and event ones.
export const ITEM_TITLE_MAX = 200;
export const ITEM_DESCRIPTION_MAX = 2000;
export const ITEM_CATEGORY_MAX = 100;
export const ITEM_TAGS_MAX = 500;
export const ITEM_TAG_MAX = 50;
export const ITEM_UNIT_MAX = 50;
/** Spec media limits: up to 10 media per item. */
export const ITEM_MEDIA_MAX = 10;
/** The largest price accepted (a bound, so cents stay exact integers). */
export const ITEM_PRICE_MAX = 1_000_000_000;

/** `Product`, `product` and `PRODUCT` are one type; outputs are upper-case. */
export const itemType = lenientEnum(ITEM_TYPES);
const pricingType = lenientEnum(PRICING_TYPES);

/**
 * A decimal amount with at most 2 decimals, as a JSON number or a numeric string, turned into integer cents
 * through its decimal text (no floating-point rounding).
 */
export const zPriceAmount = z
  .union([z.number(), z.string()])
  .transform((v, ctx) => {
    const text = typeof v === 'number' ? String(v) : v.trim();
    const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text);
    if (!match) {
      ctx.addIssue({ code: 'custom', message: 'must be a non-negative amount with at most 2 decimals' });
      return z.NEVER;
    }
    const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
    if (cents > ITEM_PRICE_MAX * 100) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${ITEM_PRICE_MAX}` });
      return z.NEVER;
    }
    return cents;
  })
  .meta({ description: `A non-negative amount with at most 2 decimals, as a number or a string (e.g. "12.50"); at most ${ITEM_PRICE_MAX}` });

/** Comma-separated tags: each sanitized and trimmed, empty and repeated ones dropped, joined with ", ". */
const zTags = z
  .string()
  .transform((raw) => [
    ...new Set(
      raw
        .split(',')
        .map((t) => sanitizeText(t))
        .filter(Boolean),
    ),
  ])
  .pipe(z.array(z.string().max(ITEM_TAG_MAX, `each tag must be at most ${ITEM_TAG_MAX} characters`)))
  .transform((tags) => (tags.length > 0 ? tags.join(', ') : null))
  .pipe(z.string().max(ITEM_TAGS_MAX).nullable())
  .meta({ description: `Comma-separated tags, each at most ${ITEM_TAG_MAX} characters, ${ITEM_TAGS_MAX} characters in all once joined` });

export const itemOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    storeId: z.uuid(),
    createdByUserId: z.uuid(),
    type: z.enum(ITEM_TYPES),
    title: z.string(),
    description: z.string().nullable(),
    category: z.string().nullable(),
    /** Comma-separated. */
    tags: z.string().nullable(),
    pricingType: z.enum(PRICING_TYPES),
    /** Decimal amount (at most 2 decimals); null when not given (FREE items: 0). */
    priceAmount: z.number().nullable(),
    /** The same price in integer cents. */
    priceInCents: z.number().int().nullable(),
    currency: z.string(),
    unit: z.string().nullable(),
    latitude: z.number().nullable(),
    longitude: z.number().nullable(),
    mediaIds: z.array(z.uuid()),
    /** The first media's URL. */
    primaryImageUrl: z.string().nullable(),
    /** URLs of all media (images, videos, audios), in order. */
    imageUrls: z.array(z.string()),
    status: z.enum(ITEM_STATUSES),
    createdAtUtc: z.iso.datetime(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'Item' });
export type ItemOutput = z.infer<typeof itemOutput>;
export const itemPage = pagedOutput(itemOutput).meta({ id: 'ItemPage' });

/** FIXED needs a price above 0; FREE takes 0 or none. */
export function checkPricing(v: { pricingType?: string | undefined; priceAmount?: number | null | undefined }, ctx: z.RefinementCtx) {
  if (v.pricingType === 'FIXED' && !(typeof v.priceAmount === 'number' && v.priceAmount > 0)) {
    ctx.addIssue({ code: 'custom', path: ['priceAmount'], message: 'a FIXED price needs priceAmount greater than 0' });
  }
  if (v.pricingType === 'FREE' && typeof v.priceAmount === 'number' && v.priceAmount !== 0) {
    ctx.addIssue({ code: 'custom', path: ['priceAmount'], message: 'a FREE item has priceAmount 0 or none' });
  }
}

const coordinates = (v: { latitude?: number | null | undefined; longitude?: number | null | undefined }, ctx: z.RefinementCtx) => {
  if ((v.latitude === undefined || v.latitude === null) !== (v.longitude === undefined || v.longitude === null)) {
    ctx.addIssue({ code: 'custom', path: ['longitude'], message: 'latitude and longitude go together' });
  }
};

export const createItemInput = z
  .object({
    /** Optional: the store's territory; when given it must be the store's. */
    territoryId: zId.nullish(),
    storeId: zId,
    type: itemType,
    title: zText({ max: ITEM_TITLE_MAX }),
    description: zOptionalText(ITEM_DESCRIPTION_MAX),
    category: zOptionalText(ITEM_CATEGORY_MAX),
    tags: zTags.nullish().transform((v) => v ?? null),
    pricingType,
    /** Decimal, at most 2 decimals; carried as integer cents from here on. */
    priceAmount: zPriceAmount.nullish(),
    currency: zCurrency.default(DEFAULT_CURRENCY),
    unit: zOptionalText(ITEM_UNIT_MAX),
    latitude: zLatitude.nullish(),
    longitude: zLongitude.nullish(),
    mediaIds: z.array(zId).max(ITEM_MEDIA_MAX, `at most ${ITEM_MEDIA_MAX} media`).default([]),
  })
  .superRefine((v, ctx) => {
    checkPricing({ pricingType: v.pricingType, priceAmount: v.priceAmount }, ctx);
    coordinates(v, ctx);
  });
export type CreateItemInput = z.infer<typeof createItemInput>;

/**
 * Partial update (media are set at creation): omitted keeps, null clears the optional fields. Pricing and
 * coordinates are checked on the merged item.
 */
export const updateItemInput = z.object({
  itemId: zId,
  type: itemType.optional(),
  title: zText({ max: ITEM_TITLE_MAX }).optional(),
  description: zText({ min: 0, max: ITEM_DESCRIPTION_MAX }).nullable().optional(),
  category: zText({ min: 0, max: ITEM_CATEGORY_MAX }).nullable().optional(),
  tags: zTags.nullable().optional(),
  pricingType: pricingType.optional(),
  priceAmount: zPriceAmount.nullable().optional(),
  currency: zCurrency.optional(),
  unit: zText({ min: 0, max: ITEM_UNIT_MAX }).nullable().optional(),
  latitude: zLatitude.nullable().optional(),
  longitude: zLongitude.nullable().optional(),
});
export type UpdateItemInput = z.infer<typeof updateItemInput>;

export const itemIdInput = z.object({ itemId: zId });

const listFilters = {
  territoryId: zId.optional(),
  storeId: zId.optional(),
  type: itemType.optional(),
  /** Exact category, case-insensitive. */
  category: zText({ min: 0, max: ITEM_CATEGORY_MAX }).optional(),
  /** Partial, case-insensitive match of title or description. */
  q: zText({ min: 0, max: 200 }).optional(),
};
export const listItemsInput = z.object({ ...listFilters, ...skipTakeInput() });
export const pagedItemsInput = z.object({ ...listFilters, ...pageInput });
export type ItemListFilter = Pick<z.infer<typeof listItemsInput>, 'territoryId' | 'storeId' | 'type' | 'category' | 'q'>;
