import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, textArray, refuseDeletedAccountTrigger } from './base.entity.js';
import { mapPinTriggers } from './map.entity.js';
import type { MembershipRole } from './membership.entity.js';
import { Post } from './post.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const EVENT_STATUSES = ['SCHEDULED', 'CANCELLED'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];
export const PARTICIPATION_STATUSES = ['INTEREST', 'CONFIRMED'] as const;
export type ParticipationStatus = (typeof PARTICIPATION_STATUSES)[number];

/**
 * A community event of a territory. Events are public to every signed-in user; the creator's role at creation is
 * kept (`createdByMembership`), and `postId` is the feed post created with it: a foreign key that becomes null when
 * the author deletes that post through the feed, so an event never points at a deleted post.
 */
export const Event = defineEntity({
  name: 'Event',
  tableName: 'event',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    title: p.string().length(200),
    description: p.string().length(2000).nullable(),
    startsAtUtc: p.datetime(),
    endsAtUtc: p.datetime().nullable(),
    latitude: p.double().$type<number>(),
    longitude: p.double().$type<number>(),
    locationLabel: p.string().length(200).nullable(),
    coverMediaId: p.uuid().nullable(),
    additionalMediaIds: textArray().$type<string[]>().default([]),
    status: p.string().length(20).$type<EventStatus>().default('SCHEDULED'),
    createdByUserId: () => p.manyToOne(User).mapToPk().fieldName('created_by_user_id').deleteRule('cascade'),
    createdByMembership: p.string().length(20).$type<MembershipRole>(),
    // Indexed: deleting a post looks up the events referencing it to set their post_id null.
    postId: () => p.manyToOne(Post).mapToPk().fieldName('post_id').nullable().deleteRule('set null').index(),
    cancelledAtUtc: p.datetime().nullable(),
  },
  indexes: [
    // Territory list: filtered by territory, ordered and range-filtered by start.
    { properties: ['territoryId', 'startsAtUtc'] },
    // Nearby: bounding-box prefilter `point(longitude, latitude) <@ box(...)` over scheduled events only.
    {
      name: 'event_scheduled_geo_idx',
      expression: `create index "event_scheduled_geo_idx" on "event" using gist (point("longitude", "latitude")) where status = 'SCHEDULED'`,
    },
  ],
  // Map pin counters (src/entities/map.entity.ts).
  triggers: mapPinTriggers('event', 'events'),
});

/** One user's INTEREST or CONFIRMED on an event; interest and confirm upsert the single row. */
export const EventParticipation = defineEntity({
  name: 'EventParticipation',
  tableName: 'event_participation',
  triggers: [refuseDeletedAccountTrigger('event_participation', 'user_id')],
  properties: {
    eventId: () => p.manyToOne(Event).mapToPk().fieldName('event_id').deleteRule('cascade').primary(),
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').primary(),
    status: p.string().length(20).$type<ParticipationStatus>(),
    createdAtUtc: p.datetime().onCreate(() => new Date()),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  // Counts per event and status (the primary key serves "my participation").
  indexes: [{ properties: ['eventId', 'status'] }],
});
