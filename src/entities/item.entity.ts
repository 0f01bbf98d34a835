import { defineEntity, type Opt, p } from '@mikro-orm/postgresql';
import { baseProperties, statementCounterTriggers, textArray, refuseDeletedAccountTrigger } from './base.entity.js';
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
    mediaIds: textArray().$type<string[]>().default([]),
    status: p.string().length(20).$type<ItemStatus>().default('ACTIVE'),
    /**
     * What `q` matches (items.queries.ts): title and description, lower-cased, stored by the database (generated),
     * collation "C". A search compares it with the lower-cased term by `like`, which is what `ilike` does, minus
     * lower-casing every candidate's text again: 1,000 rows' match 2.1 -> 0.6 ms (bench/PROFILE.md, seventh pass).
     * Never written by the ORM, never read by entity loads (lazy).
     */
    searchText: p.text().generated(`(lower(title || ' ' || coalesce(description, ''))) stored`).collation('C').lazy().$type<Opt<string>>(),
    archivedAtUtc: p.datetime().nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  indexes: [
    // The item list: a territory's ACTIVE items, newest first (store, type and category filter on it). Its
    // `territory_id` statistics say territories are large (Migration20261127100000): generic plans read it in order.
    {
      name: 'item_active_territory_idx',
      expression: `create index "item_active_territory_idx" on "item" ("territory_id", "created_at_utc" desc, "id" desc) ${ACTIVE}`,
    },
    // q: partial, case-insensitive match of title or description through trigrams of the stored search text
    // (`like '%term%'`). Without GIN's pending list (`fastupdate`): new items go straight into the index, so searches
    // never scan a pending list that grows between vacuums (3000 new items doubled a search's mean time:
    // test/marketplace/indexes.test.ts).
    {
      name: 'item_active_text_trgm_idx',
      expression: `create index "item_active_text_trgm_idx" on "item" using gin ("search_text" gin_trgm_ops) with (fastupdate = off) ${ACTIVE}`,
    },
  ],
  // Keep StoreItemCounter in step with every statement writing items, whoever writes them (function in its migration).
  triggers: [...statementCounterTriggers('item', 'item_store_counter', 'items'), refuseDeletedAccountTrigger('item', 'created_by_user_id')],
});

/**
 * How many ACTIVE items a store has, per type and category (`categoryKey`: the category lowercased, '' for none, as
 * the list's case-insensitive category filter compares it): `/items/paged`'s totalCount without counting a
 * territory's items on every page (DESIGN "Performance": exact and cheap). A territory's count sums the counters of
 * its ACTIVE stores, so pausing a store needs no write here. Written only by the `item_store_counter` trigger, in
 * the transaction of the item's own write, so it is exact at every commit.
 */
export const StoreItemCounter = defineEntity({
  name: 'StoreItemCounter',
  tableName: 'store_item_counter',
  properties: {
    storeId: () => p.manyToOne(Store).mapToPk().fieldName('store_id').deleteRule('cascade').primary(),
    type: p.string().length(20).$type<ItemType>().primary(),
    categoryKey: p.text().primary(),
    activeCount: p.integer().default(0),
  },
});
