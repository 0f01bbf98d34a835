import { defineEntity, type Opt, p, Routine } from '@mikro-orm/postgresql';
import { baseProperties, statementCounterTriggers, textArray, refuseDeletedAccountTrigger } from './base.entity.js';
import { User } from './user.entity.js';

export const TERRITORY_STATUSES = ['PENDING', 'ACTIVE', 'REJECTED', 'INACTIVE'] as const;
export type TerritoryStatus = (typeof TERRITORY_STATUSES)[number];

/** Territory feature flags, canonical spelling: upper-case without underscores (spec "Feature flags"). */
export const TERRITORY_FEATURE_FLAGS = [
  'ALERTPOSTS',
  'MARKETPLACEENABLED',
  'MEDIAIMAGESENABLED',
  'MEDIAVIDEOSENABLED',
  'MEDIAAUDIOENABLED',
  'CHATMEDIAIMAGESENABLED',
  'CHATMEDIAAUDIOENABLED',
  'CHATENABLED',
  'CHATTERITORYPUBLICCHANNEL',
  'CHATTERITORYRESIDENTSCHANNEL',
  'CHATGROUPS',
  'CHATDMENABLED',
  'CHATMEDIAENABLED',
] as const;
export type TerritoryFeatureFlag = (typeof TERRITORY_FEATURE_FLAGS)[number];

/** `AlertPosts`, `ALERT_POSTS`, `alert-posts` -> `ALERTPOSTS`; null when it names no known flag. */
export function normalizeFeatureFlag(name: string): TerritoryFeatureFlag | null {
  const canonical = name
    .trim()
    .toUpperCase()
    .replace(/[_\-\s]/g, '');
  return (TERRITORY_FEATURE_FLAGS as readonly string[]).includes(canonical) ? (canonical as TerritoryFeatureFlag) : null;
}

/** Whether the territory has the flag enabled (stored flags are canonical). */
export function hasFlag(territory: { enabledFlags: readonly string[] }, flag: TerritoryFeatureFlag): boolean {
  return territory.enabledFlags.includes(flag);
}

// Lists, nearby and search only ever read ACTIVE rows, so their indexes are partial on that status.
const ACTIVE = `where status = 'ACTIVE'`;

/**
 * A column's search key, stored on the row (`name_key`, `city_key`, `state_key`): lower-cased and unaccented by the
 * immutable `public.f_unaccent` (migration Migration20261125160000), collation "C" (compared byte-wise: a prefix is
 * an index range). Stored, not an expression index: a search that rechecks rows (a trigram lookup, a bitmap heap
 * scan) compares the stored keys instead of calling f_unaccent per row, and the planner has the keys' statistics.
 * The database computes it (generated column); territories.queries.ts compares these columns with the term
 * normalised by the same function. Never written by the ORM (generated), never read by entity loads (lazy).
 */
const searchKey = (column: 'name' | 'city' | 'state') =>
  p.text().generated(`(lower(public.f_unaccent(${column}))) stored`).collation('C').lazy().$type<Opt<string>>();

/**
 * The immutable unaccent of the search keys, created by migration Migration20261125160000 (which says why it is
 * declared as it is). Declared here so the schema diff knows it (MikroORM would drop an undeclared function); the
 * raw DDL is compared by name, parameters and return type.
 */
export const unaccentFunction = new Routine({
  name: 'f_unaccent',
  schema: 'public',
  type: 'function',
  params: { value: { type: 'text' } },
  returns: { runtimeType: 'string', columnType: 'text' },
  expression: `create function public.f_unaccent(value text) returns text language sql immutable strict parallel unsafe cost 1
    return public.unaccent('public.unaccent'::regdictionary, value)`,
});

