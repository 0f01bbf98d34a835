import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, statementCounterTriggers } from './base.entity.js';
import { mapPinTriggers } from './map.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

/** Suggested on creation; curation makes it Active or Rejected; a curator may archive it. Spelled as the spec does. */
export const ASSET_STATUSES = ['Suggested', 'Active', 'Archived', 'Rejected'] as const;
export type AssetStatus = (typeof ASSET_STATUSES)[number];
/** The one asset type the spec names; only it may carry a subtype. */
export const NATURAL_ASSET_TYPE = 'natural';
export const NATURAL_ASSET_SUBTYPES = ['river', 'stream', 'spring', 'waterfall', 'well', 'potable_water'] as const;
export type NaturalAssetSubtype = (typeof NATURAL_ASSET_SUBTYPES)[number];

export interface GeoAnchor {
  latitude: number;
  longitude: number;
}

/**
 * A territory asset (a river, a square, a community garden...). It belongs to the territory, never to a seller:
 * there is deliberately no price or owner-transfer field (rule 5). `type` and `subtype` are stored lower-case;
 * `geoAnchors` (at least one) keep the order given, each one a pin on the map while the asset is Active.
 * `validationCount` is kept on the row, changed in the statement that records a member's validation.
 */
export const TerritoryAsset = defineEntity({
  name: 'TerritoryAsset',
  tableName: 'territory_asset',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    createdByUserId: () => p.manyToOne(User).mapToPk().fieldName('created_by_user_id').deleteRule('cascade').index(),
    type: p.string().length(50),
    subtype: p.string().length(40).nullable(),
    name: p.string().length(200),
    description: p.string().length(1000).nullable(),
    geoAnchors: p.json<GeoAnchor[]>(),
    status: p.string().length(20).$type<AssetStatus>().default('Suggested'),
    validationCount: p.integer().default(0),
    curatedAtUtc: p.datetime().nullable(),
    curatedByUserId: p.uuid().nullable(),
    archivedAtUtc: p.datetime().nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  indexes: [
    // The asset list: a territory's assets, newest first (status and type are filters on it).
    {
      name: 'territory_asset_territory_idx',
      expression: `create index "territory_asset_territory_idx" on "territory_asset" ("territory_id", "created_at_utc" desc, "id" desc)`,
    },
    // Asset pins: only Active assets are ever pinned.
    {
      name: 'territory_asset_active_idx',
      expression: `create index "territory_asset_active_idx" on "territory_asset" ("territory_id", "created_at_utc" desc, "id" desc) where status = 'Active'`,
    },
  ],
  // Map pin counters, of the territory and by author (src/entities/map.entity.ts).
  triggers: [...mapPinTriggers('territory_asset', 'assets'), ...statementCounterTriggers('territory_asset', 'map_pin_author_territory_asset', 'assets')],
});

/** A member's validation of an asset: one per user and asset (validating again changes nothing). */
export const AssetValidation = defineEntity({
  name: 'AssetValidation',
  tableName: 'asset_validation',
  properties: {
    assetId: () => p.manyToOne(TerritoryAsset).mapToPk().fieldName('asset_id').deleteRule('cascade').primary(),
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').primary(),
    createdAtUtc: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['userId'] }],
});
