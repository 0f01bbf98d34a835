/**
 * SQL of the item reads (by id, the filtered list and its count), and the reads other domains make of items
 * (`itemFacts`, `canSeeItem`). Lists read ACTIVE items of ACTIVE stores through the partial indexes of the Item
 * entity: `item_active_territory_idx`, and for `q` the trigram index on title and description.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, type HotReadSource, isoColumn, pageSlice, runHotRead, type SqlQuery } from '../../db/sql.js';
import { DEFAULT_PAGE_SIZE } from '../../platform/pagination.js';
import type { ItemStatus, ItemType, PricingType } from '../../entities/item.entity.js';
import type { AuthUser } from '../../platform/service-context.js';
import { blockedUserIdsOf } from '../blocks/blocks.queries.js';
import { escapeLike } from '../territories/territories.queries.js';

export interface ItemRow {
  id: string;
  territory_id: string;
  store_id: string;
  created_by_user_id: string;
  type: ItemType;
  title: string;
  description: string | null;
  category: string | null;
  tags: string | null;
  pricing_type: PricingType;
  price_in_cents: string | null;
  currency: string;
  unit: string | null;
  latitude: number | null;
  longitude: number | null;
  media_ids: string[];
  status: ItemStatus;
  created_at_utc: string;
  updated_at_utc: string;
}

const COLUMNS = `i.id, i.territory_id, i.store_id, i.created_by_user_id, i.type, i.title, i.description, i.category, i.tags,
  i.pricing_type, i.price_in_cents::text as price_in_cents, i.currency, i.unit, i.latitude, i.longitude, i.media_ids, i.status,
  ${isoColumn('i.created_at_utc')} as created_at_utc, ${isoColumn('i.updated_at_utc')} as updated_at_utc`;

export function itemByIdQuery(id: string): SqlQuery {
  return { sql: `select ${COLUMNS} from item i where i.id = ?::uuid`, params: [id] };
}

export interface ItemListFilter {
  territoryId: string;
  storeId?: string | undefined;
  type?: ItemType | undefined;
  category?: string | undefined;
  q?: string | undefined;
}

/**
 * The store's status and the list's filters (`i` the item, `s` its store). `q` is a case-insensitive substring of the
 * stored lower-cased text: as `like` for the trigram index (which only a `like` can use), or as `strpos` for a read
 * that does not use that index (the search window): the same match without the pattern (no escaping), and one
 * PostgreSQL estimates the same way whatever the term, so a named statement keeps its generic plan. A `like` pattern
 * is estimated against the column's statistics on every plan, and its estimate depends on the term.
 */
function filterConditions(filter: ItemListFilter, match: 'like' | 'strpos'): SqlQuery {
  const parts = [`s.status = 'ACTIVE'`];
  const params: unknown[] = [];
  if (filter.storeId) {
    parts.push('i.store_id = ?::uuid');
    params.push(filter.storeId);
  }
  if (filter.type) {
    parts.push('i.type = ?');
    params.push(filter.type);
  }
  if (filter.category) {
    parts.push('lower(i.category) = lower(?)');
    params.push(filter.category);
  }
  if (filter.q) {
    // Case-insensitive as `ilike` is (it lower-cases both sides), on the stored lower-cased text that
    // `item_active_text_trgm_idx` indexes: the candidates' text is not lower-cased again per row.
    if (match === 'like') {
      parts.push(`i.search_text like lower(?)`);
      params.push(`%${escapeLike(filter.q)}%`);
    } else {
      parts.push(`strpos(i.search_text, lower(?::text)) > 0`);
      params.push(filter.q);
    }
  }
  return { sql: parts.join(' and '), params };
}

/** The conditions of a list read from the item table: the territory's ACTIVE items, then `filterConditions`. */
function listConditions(filter: ItemListFilter): SqlQuery {
  const rest = filterConditions(filter, 'like');
  return { sql: `i.territory_id = ?::uuid and i.status = 'ACTIVE' and ${rest.sql}`, params: [filter.territoryId, ...rest.params] };
}

function listWhere(filter: ItemListFilter): SqlQuery {
  const conditions = listConditions(filter);
  return { sql: `from item i join store s on s.id = i.store_id where ${conditions.sql}`, params: conditions.params };
}

const NEWEST_FIRST = 'order by i.created_at_utc desc, i.id desc';

/** Newest first (ties by id). */
export function itemsQuery(filter: ItemListFilter & { offset: number; limit: number }): SqlQuery {
  const where = listWhere(filter);
  return {
    sql: `select ${COLUMNS} ${where.sql} ${NEWEST_FIRST} offset ?::int limit ?::int`,
    params: [...where.params, filter.offset, filter.limit],
  };
}

/** How many of the territory's newest active items a search looks through before it uses the trigram index. */
export const SEARCH_RECENT_WINDOW = 1000;

/**
 * `itemsQuery` over the territory's `window` newest active items only, read in item_active_territory_idx order
 * and stopping at the page's last match. When it fills the page, that page is the one `itemsQuery` answers: every
 * item outside the window is older than every item in it, so the first `offset + limit` matches all lie inside.
 * Run named (`listItemRows`), planned once per connection: PostgreSQL keeps a named statement's generic plan only
 * when it costs no more than the custom ones, so nothing in the text may make their estimates differ. The window's
 * size and the first page's limit are written in; `q` is matched with `strpos`; the territory is an InitPlan value
 * (`(select ?)`), estimated at one n_distinct-th of the rows in custom and generic plans alike (given as the value,
 * a large territory's custom plans cost less than the generic one and were kept: 24 of 24 in the test).
 * `item.territory_id`'s statistics make that estimate large (Migration20261127100000), so the plan reads the
 * territory's index in order whatever the average territory holds (test/marketplace/search-generic-plans.test.ts).
 */
