import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, textArray } from './base.entity.js';
import { User } from './user.entity.js';

/**
 * Every notification type. Each has one preference flag (`notifications.<type>` in the user's preferences, default
 * true) that the outbox dispatcher honours.
 */
export const NOTIFICATION_TYPES = [
  'POST_CREATED',
  'REPORT_CREATED',
  'INQUIRY_RECEIVED',
  'ORDER_PAID',
  'JOIN_REQUEST_RECEIVED',
  'JOIN_REQUEST_DECIDED',
  'EVENT_CREATED',
  'ALERT_VALIDATED',
  'SECURITY_ALERT',
  // Chat: a direct message to its recipient (unless they muted the conversation), an invitation to the invitee, a
  // new group waiting for approval to the territory's curators.
  'CHAT_DIRECT_MESSAGE_RECEIVED',
  'CHAT_GROUP_INVITATION_RECEIVED',
  'CHAT_GROUP_PENDING_APPROVAL',
] as const;

export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Delivered whatever the preference flag says: a person must learn that someone is attacking their account. */
export const ALWAYS_DELIVERED: readonly NotificationType[] = ['SECURITY_ALERT'];

/**
 * A notification waiting to be delivered, written in the same transaction as the change that causes it. The
 * dispatcher (src/routers/notifications/outbox-dispatch.job.ts) turns it into one Notification per recipient and stamps
 * `processedAtUtc`.
 */
export const OutboxMessage = defineEntity({
  name: 'OutboxMessage',
  tableName: 'outbox_message',
  properties: {
    ...baseProperties,
    type: p.string().length(50).$type<NotificationType>(),
    recipientUserIds: textArray().$type<string[]>(),
    title: p.text(),
    body: p.text(),
    data: p.json<Record<string, unknown>>().default('{}'),
    /** Identifies the cause (`join-request:<id>:received`); delivery is unique per (sourceKey, recipient). */
    sourceKey: p.string().length(200),
    processedAtUtc: p.datetime().nullable(),
  },
  // The dispatcher claims the oldest pending rows; processed rows stay out of this index.
  indexes: [{ name: 'outbox_message_pending_idx', properties: ['createdAtUtc'], where: 'processed_at_utc is null' }],
});

/** A delivered notification: one owner, a read state. */
export const Notification = defineEntity({
  name: 'Notification',
  tableName: 'notification',
  properties: {
    ...baseProperties,
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade'),
    type: p.string().length(50).$type<NotificationType>(),
    title: p.text(),
    body: p.text(),
    data: p.json<Record<string, unknown>>().default('{}'),
    sourceKey: p.string().length(200),
    readAtUtc: p.datetime().nullable(),
  },
  // The list is "mine, newest first".
  indexes: [{ name: 'notification_user_created_idx', properties: ['userId', 'createdAtUtc', 'id'] }],
  // Exactly once per cause and recipient, however often the dispatcher re-runs.
  uniques: [{ name: 'notification_source_user_uniq', properties: ['sourceKey', 'userId'] }],
});
