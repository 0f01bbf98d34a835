/**
 * SQL of the asset reads: one by id, a territory's list (newest first, on `territory_asset_territory_idx`:
 * territory, created desc, id desc; status, id and type filter it) and its count, and how many of an asset's
 * validations come from residents (the residents themselves are counted by memberships.queries.ts).
 */
import { isoColumn, pgArray, type SqlQuery } from '../../db/sql.js';
import type { AssetStatus, GeoAnchor } from '../../entities/asset.entity.js';

/** An asset under the entity's own property names, so one output mapping serves entities and rows; ISO timestamps. */
export interface AssetFacts {
  id: string;
  territoryId: string;
  type: string;
  subtype: string | null;
  name: string;
  description: string | null;
  geoAnchors: GeoAnchor[];
  status: AssetStatus;
  createdByUserId: string;
  validationCount: number;
  createdAtUtc: string;
  updatedAtUtc: string;
}

const FACTS = `a.id, a.territory_id as "territoryId", a.type, a.subtype, a.name, a.description, a.geo_anchors as "geoAnchors", a.status,
  a.created_by_user_id as "createdByUserId", a.validation_count as "validationCount", ${isoColumn('a.created_at_utc')} as "createdAtUtc",
  ${isoColumn('a.updated_at_utc')} as "updatedAtUtc"`;

export function assetByIdQuery(id: string): SqlQuery {
  return { sql: `select ${FACTS} from territory_asset a where a.id = ?::uuid`, params: [id] };
}

/** The assets a list shows: a territory's, of these statuses; of one id and of these types when given. */
export interface AssetListWhere {
  territoryId: string;
  statuses: AssetStatus[];
  assetId?: string | undefined;
  types?: string[] | undefined;
}

function listed(where: AssetListWhere): SqlQuery {
  let sql = 'from territory_asset a where a.territory_id = ?::uuid and a.status = any(?::text[])';
  const params: unknown[] = [where.territoryId, pgArray(where.statuses)];
  if (where.assetId) {
    sql += ' and a.id = ?::uuid';
    params.push(where.assetId);
  }
  if (where.types?.length) {
    sql += ' and a.type = any(?::text[])';
    params.push(pgArray(where.types));
  }
  return { sql, params };
}

export function assetListQuery(where: AssetListWhere, offset: number, limit: number): SqlQuery {
  const from = listed(where);
  return {
    sql: `select ${FACTS} ${from.sql} order by a.created_at_utc desc, a.id desc offset ?::int limit ?::int`,
    params: [...from.params, offset, limit],
  };
}

/** How many assets `assetListQuery` pages through (the `/paged` envelope's totalCount). */
export function assetCountQuery(where: AssetListWhere): SqlQuery {
  const from = listed(where);
  return { sql: `select count(*)::int as total ${from.sql}`, params: from.params };
}

/** Per asset (`asset_id`), how many of its validations (`n`) come from current residents of its territory. */
export function residentValidationsQuery(assetIds: string[]): SqlQuery {
  return {
    sql: `select v.asset_id, count(*)::int as n
            from asset_validation v
            join territory_asset a on a.id = v.asset_id
            join territory_membership m on m.territory_id = a.territory_id and m.user_id = v.user_id and m.role = 'RESIDENT'
           where v.asset_id = any(?::uuid[])
           group by v.asset_id`,
    params: [pgArray(assetIds)],
  };
}
