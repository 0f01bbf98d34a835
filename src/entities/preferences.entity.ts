import { defineEntity, p } from '@mikro-orm/postgresql';
import type { NotificationType } from './notification.entity.js';
import { baseProperties, refuseDeletedAccountTrigger } from './base.entity.js';
import { User } from './user.entity.js';

export const VISIBILITIES = ['Public', 'ResidentsOnly', 'Private'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** Privacy and notification preferences, one row per user, created with the defaults on first read. */
export const UserPreferences = defineEntity({
  name: 'UserPreferences',
  tableName: 'user_preferences',
  triggers: [refuseDeletedAccountTrigger('user_preferences', 'user_id')],
  properties: {
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').primary(),
    profileVisibility: p.string().length(20).$type<Visibility>().default('Public'),
    contactVisibility: p.string().length(20).$type<Visibility>().default('ResidentsOnly'),
    shareLocation: p.boolean().default(false),
    showMemberships: p.boolean().default(true),
    /**
     * Only the flags the user has set; a type missing here is enabled. Stored sparse so a notification type added
     * later starts enabled for everyone.
     */
    notifications: p.json<Partial<Record<NotificationType, boolean>>>().default('{}'),
    createdAtUtc: p.datetime().onCreate(() => new Date()),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

/** Which media types a user wants displayed and whether video and audio play by themselves. */
export const UserMediaPreferences = defineEntity({
  name: 'UserMediaPreferences',
  tableName: 'user_media_preferences',
  triggers: [refuseDeletedAccountTrigger('user_media_preferences', 'user_id')],
  properties: {
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').primary(),
    showImages: p.boolean().default(true),
    showVideos: p.boolean().default(true),
    showAudio: p.boolean().default(true),
    autoPlayVideos: p.boolean().default(false),
    autoPlayAudio: p.boolean().default(false),
    createdAtUtc: p.datetime().onCreate(() => new Date()),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

/** One interest tag of a user (normalized: trimmed, lower-case). At most 10 per user, enforced by the service. */
export const UserInterest = defineEntity({
  name: 'UserInterest',
  tableName: 'user_interest',
  triggers: [refuseDeletedAccountTrigger('user_interest', 'user_id')],
  properties: {
    ...baseProperties,
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade'),
    tag: p.string().length(50),
  },
  uniques: [{ properties: ['userId', 'tag'] }],
});
