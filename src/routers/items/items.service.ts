import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/postgresql';
import { Item } from '../../entities/item.entity.js';
import { execSql, type HotReadSource, runHotRead } from '../../db/sql.js';
import type { AccountEraser } from '../../platform/account-erasure.js';
import { newId } from '../../platform/ids.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { conflict, forbidden, notFound, validationFailed } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory, type TerritoryAccess } from '../../policy/territory-access.js';
import { assertAttachable, attachMedia, mediaUrlsOf } from '../media/media.service.js';
import { storeFacts } from '../stores/stores.queries.js';
import { notStoreKeeper, STORE_KEEPERS } from '../stores/stores.service.js';
import { itemRow, type ItemRow, itemsCountQuery, listItemRows } from './items.queries.js';
import type { CreateItemInput, ItemListFilter, ItemOutput, UpdateItemInput } from './items.schemas.js';
import { enforceMarketplacePolicy } from './marketplace-policy.js';

const MARKETPLACE = 'MARKETPLACEENABLED' as const;

/** An item as the API answers it, from its row and its media URLs. */
export function itemOutputOf(r: ItemRow, urls: string[]): ItemOutput {
  const cents = r.price_in_cents === null ? null : Number(r.price_in_cents);
  return {
    id: r.id,
    territoryId: r.territory_id,
    storeId: r.store_id,
    createdByUserId: r.created_by_user_id,
    type: r.type,
    title: r.title,
    description: r.description,
    category: r.category,
    tags: r.tags,
    pricingType: r.pricing_type,
    priceAmount: cents === null ? null : cents / 100,
    priceInCents: cents,
    currency: r.currency,
    unit: r.unit,
    latitude: r.latitude,
    longitude: r.longitude,
    mediaIds: r.media_ids ?? [],
    primaryImageUrl: urls[0] ?? null,
    imageUrls: urls,
    status: r.status,
    createdAtUtc: r.created_at_utc,
    updatedAtUtc: r.updated_at_utc,
  };
}

async function toOutputs(source: HotReadSource, rows: ItemRow[]): Promise<ItemOutput[]> {
  const urls = await mediaUrlsOf(
    source,
    'ITEM',
    rows.map((r) => r.id),
  );
  return rows.map((r) => itemOutputOf(r, urls.get(r.id) ?? []));
}

async function loadItem(em: EntityManager, itemId: string): Promise<ItemOutput> {
  const row = await itemRow(em, itemId);
  if (!row) throw notFound('Item');
  return (await toOutputs(em, [row]))[0]!;
}

/**
 * The store's owner or a curator of its territory (SYSTEM_ADMIN holds every capability). With `listing`, the caller
 * must also hold what opening a store takes (spec: `POST /api/v1/items` is for verified residents; curators manage
 * others' stores), checked now and not only when the store was opened: an owner who has since lost it (a resident
 * who moved out, an ex-curator visitor) no longer lists or edits items, with the refusal store creation gives. Not
 * for archiving: taking an item down stays open to its owner.
 */
function requireManager(access: TerritoryAccess, storeOwnerUserId: string, what: string, listing: boolean) {
  if (storeOwnerUserId !== access.caller?.id && !access.holds('CURATOR')) {
    throw forbidden(`Only the store's owner or a curator of the territory can ${what}.`, 'NOT_STORE_OWNER');
  }
  if (listing && !access.is(...STORE_KEEPERS)) {
    const refusal = notStoreKeeper(what);
    throw forbidden(refusal.message, refusal.code);
  }
}

/**
 * The store's owner (a verified resident) or a curator lists an ACTIVE item. The territory is the store's (a
 * different `territoryId` is a 400); the territory's MarketplacePolicy rules and the item media rules apply (media
 * must be the caller's); the item and its media attachments are written in one transaction.
 */
export async function createItem(ctx: ServiceContext, input: CreateItemInput): Promise<ItemOutput> {
  const store = await storeFacts(ctx, input.storeId);
  if (!store) throw notFound('Store');
  const access = await requireTerritory(ctx, store.territory_id, { flag: MARKETPLACE, creates: true });
  requireManager(access, store.owner_user_id, 'add items to this store', true);
  if (input.territoryId && input.territoryId.toLowerCase() !== store.territory_id) throw validationFailed('storeId', 'must be a store of the given territory');
  await enforceMarketplacePolicy(ctx.em, store.territory_id, input);
  const { em, user } = ctx;
  const itemId = await em.transactional(async (tx) => {
    const media = await assertAttachable(tx, { userId: user.id, territoryId: store.territory_id, target: 'marketplace', mediaIds: input.mediaIds });
    const now = ctx.clock.now();
    const item = tx.create(Item, {
      id: newId(),
      createdAtUtc: now,
      updatedAtUtc: now,
      territoryId: store.territory_id,
      storeId: store.id,
      createdByUserId: user.id,
      type: input.type,
      title: input.title,
      description: input.description,
      category: input.category,
      tags: input.tags,
      pricingType: input.pricingType,
      // zPriceAmount already turned the decimal into cents; a FREE item costs 0.
      priceInCents: input.pricingType === 'FREE' ? 0 : (input.priceAmount ?? null),
      currency: input.currency,
      unit: input.unit,
      latitude: input.latitude ?? null,
      longitude: input.longitude ?? null,
      mediaIds: media.map((m) => m.id),
      status: 'ACTIVE',
      archivedAtUtc: null,
    });
    if (media.length > 0) attachMedia(tx, { ownerType: 'ITEM', ownerId: item.id, mediaIds: media.map((m) => m.id) });
    await tx.flush();
    return item.id;
  });
  return loadItem(em, itemId);
}

