/**
 * SQL of the territory hot read paths (by id, nearby, search/list), with explicit columns and `?` placeholders, run
 * with src/db/sql.ts `runSql`. The service runs these; the benchmark's bare baseline runs
 * the very same text (through `toNumberedParams` for `pg`). Every filter here matches an index declared on the
 * Territory entity: keep the two in step (status literal 'ACTIVE' included, so the partial indexes apply).
 */
import { isoColumn, type SqlQuery } from '../../db/sql.js';
import { haversineSql } from '../../platform/geo.js';

/** A row of the queries below; `created_at_utc` is already an ISO 8601 UTC string. */
export interface TerritoryRow {
  id: string;
  name: string;
  description: string | null;
  city: string;
  state: string;
  latitude: number;
  longitude: number;
  radius_km: number;
  parent_territory_id: string | null;
  status: string;
  tags: string[];
  created_at_utc: string;
}

const COLUMNS = `t.id, t.name, t.description, t.city, t.state, t.latitude, t.longitude, t.radius_km, t.parent_territory_id,
  t.status, t.tags, ${isoColumn('t.created_at_utc')} as created_at_utc`;

/** One territory, any status, with what by-id callers also need: its suggester (visibility) and its flags. */
export function territoryByIdQuery(id: string): SqlQuery {
  return { sql: `select ${COLUMNS}, t.suggested_by_user_id, t.enabled_flags from territory t where t.id = ?::uuid`, params: [id] };
}

// Mean radius of geo.ts's haversine: one degree of latitude (or of longitude at the equator) in km.
const EARTH_RADIUS_KM = 6371.0088;
const KM_PER_DEGREE = (2 * Math.PI * EARTH_RADIUS_KM) / 360;
// Widens boxes a hair so floating-point rounding never drops a point at exactly radiusKm; the exact filter follows.
const MARGIN = 1 + 1e-6;

export interface LngLatBox {
  minLng: number;
  minLat: number;
  maxLng: number;
  maxLat: number;
}

/**
 * Boxes that together contain every point within `radiusKm` of the centre. A circle that reaches a pole covers
 * every longitude; one that crosses the antimeridian is split in two boxes, one each side of it.
 */
export function nearbyBoxes(lat: number, lng: number, radiusKm: number): LngLatBox[] {
  const dLat = (radiusKm / KM_PER_DEGREE) * MARGIN;
  const minLat = Math.max(-90, lat - dLat);
  const maxLat = Math.min(90, lat + dLat);
  const angular = radiusKm / EARTH_RADIUS_KM;
  const cosLat = Math.cos((lat * Math.PI) / 180);
  // Widest longitude reach of a spherical cap: asin(sin(r) / cos(lat)), defined while the cap misses the poles.
  const reachesPole = lat + dLat >= 90 || lat - dLat <= -90 || Math.sin(angular) >= cosLat;
  const dLng = reachesPole ? 180 : ((Math.asin(Math.sin(angular) / cosLat) * 180) / Math.PI) * MARGIN;
  if (dLng >= 180) return [{ minLng: -180, minLat, maxLng: 180, maxLat }];
  const west = lng - dLng;
  const east = lng + dLng;
  if (west < -180)
    return [
      { minLng: west + 360, minLat, maxLng: 180, maxLat },
      { minLng: -180, minLat, maxLng: east, maxLat },
    ];
  if (east > 180)
    return [
      { minLng: west, minLat, maxLng: 180, maxLat },
      { minLng: -180, minLat, maxLng: east - 360, maxLat },
    ];
  return [{ minLng: west, minLat, maxLng: east, maxLat }];
}

export interface NearbyParams {
  lat: number;
  lng: number;
  radiusKm: number;
  limit: number;
}

