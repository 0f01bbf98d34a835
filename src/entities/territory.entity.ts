import { defineEntity, p } from '@mikro-orm/postgresql';
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
    // Nearby: bounding-box prefilter `point(longitude, latitude) <@ box(...)`.
    {
      name: 'territory_active_geo_idx',
      expression: `create index "territory_active_geo_idx" on "territory" using gist (point("longitude", "latitude")) ${ACTIVE}`,
    },
    // Lists and unfiltered search: ordered by name.
    { name: 'territory_active_name_idx', expression: `create index "territory_active_name_idx" on "territory" ("name", "id") ${ACTIVE}` },
    // Search terms of 3+ characters: `ilike '%term%'` through trigrams.
    {
      name: 'territory_active_name_trgm_idx',
      expression: `create index "territory_active_name_trgm_idx" on "territory" using gin ("name" gin_trgm_ops) ${ACTIVE}`,
    },
    {
      name: 'territory_active_city_trgm_idx',
      expression: `create index "territory_active_city_trgm_idx" on "territory" using gin ("city" gin_trgm_ops) ${ACTIVE}`,
    },
    {
      name: 'territory_active_state_trgm_idx',
      expression: `create index "territory_active_state_trgm_idx" on "territory" using gin ("state" gin_trgm_ops) ${ACTIVE}`,
    },
    // Search terms of 1-2 characters (no trigram to look up, e.g. state=SP): prefix match on lower(column).
    {
      name: 'territory_active_name_prefix_idx',
      expression: `create index "territory_active_name_prefix_idx" on "territory" (lower("name") text_pattern_ops) ${ACTIVE}`,
    },
    {
      name: 'territory_active_city_prefix_idx',
      expression: `create index "territory_active_city_prefix_idx" on "territory" (lower("city") text_pattern_ops) ${ACTIVE}`,
    },
    {
      name: 'territory_active_state_prefix_idx',
      expression: `create index "territory_active_state_prefix_idx" on "territory" (lower("state") text_pattern_ops) ${ACTIVE}`,
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
