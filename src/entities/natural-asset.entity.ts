import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const NATURAL_ASSET_TYPES = ['SPRING', 'WATERFALL', 'POTABLE_WATER'] as const;
export type NaturalAssetType = (typeof NATURAL_ASSET_TYPES)[number];
/** PENDING until a curator publishes it. */
export const NATURAL_ASSET_STATUSES = ['PENDING', 'PUBLISHED'] as const;
export type NaturalAssetStatus = (typeof NATURAL_ASSET_STATUSES)[number];

/** A spring, waterfall or potable-water point registered by a verified resident or curator of the territory. */
export const NaturalAsset = defineEntity({
  name: 'NaturalAsset',
  tableName: 'natural_asset',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    createdByUserId: () => p.manyToOne(User).mapToPk().fieldName('created_by_user_id').deleteRule('cascade').index(),
    type: p.string().length(20).$type<NaturalAssetType>(),
    name: p.string().length(200),
    description: p.string().length(1000).nullable(),
    latitude: p.double().$type<number>(),
    longitude: p.double().$type<number>(),
    status: p.string().length(20).$type<NaturalAssetStatus>().default('PENDING'),
    publishedAtUtc: p.datetime().nullable(),
    publishedByUserId: p.uuid().nullable(),
  },
  // The territory's list, newest first (status is a filter on it).
  indexes: [
    {
      name: 'natural_asset_territory_idx',
      expression: `create index "natural_asset_territory_idx" on "natural_asset" ("territory_id", "created_at_utc" desc, "id" desc)`,
    },
  ],
});
