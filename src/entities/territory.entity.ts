import { defineEntity, p, Routine } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
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
 * A column's search key: lower-cased and unaccented by the immutable `public.f_unaccent` (migration
 * Migration20261125160000), compared byte-wise (collation "C": a prefix is an index range). The search SQL in
 * territories.queries.ts writes the very same expression.
 */
const searchKey = (column: 'name' | 'city' | 'state') => `(lower(public.f_unaccent("${column}")) collate "C")`;

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
    tags: p.array().default([]),
    /** Feature flags, canonical upper-case without underscores (MARKETPLACEENABLED...). */
    enabledFlags: p.array().default([]),
    suggestedByUserId: () => p.manyToOne(User).mapToPk().fieldName('suggested_by_user_id').nullable(),
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
    // Search (territories.queries.ts): on each column's search key. Prefix terms are ranges of the covering btrees,
    // which also hold the other two keys and the raw columns, so a search filters and counts from the index alone
    // (index-only scans: f_unaccent is never recomputed per row); terms matching anywhere go through the trigrams.
    {
      name: 'territory_active_name_key_idx',
      expression: `create index "territory_active_name_key_idx" on "territory" (${searchKey('name')}, "id", ${searchKey('city')}, ${searchKey('state')}) include ("name", "city", "state") ${ACTIVE}`,
    },
    {
      name: 'territory_active_city_key_idx',
      expression: `create index "territory_active_city_key_idx" on "territory" (${searchKey('city')}, ${searchKey('name')}, "id", ${searchKey('state')}) include ("name", "city", "state") ${ACTIVE}`,
    },
    {
      name: 'territory_active_state_key_idx',
      expression: `create index "territory_active_state_key_idx" on "territory" (${searchKey('state')}, ${searchKey('name')}, "id", ${searchKey('city')}) include ("name", "city", "state") ${ACTIVE}`,
    },
    {
      name: 'territory_active_name_key_trgm_idx',
      expression: `create index "territory_active_name_key_trgm_idx" on "territory" using gin (${searchKey('name')} gin_trgm_ops) ${ACTIVE}`,
    },
    {
      name: 'territory_active_city_key_trgm_idx',
      expression: `create index "territory_active_city_key_trgm_idx" on "territory" using gin (${searchKey('city')} gin_trgm_ops) ${ACTIVE}`,
    },
    {
      name: 'territory_active_state_key_trgm_idx',
      expression: `create index "territory_active_state_key_trgm_idx" on "territory" using gin (${searchKey('state')} gin_trgm_ops) ${ACTIVE}`,
    },
  ],
  uniques: [
    // One live territory per name + city + state (case-insensitive, trimmed): makes duplicate suggestions race-safe.
    {
      name: 'territory_name_city_state_unique',
      expression: `create unique index "territory_name_city_state_unique" on "territory" (lower(btrim("name")), lower(btrim("city")), lower(btrim("state"))) where status <> 'REJECTED'`,
    },
  ],
});

/** The territory a user's session has selected (X-Session-Id). */
export const TerritorySelection = defineEntity({
  name: 'TerritorySelection',
  tableName: 'territory_selection',
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
