/**
 * SQL of the cart (its lines with their item and store), and what the checkout needs of it: `lockCart`, `cartLines`,
 * `emptyCart`. Other domains never type SQL against `cart` or `cart_item` themselves.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { managerOf } from '../../db/request-manager.js';
import { execSql, type HotReadSource, runHotRead } from '../../db/sql.js';
import type { ItemStatus, ItemType, PricingType } from '../../entities/item.entity.js';
import type { StoreStatus } from '../../entities/store.entity.js';
import { newId } from '../../platform/ids.js';

export interface CartLineRow {
  id: string;
  cart_id: string;
  item_id: string;
  quantity: number;
  notes: string | null;
  territory_id: string;
  item_title: string;
  item_type: ItemType;
  pricing_type: PricingType;
  price_in_cents: string | null;
  currency: string;
  item_status: ItemStatus;
  store_id: string;
  store_owner_user_id: string;
  store_display_name: string;
  store_status: StoreStatus;
  payments_enabled: boolean;
}

const LINE_COLUMNS = `l.id, l.cart_id, l.item_id, l.quantity, l.notes, c.territory_id, i.title as item_title, i.type as item_type,
  i.pricing_type, i.price_in_cents::text as price_in_cents, i.currency, i.status as item_status, s.id as store_id,
  s.owner_user_id as store_owner_user_id, s.display_name as store_display_name, s.status as store_status, s.payments_enabled`;
const LINE_FROM = `from cart_item l join cart c on c.id = l.cart_id join item i on i.id = l.item_id join store s on s.id = i.store_id`;

/**
 * The caller's cart in a territory, created on first use (one per user and territory, race-safe). Looked up first
 * (a prepared key lookup; on the transaction's connection inside one), so reading an existing cart writes nothing.
 */
export async function ensureCart(source: HotReadSource, userId: string, territoryId: string, now: Date): Promise<string> {
  const cartOf = { sql: 'select id from cart where user_id = ?::uuid and territory_id = ?::uuid', params: [userId, territoryId] };
  const [found] = await runHotRead<{ id: string }>(source, cartOf, { prepared: true });
  if (found) return found.id;
  await execSql(
    managerOf(source),
    `insert into cart (id, created_at_utc, user_id, territory_id, updated_at_utc) values (?, ?, ?, ?, ?) on conflict (user_id, territory_id) do nothing`,
    [newId(), now, userId, territoryId, now],
  );
  const [row] = await runHotRead<{ id: string }>(source, cartOf, { prepared: true });
  return row!.id;
}

/** The lines of a cart, oldest first. */
export function cartLines(source: HotReadSource, cartId: string): Promise<CartLineRow[]> {
  return runHotRead<CartLineRow>(
    source,
    { sql: `select ${LINE_COLUMNS} ${LINE_FROM} where l.cart_id = ?::uuid order by l.created_at_utc, l.id`, params: [cartId] },
    { prepared: true },
  );
}

/** One line of the user's carts by its id, or by the catalogue item it holds; undefined when none. */
export async function cartLineOf(em: EntityManager, userId: string, ref: string): Promise<CartLineRow | undefined> {
  const [row] = await execSql<CartLineRow>(em, `select ${LINE_COLUMNS} ${LINE_FROM} where c.user_id = ? and (l.id = ?::uuid or l.item_id = ?::uuid) limit 1`, [
    userId,
    ref,
    ref,
  ]);
  return row;
}

/**
 * Locks the user's cart of the territory for a checkout (`for update`): concurrent checkouts of one cart run one at a
 * time, and each reads the lines the previous one left. Undefined when the user has no cart there.
 */
export async function lockCart(em: EntityManager, userId: string, territoryId: string): Promise<string | undefined> {
  const [row] = await execSql<{ id: string }>(em, 'select id from cart where user_id = ? and territory_id = ? for update', [userId, territoryId]);
  return row?.id;
}

/** Removes every line of a cart (the checkout's, in its transaction). */
export async function emptyCart(em: EntityManager, cartId: string): Promise<void> {
  await execSql(em, 'delete from cart_item where cart_id = ?', [cartId]);
}

/** The currency of each of a cart's lines other than `exceptItemId`'s (at most CART_LINES_MAX). */
export async function otherLineCurrencies(em: EntityManager, cartId: string, exceptItemId: string): Promise<string[]> {
  const rows = await execSql<{ currency: string }>(
    em,
    'select i.currency from cart_item l join item i on i.id = l.item_id where l.cart_id = ? and l.item_id <> ?',
    [cartId, exceptItemId],
  );
  return rows.map((r) => r.currency);
}
