import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, statementCounterTriggers } from './base.entity.js';
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
    // partial, so it also serves the territory foreign key's cascade. The included columns are all the listing, the
    // visibility and the blocks read, so a page of pins skips the entities before it index-only.
    {
      name: 'map_entity_territory_idx',
      expression: `create index "map_entity_territory_idx" on "map_entity" ("territory_id", "created_at_utc" desc, "id" desc) include ("status", "visibility", "created_by_user_id")`,
    },
  ],
  // Keep MapPinCounter and MapPinAuthorCounter in step with every statement writing entities (functions in their
  // migrations).
  triggers: [...mapPinTriggers('map_entity', 'entities'), ...statementCounterTriggers('map_entity', 'map_pin_author_map_entity', 'entities')],
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

/**
 * Statement-level triggers keeping MapPinCounter (and MapPinOwner) in step with every statement writing `table`,
 * whoever writes it: `map_pin_<table>()` (in the map pin counter migration) reads the statement's transition tables.
 * Declared here so the schema diff knows them; used by each table's own entity.
 */
export function mapPinTriggers(table: string, rows: string) {
  return (['insert', 'update', 'delete'] as const).map((event) => ({
    name: `${table}_map_pin_${event}`,
    timing: 'after' as const,
    events: [event],
    forEach: 'statement' as const,
    expression: `create trigger "${table}_map_pin_${event}" after ${event} on "${table}" referencing ${
      { insert: `new table as new_${rows}`, update: `old table as old_${rows} new table as new_${rows}`, delete: `old table as old_${rows}` }[event]
    } for each statement execute function map_pin_${table}()`,
  }));
}

export const MAP_PIN_TYPES = ['entity', 'post', 'event', 'asset', 'alert', 'media'] as const;
/** PUBLIC pins are seen by every viewer; RESIDENTS_ONLY ones only by those who see RESIDENTS_ONLY content. */
export const MAP_PIN_AUDIENCES = ['PUBLIC', 'RESIDENTS_ONLY'] as const;

/**
 * How many pins of each type a territory has, per audience: the map's `totalCount` without counting a territory's
 * pins on every page (DESIGN "Performance": exact and cheap). Written only by the `map_pin_*` triggers, in the
 * transaction of the content's own write, so it is exact at every commit. PUBLISHED posts only: the HIDDEN ones a
 * viewer still sees are counted live (few, on post_hidden_idx).
 */
export const MapPinCounter = defineEntity({
  name: 'MapPinCounter',
  tableName: 'map_pin_counter',
  properties: {
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade').primary(),
    pinType: p.string().length(10).$type<(typeof MAP_PIN_TYPES)[number]>().primary(),
    audience: p.string().length(20).$type<(typeof MAP_PIN_AUDIENCES)[number]>().primary(),
    pinCount: p.integer().default(0),
  },
});

/**
 * MapPinCounter by author as well (the column whose blocks hide the pin: an entity's, asset's or event's creator, a
 * post's author, an alert's reporter; a media pin's post or event): what a viewer who blocked someone does not see is
 * their blocked users' rows, read by key, not counted from the territory's pins. Written only by the
 * `map_pin_author_*` triggers (Migration20261127150000): entities, assets and alerts by delta, posts, events and media
 * from MapPinOwner's changes.
 */
export const MapPinAuthorCounter = defineEntity({
  name: 'MapPinAuthorCounter',
  tableName: 'map_pin_author_counter',
  properties: {
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade').primary(),
    authorUserId: p.uuid().primary(),
    pinType: p.string().length(10).$type<(typeof MAP_PIN_TYPES)[number]>().primary(),
    audience: p.string().length(20).$type<(typeof MAP_PIN_AUDIENCES)[number]>().primary(),
    pinCount: p.integer().default(0),
  },
});

/**
 * What each post or event adds to MapPinCounter: its own pin (a PUBLISHED post placed at a listed entity of its
 * territory, a SCHEDULED event) and its media pins, in its audience. Kept by the triggers so a write that changes a
 * post's pins through another row (its entity, its media, an attachment, a cascade) can take back exactly what the
 * post had added: a row is recomputed from the current data whenever anything it depends on is written.
 */
export const MapPinOwner = defineEntity({
  name: 'MapPinOwner',
  tableName: 'map_pin_owner',
  properties: {
    ownerType: p.string().length(10).$type<'POST' | 'EVENT'>().primary(),
    ownerId: p.uuid().primary(),
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade').index(),
    audience: p.string().length(20).$type<(typeof MAP_PIN_AUDIENCES)[number]>(),
    pins: p.integer(),
    media: p.integer(),
    /** The owner's place in its pins' order (a post's creation time) and its author: what a page of pins reads. */
    sortAtUtc: p.datetime(),
    authorUserId: p.uuid(),
  },
  indexes: [
    // The post pins of a page, newest first (post_map_pin_idx order), read index-only: no post and entity lookup
    // for each pin a deep page skips (every POST row is a pin).
    {
      name: 'map_pin_owner_post_idx',
      expression: `create index "map_pin_owner_post_idx" on "map_pin_owner" ("territory_id", "sort_at_utc" desc, "owner_id" desc) include ("audience", "author_user_id") where owner_type = 'POST'`,
    },
  ],
  // Its changes move MapPinAuthorCounter (function in its migration).
  triggers: statementCounterTriggers('map_pin_owner', 'map_pin_author_owner', 'owners'),
});
