/**
 * SQL of the store reads (by id, a territory's list), and the reads other marketplace domains make of stores
 * (`storeFacts`): they never type SQL against the `store` table themselves.
 */
import { type HotReadSource, isoColumn, runHotRead, type SqlQuery } from '../../db/sql.js';
import type { ContactVisibility, StoreStatus } from '../../entities/store.entity.js';

export interface StoreRow {
  id: string;
  territory_id: string;
  owner_user_id: string;
  display_name: string;
  description: string | null;
  contact_visibility: ContactVisibility;
  contact_phone: string | null;
  contact_email: string | null;
  status: StoreStatus;
  payments_enabled: boolean;
  created_at_utc: string;
  updated_at_utc: string;
}

const COLUMNS = `s.id, s.territory_id, s.owner_user_id, s.display_name, s.description, s.contact_visibility, s.contact_phone,
  s.contact_email, s.status, s.payments_enabled, ${isoColumn('s.created_at_utc')} as created_at_utc, ${isoColumn('s.updated_at_utc')} as updated_at_utc`;

export function storeByIdQuery(id: string): SqlQuery {
  return { sql: `select ${COLUMNS} from store s where s.id = ?::uuid`, params: [id] };
}

/** A territory's ACTIVE stores by name (the partial `store_active_territory_idx`). */
export function territoryStoresQuery(territoryId: string, offset: number, limit: number): SqlQuery {
  return {
    sql: `select ${COLUMNS} from store s where s.territory_id = ?::uuid and s.status = 'ACTIVE'
          order by s.display_name, s.id offset ?::int limit ?::int`,
    params: [territoryId, offset, limit],
  };
}

/** A store as the other marketplace domains need it (items, inquiries, the cart); undefined when unknown. */
export async function storeFacts(source: HotReadSource, storeId: string): Promise<StoreRow | undefined> {
  const [row] = await runHotRead<StoreRow>(source, storeByIdQuery(storeId), { prepared: true });
  return row;
}

/** The store contact a viewer may see: always the owner's and curators', others' only when Public. */
export function visibleContact(row: StoreRow, maySeePrivate: boolean): { phone: string | null; email: string | null } | null {
  if (row.contact_visibility === 'Private' && !maySeePrivate) return null;
  return { phone: row.contact_phone, email: row.contact_email };
}