export const Territory = defineEntity({
  name: 'Territory',
  tableName: 'territory',
  properties: {
    ...baseProperties,
    name: p.string().length(200),
    description: p.string().length(2000).nullable(),
    city: p.string().length(200),
    state: p.string().length(100),
    latitude: p.double().$type<number>(),
    longitude: p.double().$type<number>(),
    radiusKm: p.double().$type<number>().default(5),
    parentTerritoryId: () => p.manyToOne(Territory).mapToPk().fieldName('parent_territory_id').nullable(),
    status: p.string().length(20).$type<TerritoryStatus>(),
    tags: textArray().$type<string[]>().default([]),
    /** Feature flags, canonical upper-case without underscores (MARKETPLACEENABLED...). */
    enabledFlags: textArray().$type<string[]>().default([]),
    suggestedByUserId: () => p.manyToOne(User).mapToPk().fieldName('suggested_by_user_id').nullable(),
    nameKey: searchKey('name'),
    cityKey: searchKey('city'),
    stateKey: searchKey('state'),
  },
  indexes: [
    // Nearby: bounding-box prefilter `point(longitude, latitude) <@ box(...)`, and the KNN scan (`<->`) that bounds a
    // dense area's answer; it includes the coordinates so that scan computes its distances from the index alone.
    {
      name: 'territory_active_geo_idx',
      expression: `create index "territory_active_geo_idx" on "territory" using gist (point("longitude", "latitude")) include ("latitude", "longitude") ${ACTIVE}`,
    },
    // Lists and unfiltered search: ordered by name.
    { name: 'territory_active_name_idx', expression: `create index "territory_active_name_idx" on "territory" ("name", "id") ${ACTIVE}` },
    // Search (territories.queries.ts): on each column's stored search key. Prefix terms are ranges of the covering
    // btrees, which also hold the other two keys, so a search filters and counts from the index alone (index-only
    // scans); terms matching anywhere go through the trigrams, whose rechecks compare the stored keys.
    {
      name: 'territory_active_name_key_idx',
      expression: `create index "territory_active_name_key_idx" on "territory" ("name_key", "id", "city_key", "state_key") ${ACTIVE}`,
    },
    {
      name: 'territory_active_city_key_idx',
      expression: `create index "territory_active_city_key_idx" on "territory" ("city_key", "name_key", "id", "state_key") ${ACTIVE}`,
    },
    {
      name: 'territory_active_state_key_idx',
      expression: `create index "territory_active_state_key_idx" on "territory" ("state_key", "name_key", "id", "city_key") ${ACTIVE}`,
    },
    ...(['name', 'city', 'state'] as const).map((column) => ({
      name: `territory_active_${column}_key_trgm_idx`,
      // No pending list (`fastupdate`), as item_active_text_trgm_idx: searches never scan entries waiting for a vacuum.
      expression: `create index "territory_active_${column}_key_trgm_idx" on "territory" using gin ("${column}_key" gin_trgm_ops) with (fastupdate = off) ${ACTIVE}`,
    })),
  ],
  uniques: [
    // One live territory per name + city + state (case-insensitive, trimmed): makes duplicate suggestions race-safe.
    {
      name: 'territory_name_city_state_unique',
      expression: `create unique index "territory_name_city_state_unique" on "territory" (lower(btrim("name")), lower(btrim("city")), lower(btrim("state"))) where status <> 'REJECTED'`,
    },
  ],
  // Keep TerritoryStatusCounter in step with every statement writing territories (function in its migration).
  triggers: statementCounterTriggers('territory', 'territory_status_count', 'territories'),
});

/**
 * How many territories there are in each status: the territory list's `totalCount` without counting the table on
 * every page (DESIGN "Performance": exact and cheap). Written only by the `territory_status_count` trigger, in the
 * transaction of the territory's own write, so it is exact at every commit.
 */
export const TerritoryStatusCounter = defineEntity({
  name: 'TerritoryStatusCounter',
  tableName: 'territory_status_counter',
  properties: {
    status: p.string().length(20).$type<TerritoryStatus>().primary(),
    territoryCount: p.integer().default(0),
  },
});

/** The territory a user's session has selected (X-Session-Id). */
export const TerritorySelection = defineEntity({
  name: 'TerritorySelection',
  tableName: 'territory_selection',
  triggers: [refuseDeletedAccountTrigger('territory_selection', 'user_id')],
  properties: {
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').primary(),
    sessionId: p.string().length(200).primary(),
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
