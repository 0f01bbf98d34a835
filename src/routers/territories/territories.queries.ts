/**
 * SQL of the territory hot read paths (by id, nearby, search/list), with explicit columns and `?` placeholders, run
 * with src/db/sql.ts `runSql`. The service runs these; the benchmark's bare baseline runs
 * the very same text (through `toNumberedParams` for `pg`). Every filter here matches an index declared on the
 * Territory entity: keep the two in step (status literal 'ACTIVE' included, so the partial indexes apply).
 */
import { isoColumn, pageSlice, type SqlQuery } from '../../db/sql.js';
import { haversineSql } from '../../platform/geo.js';
import { DEFAULT_PAGE_SIZE } from '../../platform/pagination.js';

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

/**
 * ACTIVE territories within `radiusKm`, nearest first (haversine, then id), at most `limit`: the rows the exact
 * haversine filter keeps among those the GiST box prefilter finds.
 *
 * In a dense area the radius box holds hundreds of territories (a city at 100k), and each would be a heap fetch and a
 * haversine. So, when the prefilter is one plain box (not split at the antimeridian, not opened up at a pole), the
 * statement first bounds the answer: the `limit` territories of the box nearest to the centre in the index's own
 * planar order (a KNN scan that stops after `limit` entries, index-only: the index includes the coordinates), whose
 * largest haversine distance `bound` is at least the `limit`-th smallest distance of the box. The answer's rows are
 * then all within `bound`, so the main scan reads only the box of radius `bound` (a few dozen rows) besides the
 * radius box, and filters on `bound` (itself at most `radiusKm`). Fewer than `limit` in the box: `bound` is
 * `radiusKm`. Same rows and order as without the bound, ties at `bound` included (`<=`); the distance is the same
 * expression in both scans. Split or polar boxes (rare) keep the plain prefilter.
 */
export function nearbyQuery({ lat, lng, radiusKm, limit }: NearbyParams): SqlQuery {
  const boxes = nearbyBoxes(lat, lng, radiusKm);
  const inBox = boxes.map(() => `point(t.longitude, t.latitude) <@ box(point(?::float8, ?::float8), point(?::float8, ?::float8))`).join(' or ');
  const boxParams = boxes.flatMap((b) => [b.minLng, b.minLat, b.maxLng, b.maxLat]);
  const centre = `(select ?::float8 as lat, ?::float8 as lng) c`;
  const distance = haversineSql('c.lat', 'c.lng', 't.latitude', 't.longitude');
  const plain = boxes.length === 1 && boxes[0]!.maxLng - boxes[0]!.minLng < 360;
  if (!plain) {
    const sql = `select n.* from (
      select ${COLUMNS}, ${distance} as distance_km from territory t, ${centre}
       where t.status = 'ACTIVE' and (${inBox})
    ) n
    where n.distance_km <= ?::float8
    order by n.distance_km, n.id
    limit ?::int`;
    return { sql, params: [lat, lng, ...boxParams, radiusKm, limit] };
  }
  // The box of radius `bound`, as nearbyBoxes draws it (one plain box: a cap within the radius's misses the poles and
  // the antimeridian), plus 1e-6 degrees so that the cut of tiny degree values inside the distance can never leave a row
  // within `bound` outside it.
  const dLat = `(k.bound / ${KM_PER_DEGREE} * ${MARGIN} + 1e-6)`;
  const dLng = `(degrees(asin(sin(k.bound / ${EARTH_RADIUS_KM}) / ?::float8)) * ${MARGIN} + 1e-6)`;
  const cosLat = Math.cos((lat * Math.PI) / 180);
  const sql = `with k as materialized (
    select case when count(*) = ?::int then least(max(d.distance_km), ?::float8) else ?::float8 end as bound
      from (select ${distance} as distance_km from territory t, ${centre}
             where t.status = 'ACTIVE' and ${inBox}
             order by point(t.longitude, t.latitude) <-> point(?::float8, ?::float8)
             limit ?::int) d
  )
  select n.* from (
    select ${COLUMNS}, ${distance} as distance_km from territory t, ${centre}
     where t.status = 'ACTIVE' and ${inBox}
       and point(t.longitude, t.latitude) <@ (select box(point(?::float8 - ${dLng}, ?::float8 - ${dLat}), point(?::float8 + ${dLng}, ?::float8 + ${dLat})) from k)
  ) n
  where n.distance_km <= (select bound from k)
  order by n.distance_km, n.id
  limit ?::int`;
  return {
    sql,
    params: [limit, radiusKm, radiusKm, lat, lng, ...boxParams, lng, lat, limit, lat, lng, ...boxParams, lng, cosLat, lat, lng, cosLat, lat, limit],
  };
}