/** Any signed-in user, where the item's territory has the marketplace enabled; archived items keep their status. */
export async function getItem(ctx: ServiceContext, input: { itemId: string }): Promise<ItemOutput> {
  const row = await itemRow(ctx, input.itemId);
  if (!row) throw notFound('Item');
  await requireTerritory(ctx, row.territory_id, { flag: MARKETPLACE });
  return (await toOutputs(ctx, [row]))[0]!;
}

async function listFilter(ctx: ServiceContext, input: ItemListFilter) {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  return { territoryId, storeId: input.storeId, type: input.type, category: input.category || undefined, q: input.q || undefined };
}

/** ACTIVE items of ACTIVE stores of the territory, newest first, filtered by store, type, category and `q`. */
export async function listItems(ctx: ServiceContext, input: ItemListFilter & { skip: number; take: number }): Promise<ItemOutput[]> {
  const filter = await listFilter(ctx, input);
  return toOutputs(ctx, await listItemRows((query, options) => runHotRead<ItemRow>(ctx, query, options), { ...filter, offset: input.skip, limit: input.take }));
}

export async function pageItems(ctx: ServiceContext, input: ItemListFilter & { pageNumber: number; pageSize: number }) {
  const filter = await listFilter(ctx, input);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const [rows, count] = await Promise.all([
    listItemRows((query, options) => runHotRead<ItemRow>(ctx, query, options), { ...filter, offset, limit }),
    runHotRead<{ total: number }>(ctx, itemsCountQuery(filter)),
  ]);
  return toPage(await toOutputs(ctx, rows), count[0]?.total ?? 0, input.pageNumber, input.pageSize);
}

/**
 * The store's owner (a verified resident) or a curator edits an item; an ARCHIVED item is closed (409). Pricing,
 * coordinates and the MarketplacePolicy rules are checked on the merged item; the row is locked for the edit.
 */
export async function updateItem(ctx: ServiceContext, input: UpdateItemInput): Promise<ItemOutput> {
  const { em } = ctx;
  await em.transactional(async (tx) => {
    const item = await tx.findOne(Item, { id: input.itemId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!item) throw notFound('Item');
    const access = await requireTerritory({ ...ctx, em: tx }, item.territoryId, { flag: MARKETPLACE });
    const store = await storeFacts(tx, item.storeId);
    requireManager(access, store!.owner_user_id, 'edit this item', true);
    if (item.status === 'ARCHIVED') throw conflict('An archived item cannot be edited.', 'ITEM_ARCHIVED');

    const merged = {
      type: input.type ?? item.type,
      title: input.title ?? item.title,
      description: input.description === undefined ? (item.description ?? null) : input.description || null,
      category: input.category === undefined ? (item.category ?? null) : input.category || null,
      tags: input.tags === undefined ? (item.tags ?? null) : input.tags,
      pricingType: input.pricingType ?? item.pricingType,
      priceInCents: input.priceAmount === undefined ? (item.priceInCents ?? null) : input.priceAmount,
      currency: input.currency ?? item.currency,
      unit: input.unit === undefined ? (item.unit ?? null) : input.unit || null,
      latitude: input.latitude === undefined ? (item.latitude ?? null) : input.latitude,
      longitude: input.longitude === undefined ? (item.longitude ?? null) : input.longitude,
    };
    if (merged.pricingType === 'FREE') merged.priceInCents = merged.priceInCents ?? 0;
    if (merged.pricingType === 'FIXED' && !(merged.priceInCents !== null && merged.priceInCents > 0))
      throw validationFailed('priceAmount', 'a FIXED price needs priceAmount greater than 0');
    if (merged.pricingType === 'FREE' && merged.priceInCents !== 0) throw validationFailed('priceAmount', 'a FREE item has priceAmount 0 or none');
    if ((merged.latitude === null) !== (merged.longitude === null)) throw validationFailed('longitude', 'latitude and longitude go together');
    await enforceMarketplacePolicy(tx, item.territoryId, merged);
    tx.assign(item, { ...merged, updatedAtUtc: ctx.clock.now() });
  });
  return loadItem(em, input.itemId);
}

/** The store's owner or a curator archives an item: it leaves the lists. Archiving an archived item is a no-op. */
export async function archiveItem(ctx: ServiceContext, input: { itemId: string }): Promise<ItemOutput> {
  const { em } = ctx;
  await em.transactional(async (tx) => {
    const item = await tx.findOne(Item, { id: input.itemId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!item) throw notFound('Item');
    const access = await requireTerritory({ ...ctx, em: tx }, item.territoryId, { flag: MARKETPLACE });
    const store = await storeFacts(tx, item.storeId);
    requireManager(access, store!.owner_user_id, 'archive this item', false);
    if (item.status === 'ARCHIVED') return;
    const now = ctx.clock.now();
    item.status = 'ARCHIVED';
    item.archivedAtUtc = now;
    item.updatedAtUtc = now;
  });
  return loadItem(em, input.itemId);
}

/** Account deletion: the items of the person's stores are archived (no longer listed or bought), as archiving does. */
export const eraseItems: AccountEraser = async ({ em, userId, at }) => {
  await execSql(
    em,
    `update item set status = 'ARCHIVED', archived_at_utc = ?, updated_at_utc = ?
      where status <> 'ARCHIVED' and store_id in (select id from store where owner_user_id = ?)`,
    [at, at, userId],
  );
};
