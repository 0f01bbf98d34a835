import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { User } from './user.entity.js';

export const TERRITORY_STATUSES = ['PENDING', 'ACTIVE', 'REJECTED', 'INACTIVE'] as const;
export type TerritoryStatus = (typeof TERRITORY_STATUSES)[number];

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
});

/** The territory a user's session has selected (X-Session-Id). */
export const TerritorySelection = defineEntity({
  name: 'TerritorySelection',
  tableName: 'territory_selection',
  properties: {
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').primary(),
    sessionId: p.string().length(200).primary(),
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    updatedAtUtc: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
