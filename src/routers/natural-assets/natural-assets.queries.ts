/**
 * SQL of the natural-asset list: a territory's, newest first, on `natural_asset_territory_idx`
 * (territory, created desc, id desc); which statuses a viewer sees is a filter on it.
 */
import { isoColumn, pgArray, type SqlQuery } from '../../db/sql.js';
import type { NaturalAssetStatus, NaturalAssetType } from '../../entities/natural-asset.entity.js';

/** A natural asset under the entity's own property names, so one output mapping serves entities and rows. */
export interface NaturalAssetFacts {
  id: string;
  territoryId: string;
  type: NaturalAssetType;
  name: string;
  description: string | null;
  latitude: number;
  longitude: number;
  status: NaturalAssetStatus;
  createdByUserId: string;
  createdAtUtc: string;
  publishedAtUtc: string | null;
}

const FACTS = `n.id, n.territory_id as "territoryId", n.type, n.name, n.description, n.latitude, n.longitude, n.status,
  n.created_by_user_id as "createdByUserId", ${isoColumn('n.created_at_utc')} as "createdAtUtc",
  ${isoColumn('n.published_at_utc')} as "publishedAtUtc"`;

/** What a viewer sees: these statuses, PENDING ones only their own when `pendingOnlyOf` (a user id) is given. */
export interface NaturalAssetVisibility {
  statuses: NaturalAssetStatus[];
  pendingOnlyOf?: string | undefined;
}

export function territoryNaturalAssetsQuery(territoryId: string, visible: NaturalAssetVisibility, offset: number, limit: number): SqlQuery {
  const own =
    visible.pendingOnlyOf === undefined
      ? { sql: '', params: [] }
      : { sql: ` and (n.status <> 'PENDING' or n.created_by_user_id = ?::uuid)`, params: [visible.pendingOnlyOf] };
  return {
    sql: `select ${FACTS} from natural_asset n where n.territory_id = ?::uuid and n.status = any(?::text[])${own.sql}
           order by n.created_at_utc desc, n.id desc offset ?::int limit ?::int`,
    params: [territoryId, pgArray(visible.statuses), ...own.params, offset, limit],
  };
}