export interface SearchFilter {
  q?: string | null | undefined;
  city?: string | null | undefined;
  state?: string | null | undefined;
}

/** `%` and `_` (and the escape character itself) match literally; backslash is LIKE's default escape. */
export const escapeLike = (term: string) => term.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * A search answers at most this many matches, the most relevant first (bounded by design). The `/paged` envelope's
 * totalCount counts exactly these, so it stays truthful (pages end where the items end); and neither a broad term
 * (tens of thousands of matches on 100k territories) nor a deep page reads more than this many index entries.
 */
export const SEARCH_MATCH_LIMIT = 1000;

type SearchColumn = 'name' | 'city' | 'state';

/**
 * A column's search key, stored on the row (generated columns `name_key`, `city_key`, `state_key` of the Territory
 * entity): lower-cased and unaccented by the immutable `public.f_unaccent`, collation "C" (compared byte-wise, so a
 * prefix is an index range). The search indexes are on these columns, and a row a trigram lookup returns is
 * rechecked against them: no f_unaccent call per row.
 */
const key = (column: SearchColumn) => `t.${column}_key`;

/**
 * The term normalised the same way, in SQL so that it is the very same function; the statement is planned with its
 * parameter values, so the planner folds it to a constant (index ranges, selectivity). LIKE patterns escape their
 * wildcards after unaccent, which maps e.g. a full-width `％` to `%`: `%` and `_` in a term match literally.
 */
const TERM = `(lower(public.f_unaccent(?::text)) collate "C")`;
const LIKE_TERM = `replace(replace(replace(${TERM}, '\\', '\\\\'), '%', '\\%'), '_', '\\_')`;

interface Term {
  value: string;
  /**
   * Whether the term matches anywhere in a value (through the trigram indexes) or only as a prefix (a btree range).
   * Anywhere needs a trigram to look up: a run of 3+ letters or digits (`vila`, `sao paulo`, `0% xylo`). Shorter
   * terms, and terms of punctuation and single letters (`SP`, `pa`, `a b`, `%%%`), match as a prefix: `state=SP`
   * finds "SP", `pa` finds "Paraná". (A term without a trigram would make the trigram index return every row.)
   */
  anywhere: boolean;
}

function termOf(raw: string | null | undefined): Term | null {
  const value = raw?.trim();
  if (!value) return null;
  return { value, anywhere: /[\p{L}\p{Nd}]{3,}/u.test(value.replace(/\p{M}/gu, '')) };
}

const sql = (text: string, ...params: unknown[]): SqlQuery => ({ sql: text, params });
const join = (parts: SqlQuery[], separator: string): SqlQuery => ({
  sql: parts.map((p) => `(${p.sql})`).join(separator),
  params: parts.flatMap((p) => p.params),
});
const and = (...parts: SqlQuery[]) => join(parts, ' and ');
const or = (...parts: SqlQuery[]) => join(parts, ' or ');
const not = (part: SqlQuery) => sql(`not (${part.sql})`, ...part.params);

/**
 * A prefix as a plain range of keys, so that an index answers it exactly: no filter left to recompute the key per
 * row, and a count(*) from a bitmap needs no heap page. U+10FFFF (the last code point, a noncharacter) bounds the
 * keys starting with the term; a key with it right after the term and more after that is the one miss.
 */
const startsWith = (column: SearchColumn, term: Term) =>
  sql(`${key(column)} >= ${TERM} and ${key(column)} <= (${TERM} || chr(1114111))`, term.value, term.value);
/** Its negation as one test of the key (a negated range would compute an unindexed key twice). */
const notStartsWith = (column: SearchColumn, term: Term) => sql(`not (${key(column)} ^@ ${TERM})`, term.value);
const containsTerm = (column: SearchColumn, term: Term) => sql(`${key(column)} like ('%' || ${LIKE_TERM} || '%')`, term.value);
/** The partial match of a term: anywhere in the value for 3+ characters, else as a prefix. */
const matches = (column: SearchColumn, term: Term) => (term.anywhere ? containsTerm(column, term) : startsWith(column, term));

