/** SQL of the platform fee reads; `activePlatformFee` is the read the checkout makes. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, isoColumn, type SqlQuery } from '../../db/sql.js';
import type { ItemType } from '../../entities/item.entity.js';
import type { FeeMode } from '../../entities/platform-fee.entity.js';
import type { FeeRule } from './platform-fee.js';

export interface PlatformFeeRow {
  id: string;
  territory_id: string;
  item_type: ItemType;
  fee_mode: FeeMode;
  fee_basis_points: number | null;
  fee_fixed_in_cents: string | null;
  is_active: boolean;
  created_at_utc: string;
  updated_at_utc: string;
}

const COLUMNS = `id, territory_id, item_type, fee_mode, fee_basis_points, fee_fixed_in_cents::text as fee_fixed_in_cents, is_active,
  ${isoColumn('created_at_utc')} as created_at_utc, ${isoColumn('updated_at_utc')} as updated_at_utc`;

export function territoryFeesQuery(territoryId: string): SqlQuery {
  return { sql: `select ${COLUMNS} from platform_fee_config where territory_id = ?::uuid order by item_type`, params: [territoryId] };
}

export function feeQuery(territoryId: string, itemType: ItemType): SqlQuery {
  return { sql: `select ${COLUMNS} from platform_fee_config where territory_id = ?::uuid and item_type = ?`, params: [territoryId, itemType] };
}

/** The active fee rule of a territory for an item type; null when none is configured (no fee). */
export async function activePlatformFee(em: EntityManager, territoryId: string, itemType: ItemType): Promise<FeeRule | null> {
  const q = feeQuery(territoryId, itemType);
  const [row] = await execSql<PlatformFeeRow>(em, q.sql, q.params);
  if (!row || !row.is_active) return null;
  return {
    feeMode: row.fee_mode,
    feeBasisPoints: row.fee_basis_points,
    feeFixedInCents: row.fee_fixed_in_cents === null ? null : Number(row.fee_fixed_in_cents),
  };
}