export function recentItemsQuery(filter: ItemListFilter & { offset: number; limit: number }, window: number): SqlQuery {
  // The window's rows are the territory's ACTIVE items already.
  const conditions = filterConditions(filter, 'strpos');
  const slice = pageSlice(filter, DEFAULT_PAGE_SIZE);
  return {
    sql: `select ${COLUMNS}
      from (select * from item i where i.territory_id = (select ?::uuid) and i.status = 'ACTIVE' ${NEWEST_FIRST} limit ${Math.trunc(window)}) i
      join store s on s.id = i.store_id
     where ${conditions.sql} ${NEWEST_FIRST} ${slice.sql}`,
    params: [filter.territoryId, ...conditions.params, ...slice.params],
  };
}

/**
 * A page of the list. With `q`, the planner picks between reading newest first and filtering (fast when the term is
 * common: it stops after the page) and the trigram index (fast when it is rare: few matches to sort), and a term of
 * five letters or more looks rare to it even when thousands of items match ("bread": the index path fetched and
 * sorted every match, 10-30 ms). So a search first reads the newest `SEARCH_RECENT_WINDOW` items (bounded by
 * design); only a page it cannot fill, i.e. a term rare among recent items or a deep page, runs the plain query,
 * unnamed: its best plan depends on the term. `run` executes a statement (`prepared`: as a named statement).
 */
export async function listItemRows(
  run: (query: SqlQuery, options: { prepared: boolean }) => Promise<ItemRow[]>,
  filter: ItemListFilter & { offset: number; limit: number },
  window = SEARCH_RECENT_WINDOW,
): Promise<ItemRow[]> {
  if (filter.q) {
    const recent = await run(recentItemsQuery(filter, window), { prepared: true });
    if (recent.length === filter.limit) return recent;
  }
  return run(itemsQuery(filter), { prepared: false });
}

/**
 * How many items the list pages through (the `/paged` envelope's totalCount). Without `q` it sums the stored
 * counters (StoreItemCounter) of the territory's ACTIVE stores, narrowed by store, type and category: exact, and
 * bounded by the territory's stores instead of its items (14 ms for 45k items counted, measured). With `q` it counts
 * the matching rows through the trigram index.
 */
export function itemsCountQuery(filter: ItemListFilter): SqlQuery {
  if (filter.q) {
    const where = listWhere(filter);
    return { sql: `select count(*)::int as total ${where.sql}`, params: where.params };
  }
  // An item's territory is its store's (createItem), so the store's territory stands for the items'.
  const parts = [`s.territory_id = ?::uuid`, `s.status = 'ACTIVE'`];
  const params: unknown[] = [filter.territoryId];
  if (filter.storeId) {
    parts.push('s.id = ?::uuid');
    params.push(filter.storeId);
  }
  if (filter.type) {
    parts.push('c.type = ?');
    params.push(filter.type);
  }
  if (filter.category) {
    parts.push('c.category_key = lower(?)');
    params.push(filter.category);
  }
  return {
    sql: `select coalesce(sum(c.active_count), 0)::int as total from store s join store_item_counter c on c.store_id = s.id where ${parts.join(' and ')}`,
    params,
  };
}

/** An item by its key (prepared; inside a transaction, on its connection). */
export async function itemRow(source: HotReadSource, itemId: string): Promise<ItemRow | undefined> {
  const [row] = await runHotRead<ItemRow>(source, itemByIdQuery(itemId), { prepared: true });
  return row;
}

/** An item as inquiries and the cart need it, with its store's owner and status; undefined when unknown. */
export async function itemFacts(
  em: EntityManager,
  itemId: string,
): Promise<{ id: string; territoryId: string; storeId: string; title: string; status: ItemStatus; storeOwnerUserId: string } | undefined> {
  const [row] = await execSql<{ id: string; territory_id: string; store_id: string; title: string; status: ItemStatus; owner_user_id: string }>(
    em,
    'select i.id, i.territory_id, i.store_id, i.title, i.status, s.owner_user_id from item i join store s on s.id = i.store_id where i.id = ?::uuid',
    [itemId],
  );
  return row && { id: row.id, territoryId: row.territory_id, storeId: row.store_id, title: row.title, status: row.status, storeOwnerUserId: row.owner_user_id };
}

/**
 * Media of items: visible to every signed-in user while the item's territory has the marketplace enabled, except
 * to viewers who blocked its creator (as events).
 */
export async function canSeeItem(em: EntityManager, viewer: AuthUser, itemId: string): Promise<boolean> {
  const [item] = await execSql<{ created_by_user_id: string }>(
    em,
    `select i.created_by_user_id from item i join territory t on t.id = i.territory_id
      where i.id = ? and t.status = 'ACTIVE' and 'MARKETPLACEENABLED' = any(t.enabled_flags)`,
    [itemId],
  );
  return item !== undefined && !(await blockedUserIdsOf(em, viewer.id)).includes(item.created_by_user_id);
}

/**
 * Media attached to a store's items in `[fromUtc, toUtc)` (the merchant's `media` meter), archived items included:
 * the upload was consumed. Deleted media do not count.
 */
export async function storeItemMediaCount(em: EntityManager, storeId: string, fromUtc: Date, toUtc: Date): Promise<number> {
  const [row] = await execSql<{ n: number }>(
    em,
    `select count(*)::int as n from item i
       join media_attachment a on a.owner_type = 'ITEM' and a.owner_id = i.id
       join media_asset m on m.id = a.media_asset_id and m.deleted_at_utc is null
      where i.store_id = ?::uuid and a.created_at_utc >= ? and a.created_at_utc < ?`,
    [storeId, fromUtc, toUtc],
  );
  return row?.n ?? 0;
}