interface ParsedFilter {
  /** q: the free-text term; it matches the name, the city or the state. */
  q: Term | null;
  /** city and state: each narrows to the rows whose column matches it (all given filters combine with AND). */
  columns: { column: 'city' | 'state'; term: Term }[];
}

function parse(filter: SearchFilter): ParsedFilter {
  const columns: ParsedFilter['columns'] = [];
  for (const column of ['city', 'state'] as const) {
    const term = termOf(filter[column]);
    if (term) columns.push({ column, term });
  }
  return { q: termOf(filter.q), columns };
}

/** The city and state filters (all but `except`, which a caller already applies), ACTIVE only. */
function narrowing(filter: ParsedFilter, except?: 'city' | 'state'): SqlQuery {
  return and(sql(`t.status = 'ACTIVE'`), ...filter.columns.filter((c) => c.column !== except).map((c) => matches(c.column, c.term)));
}

/**
 * Relevance buckets of a search, most relevant first; disjoint, so a row has exactly one rank. With q:
 *   0. the name starts with q (lower-cased and unaccented, as everywhere below); the name that is q itself comes
 *      first, as the shortest key of the bucket;
 *   1. the name contains q elsewhere (terms of 3+ characters);
 *   2. the name does not match q, the city or the state does.
 * Without q (city and/or state only) every match is in one bucket. Within a bucket rows are ordered by the name's
 * search key (case- and accent-insensitive, byte-wise: "agua" and "água" together), then by id: a total order, so
 * pages are stable.
 */
function relevanceBuckets(filter: ParsedFilter): SqlQuery[] {
  const { q } = filter;
  if (!q) return [sql('true')];
  return [
    startsWith('name', q),
    ...(q.anywhere ? [and(containsTerm('name', q), notStartsWith('name', q))] : []),
    and(q.anywhere ? not(containsTerm('name', q)) : notStartsWith('name', q), or(matches('city', q), matches('state', q))),
  ];
}

/**
 * Matching ACTIVE territories, most relevant first (relevanceBuckets), at most SEARCH_MATCH_LIMIT in all; no filter
 * at all is the plain list, by name.
 *
 * Each bucket takes its first `offset + limit` rows in (name key, id) order straight from the covering name-key
 * index (an index-only scan: the filters read the city and state keys stored there) or, when its matches are few,
 * from the trigram indexes. A bucket after the first runs only while the buckets before it have not filled the page
 * (a one-time filter: it is never executed otherwise), so a broad term whose prefix matches fill the page reads about
 * `offset + limit` index entries. The full rows are read for the page's ids only.
 */
export function searchQuery(filter: SearchFilter & { offset: number; limit: number }): SqlQuery {
  const parsed = parse(filter);
  if (!parsed.q && parsed.columns.length === 0) {
    return {
      sql: `select ${COLUMNS} from territory t where t.status = 'ACTIVE' order by t.name, t.id offset ?::int limit ?::int`,
      params: [filter.offset, filter.limit],
    };
  }
  const wanted = Math.min(filter.offset + filter.limit, SEARCH_MATCH_LIMIT);
  if (wanted <= filter.offset) return { sql: `select ${COLUMNS} from territory t where false`, params: [] };
  const filters = narrowing(parsed);
  const ctes = relevanceBuckets(parsed).map((bucket, rank) => {
    const earlier = Array.from({ length: rank }, (_, i) => `(select count(*) from r${i})`);
    const gate = rank > 0 ? sql(`${earlier.join(' + ')} < ?::int`, wanted) : sql('true');
    const where = and(bucket, filters, gate);
    return sql(
      `r${rank} as (select t.id, ${rank} as rank, ${key('name')} as name_key from territory t where ${where.sql}
         order by name_key, t.id limit ?::int)`,
      ...where.params,
      wanted,
    );
  });
  const buckets = ctes.map((_, rank) => `table r${rank}`).join(' union all ');
  return {
    sql: `with ${ctes.map((c) => c.sql).join(',\n')},
      page as (select * from (${buckets}) m order by rank, name_key, id offset ?::int limit ?::int)
      select ${COLUMNS} from page join territory t on t.id = page.id order by page.rank, page.name_key, page.id`,
    params: [...ctes.flatMap((c) => c.params), filter.offset, wanted - filter.offset],
  };
}