/** ACTIVE territories within `radiusKm`, nearest first: GiST box prefilter, then exact haversine filter and order. */
export function nearbyQuery({ lat, lng, radiusKm, limit }: NearbyParams): SqlQuery {
  const boxes = nearbyBoxes(lat, lng, radiusKm);
  const inBox = boxes.map(() => `point(t.longitude, t.latitude) <@ box(point(?::float8, ?::float8), point(?::float8, ?::float8))`).join(' or ');
  const sql = `select n.* from (
    select ${COLUMNS}, ${haversineSql('c.lat', 'c.lng', 't.latitude', 't.longitude')} as distance_km
      from territory t, (select ?::float8 as lat, ?::float8 as lng) c
     where t.status = 'ACTIVE' and (${inBox})
  ) n
  where n.distance_km <= ?::float8
  order by n.distance_km, n.id
  limit ?::int`;
  return { sql, params: [lat, lng, ...boxes.flatMap((b) => [b.minLng, b.minLat, b.maxLng, b.maxLat]), radiusKm, limit] };
}

export interface SearchFilter {
  q?: string | null | undefined;
  city?: string | null | undefined;
  state?: string | null | undefined;
}

/** `%` and `_` (and the escape character itself) match literally; backslash is LIKE's default escape. */
export const escapeLike = (term: string) => term.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Case-insensitive partial match of one column. Terms of 3+ characters match anywhere (`ilike '%term%'`, trigram
 * index); shorter ones have no trigram to look up, so they match as a prefix of the lower-cased value (btree
 * `text_pattern_ops` index): `state=SP` finds "SP", `state=pa` finds "Paraná".
 */
function columnMatch(column: 'name' | 'city' | 'state', term: string): SqlQuery {
  if ([...term].length >= 3) return { sql: `t.${column} ilike ?`, params: [`%${escapeLike(term)}%`] };
  return { sql: `lower(t.${column}) like ?`, params: [`${escapeLike(term.toLowerCase())}%`] };
}

function searchWhere(filter: SearchFilter): SqlQuery {
  const parts = [`t.status = 'ACTIVE'`];
  const params: unknown[] = [];
  const q = filter.q?.trim();
  if (q) {
    // q is the free-text term: it matches the name, the city or the state.
    const any = (['name', 'city', 'state'] as const).map((column) => columnMatch(column, q));
    parts.push(`(${any.map((m) => m.sql).join(' or ')})`);
    params.push(...any.flatMap((m) => m.params));
  }
  for (const column of ['city', 'state'] as const) {
    const term = filter[column]?.trim();
    if (!term) continue;
    const m = columnMatch(column, term);
    parts.push(m.sql);
    params.push(...m.params);
  }
  return { sql: parts.join(' and '), params };
}

/** ACTIVE territories matching every given filter, by name; no filter at all is the plain list. */
export function searchQuery(filter: SearchFilter & { offset: number; limit: number }): SqlQuery {
  const where = searchWhere(filter);
  const filtered = Boolean(filter.q?.trim() || filter.city?.trim() || filter.state?.trim());
  if (!filtered) {
    return {
      sql: `select ${COLUMNS} from territory t where ${where.sql} order by t.name, t.id offset ?::int limit ?::int`,
      params: [...where.params, filter.offset, filter.limit],
    };
  }
  // Matches first (trigram/prefix indexes), then sort: left to itself the planner walks the name index and discards
  // most of the table when the matches sort late (measured: ~0.5-1 s for "Vila" on 100k rows). Only (id, name) of
  // the matches are sorted; the page's 20 rows are read in full afterwards (half the time of sorting full rows).
  return {
    sql: `with matches as materialized (select t.id, t.name from territory t where ${where.sql}),
          page as (select id from matches order by name, id offset ?::int limit ?::int)
          select ${COLUMNS} from page join territory t on t.id = page.id order by t.name, t.id`,
    params: [...where.params, filter.offset, filter.limit],
  };
}

/** How many rows `searchQuery` would page through (the `/paged` envelope's totalCount). */
export function searchCountQuery(filter: SearchFilter): SqlQuery {
  const where = searchWhere(filter);
  return { sql: `select count(*)::int as total from territory t where ${where.sql}`, params: where.params };
}
