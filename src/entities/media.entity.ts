import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, refuseDeletedAccountTrigger } from './base.entity.js';
import { mapPinTriggers } from './map.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const MEDIA_TYPES = ['IMAGE', 'VIDEO', 'AUDIO'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

/** What a media asset can be attached to. */
export const MEDIA_OWNER_TYPES = ['POST', 'EVENT', 'ITEM', 'CHAT_MESSAGE'] as const;
export type MediaOwnerType = (typeof MEDIA_OWNER_TYPES)[number];

/** Content types with their own media rules; the section names of the territory media configuration. */
export const MEDIA_SECTIONS = ['posts', 'events', 'marketplace', 'chat'] as const;
export type MediaSection = (typeof MEDIA_SECTIONS)[number];

/**
 * An uploaded image, video or audio; the bytes live in storage under `storageKey`. Deleting content only marks its
 * media (`deletedAtUtc`) inside the content's transaction; the bytes and the row are purged after the commit, so a
 * rolled-back deletion never loses a file.
 */
export const MediaAsset = defineEntity({
  name: 'MediaAsset',
  tableName: 'media_asset',
  properties: {
    ...baseProperties,
    uploadedByUserId: () => p.manyToOne(User).mapToPk().fieldName('uploaded_by_user_id').deleteRule('cascade').index(),
    mediaType: p.string().length(10).$type<MediaType>(),
    /** Sniffed from the bytes at upload, never the client's claim. */
    mimeType: p.string().length(100),
    sizeBytes: p.integer(),
    /** Read from the file for video and audio; null for images. */
    durationSeconds: p.double().$type<number>().nullable(),
    storageKey: p.string().length(500),
    title: p.string().length(200).nullable(),
    description: p.string().length(2000).nullable(),
    deletedAtUtc: p.datetime().nullable(),
  },
  indexes: [
    // The purge looks up marked assets only.
    {
      name: 'media_asset_deleted_idx',
      expression: 'create index "media_asset_deleted_idx" on "media_asset" ("deleted_at_utc") where deleted_at_utc is not null',
    },
  ],
  // Map pin counters (src/entities/map.entity.ts): a media pin goes when its asset is marked deleted.
  triggers: [...mapPinTriggers('media_asset', 'media'), refuseDeletedAccountTrigger('media_asset', 'uploaded_by_user_id')],
});

/**
 * Media shown by a post, event, item or chat message, in `displayOrder` (0 first; an event's cover is 0). An asset
 * belongs to at most one owner (unique asset id): content that shares a file would lose it when the other is deleted.
 */
export const MediaAttachment = defineEntity({
  name: 'MediaAttachment',
  tableName: 'media_attachment',
  properties: {
    ...baseProperties,
    mediaAssetId: () => p.manyToOne(MediaAsset).mapToPk().fieldName('media_asset_id').deleteRule('cascade').unique(),
    ownerType: p.string().length(20).$type<MediaOwnerType>(),
    ownerId: p.uuid(),
    displayOrder: p.integer(),
  },
  indexes: [{ properties: ['ownerType', 'ownerId', 'displayOrder'] }],
  // Map pin counters (src/entities/map.entity.ts).
  triggers: mapPinTriggers('media_attachment', 'attachments'),
});

/** Per-section values a territory configured; absent keys fall back to the global limits (see media-config). */
export type MediaSectionOverrides = Partial<Record<string, boolean | number | string[]>>;

/** A territory's media configuration: only what its curators set, one JSON object per section. */
export const TerritoryMediaConfig = defineEntity({
  name: 'TerritoryMediaConfig',
  tableName: 'territory_media_config',
  properties: {
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade').primary(),
    posts: p.json<MediaSectionOverrides>().default('{}'),
    events: p.json<MediaSectionOverrides>().default('{}'),
    marketplace: p.json<MediaSectionOverrides>().default('{}'),
    chat: p.json<MediaSectionOverrides>().default('{}'),
    updatedByUserId: p.uuid().nullable(),
    createdAtUtc: p.datetime().onCreate(() => new Date()),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