/**
 * A search's first relevance bucket alone: the ACTIVE territories whose name starts with `q`, in the search's order
 * (name key, id). What a search box sends while typing is such a prefix, and on the bench's data every one of those
 * fills its page from this bucket: the page is then this statement's answer, and `searchQuery` (three buckets, planned
 * on every call: its planning cost twice its execution) is not needed (`searchTerritoryRows`).
 *
 * Run named, it keeps one generic plan: the range of name keys read in order from territory_active_name_key_idx,
 * stopping at the page, whatever the term (a broad prefix stops after the page, a narrow one reads its few keys).
 * Two things would make PostgreSQL plan it on every call instead: the term folded into the bounds (a custom plan
 * estimates the range from the statistics, a generic one cannot, and their costs differ) and a `limit` parameter;
 * so the bounds are InitPlan values (`(select ...)`, estimated alike in both) and the first page's limit is written
 * in (`pageSlice`).
 */
export function namePrefixQuery(q: string, page: { offset: number; limit: number }): SqlQuery {
  const slice = pageSlice(page, DEFAULT_PAGE_SIZE);
  return {
    sql: `select ${COLUMNS} from territory t
           where t.status = 'ACTIVE' and ${key('name')} >= (select ${TERM}) and ${key('name')} <= (select ${TERM} || chr(1114111))
           order by ${key('name')}, t.id ${slice.sql}`,
    params: [q, q, ...slice.params],
  };
}

/**
 * A page of a search: for `q` alone, its first bucket (`namePrefixQuery`, named) when that fills the page, which is
 * then the page `searchQuery` answers (the buckets come in order, and the page lies within the first); else
 * `searchQuery`, unnamed (its best plan depends on the terms). `run` executes a statement (`prepared`: as a named
 * statement): the service's hot read, or the bench's bare route.
 */
export async function searchTerritoryRows(
  run: (query: SqlQuery, options: { prepared: boolean }) => Promise<TerritoryRow[]>,
  filter: SearchFilter & { offset: number; limit: number },
): Promise<TerritoryRow[]> {
  const parsed = parse(filter);
  if (parsed.q && parsed.columns.length === 0 && filter.offset + filter.limit <= SEARCH_MATCH_LIMIT) {
    const first = await run(namePrefixQuery(parsed.q.value, filter), { prepared: true });
    if (first.length === filter.limit) return first;
  }
  return run(searchQuery(filter), { prepared: false });
}

/**
 * How many rows `searchQuery` pages through: the matches, counted up to SEARCH_MATCH_LIMIT (the `/paged` envelope's
 * totalCount). The count needs no order, so it splits the matches into disjoint parts each served by one index,
 * cheapest first: the prefix ones as ranges of a covering key index (index-only), the rest through the trigram
 * indexes; counting stops at the limit, so a broad term reads about SEARCH_MATCH_LIMIT index entries.
 */
export function searchCountQuery(filter: SearchFilter): SqlQuery {
  const parsed = parse(filter);
  if (!parsed.q && parsed.columns.length === 0) {
    // Every ACTIVE territory: the stored count (TerritoryStatusCounter), not a scan of the table.
    return { sql: `select coalesce((select c.territory_count from territory_status_counter c where c.status = 'ACTIVE'), 0)::int as total`, params: [] };
  }
  // q matches any of name, city and state; without q the first filter drives and the others narrow. The parts:
  // a prefix of the first column, of the next (and not of the first)..., then a match elsewhere in any of them.
  const driving = parsed.q ? (['name', 'city', 'state'] as const) : [parsed.columns[0]!.column];
  const term = parsed.q ?? parsed.columns[0]!.term;
  const filters = narrowing(parsed, parsed.q ? undefined : parsed.columns[0]!.column);
  const parts = driving.map((column, i) => and(startsWith(column, term), ...driving.slice(0, i).map((c) => notStartsWith(c, term)), filters));
  if (term.anywhere) {
    const elsewhere = or(...driving.map((column) => containsTerm(column, term)));
    parts.push(and(...driving.map((column) => notStartsWith(column, term)), elsewhere, filters));
  }
  return {
    sql: `select count(*)::int as total from (${parts.map((p) => `select 1 from territory t where ${p.sql}`).join(' union all ')} limit ?::int) m`,
    params: [...parts.flatMap((p) => p.params), SEARCH_MATCH_LIMIT],
  };
}
