/**
 * SQL of the inquiry lists: sent by a user (`inquiry_from_user_idx`) and received by a store owner
 * (`inquiry_store_idx` through the owner's stores), newest first, only in territories whose marketplace is enabled.
 */
import { isoColumn, type SqlQuery } from '../../db/sql.js';
import type { InquiryStatus } from '../../entities/inquiry.entity.js';
import type { ContactVisibility } from '../../entities/store.entity.js';

export interface InquiryRow {
  id: string;
  item_id: string;
  store_id: string;
  territory_id: string;
  from_user_id: string;
  message: string;
  status: InquiryStatus;
  created_at_utc: string;
  store_owner_user_id: string;
  contact_visibility: ContactVisibility;
  contact_phone: string | null;
  contact_email: string | null;
}

const COLUMNS = `q.id, q.item_id, q.store_id, q.territory_id, q.from_user_id, q.message, q.status, ${isoColumn('q.created_at_utc')} as created_at_utc,
  s.owner_user_id as store_owner_user_id, s.contact_visibility, s.contact_phone, s.contact_email`;

export type InquiryListKind = 'sent' | 'received';

function where(kind: InquiryListKind, userId: string, territoryId: string | undefined): SqlQuery {
  const parts = [
    kind === 'sent' ? 'q.from_user_id = ?::uuid' : 's.owner_user_id = ?::uuid',
    `'MARKETPLACEENABLED' = any(t.enabled_flags)`,
    `t.status = 'ACTIVE'`,
  ];
  const params: unknown[] = [userId];
  if (territoryId) {
    parts.push('q.territory_id = ?::uuid');
    params.push(territoryId);
  }
  return {
    sql: `from inquiry q join store s on s.id = q.store_id join territory t on t.id = q.territory_id where ${parts.join(' and ')}`,
    params,
  };
}

export function inquiryByIdQuery(id: string): SqlQuery {
  return { sql: `select ${COLUMNS} from inquiry q join store s on s.id = q.store_id where q.id = ?::uuid`, params: [id] };
}

export function inquiriesQuery(kind: InquiryListKind, userId: string, territoryId: string | undefined, offset: number, limit: number): SqlQuery {
  const w = where(kind, userId, territoryId);
  return { sql: `select ${COLUMNS} ${w.sql} order by q.created_at_utc desc, q.id desc offset ?::int limit ?::int`, params: [...w.params, offset, limit] };
}

export function inquiriesCountQuery(kind: InquiryListKind, userId: string, territoryId: string | undefined): SqlQuery {
  const w = where(kind, userId, territoryId);
  return { sql: `select count(*)::int as total ${w.sql}`, params: w.params };
}
