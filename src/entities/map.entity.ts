import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const MAP_ENTITY_VISIBILITIES = ['PUBLIC', 'RESIDENTS_ONLY'] as const;
export type MapEntityVisibility = (typeof MAP_ENTITY_VISIBILITIES)[number];
/** SUGGESTED on creation; a curator's validation makes it VALIDATED, or REJECTED (hidden everywhere) with false. */
export const MAP_ENTITY_STATUSES = ['SUGGESTED', 'VALIDATED', 'REJECTED'] as const;
export type MapEntityStatus = (typeof MAP_ENTITY_STATUSES)[number];

/**
 * A place on a territory's map (establishment, public space, natural space...). `confirmationCount` is kept on the
 * row, changed in the same statement that records a confirmation, so a list page is one indexed query.
 */
export const MapEntity = defineEntity({
  name: 'MapEntity',
  tableName: 'map_entity',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    createdByUserId: () => p.manyToOne(User).mapToPk().fieldName('created_by_user_id').deleteRule('cascade').index(),
    name: p.string().length(200),
    category: p.string().length(100),
    latitude: p.double().$type<number>(),
    longitude: p.double().$type<number>(),
    visibility: p.string().length(20).$type<MapEntityVisibility>(),
    status: p.string().length(20).$type<MapEntityStatus>().default('SUGGESTED'),
    confirmationCount: p.integer().default(0),
    validatedAtUtc: p.datetime().nullable(),
    validatedByUserId: p.uuid().nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  indexes: [
    // Entity list and pins: a territory's entities, newest first (status and visibility are filters on it). Not
    // partial, so it also serves the territory foreign key's cascade.
    {
      name: 'map_entity_territory_idx',
      expression: `create index "map_entity_territory_idx" on "map_entity" ("territory_id", "created_at_utc" desc, "id" desc)`,
    },
  ],
});

/** One confirmation per user and entity: the composite key makes a repeated confirmation a no-op. */
export const MapEntityConfirmation = defineEntity({
  name: 'MapEntityConfirmation',
  tableName: 'map_entity_confirmation',
  properties: {
    entityId: () => p.manyToOne(MapEntity).mapToPk().fieldName('entity_id').deleteRule('cascade').primary(),
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').primary(),
    createdAtUtc: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['userId'] }],
});

/** A verified resident's link to an entity of their territory (lives or works there...); unique per user and entity. */
export const MapEntityRelation = defineEntity({
  name: 'MapEntityRelation',
  tableName: 'map_entity_relation',
  properties: {
    ...baseProperties,
    entityId: () => p.manyToOne(MapEntity).mapToPk().fieldName('entity_id').deleteRule('cascade'),
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').index(),
  },
  uniques: [{ name: 'map_entity_relation_entity_user_uniq', properties: ['entityId', 'userId'] }],
});
