import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Store } from './store.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const ITEM_TYPES = ['PRODUCT', 'SERVICE'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];
export const PRICING_TYPES = ['FIXED', 'NEGOTIABLE', 'FREE'] as const;
export type PricingType = (typeof PRICING_TYPES)[number];
export const ITEM_STATUSES = ['ACTIVE', 'ARCHIVED'] as const;
export type ItemStatus = (typeof ITEM_STATUSES)[number];

const ACTIVE = `where status = 'ACTIVE'`;

/**
 * A product or service of a store. The price is an integer of cents (`priceInCents`, null when not given) with its
 * ISO 4217 currency; the API shows it as the decimal `priceAmount`. `mediaIds` keeps the attached media in display
 * order (the attachments themselves belong to the media module). Lists only ever read ACTIVE items, so their
 * indexes are partial on that status.
 */
export const Item = defineEntity({
  name: 'Item',
  tableName: 'item',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    storeId: () => p.manyToOne(Store).mapToPk().fieldName('store_id').deleteRule('cascade').index(),
    createdByUserId: () => p.manyToOne(User).mapToPk().fieldName('created_by_user_id').deleteRule('cascade').index(),
    type: p.string().length(20).$type<ItemType>(),
    title: p.string().length(200),
    description: p.string().length(2000).nullable(),
    category: p.string().length(100).nullable(),
    tags: p.string().length(500).nullable(),
    pricingType: p.string().length(20).$type<PricingType>(),
    priceInCents: p.bigint('number').nullable(),
    currency: p.string().length(3),
    unit: p.string().length(50).nullable(),
    latitude: p.double().$type<number>().nullable(),
    longitude: p.double().$type<number>().nullable(),
    mediaIds: p.array().$type<string[]>().default([]),
    status: p.string().length(20).$type<ItemStatus>().default('ACTIVE'),
    archivedAtUtc: p.datetime().nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  indexes: [
    // The item list: a territory's ACTIVE items, newest first (store, type and category filter on it).
    {
      name: 'item_active_territory_idx',
      expression: `create index "item_active_territory_idx" on "item" ("territory_id", "created_at_utc" desc, "id" desc) ${ACTIVE}`,
    },
    // q: partial, case-insensitive match of title or description through trigrams (`ilike '%term%'`).
    {
      name: 'item_active_text_trgm_idx',
      expression: `create index "item_active_text_trgm_idx" on "item" using gin (("title" || ' ' || coalesce("description", '')) gin_trgm_ops) ${ACTIVE}`,
    },
  ],
});
