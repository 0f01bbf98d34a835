import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, refuseDeletedAccountTrigger } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const CONVERSATION_KINDS = ['TERRITORY_PUBLIC', 'TERRITORY_RESIDENTS', 'GROUP', 'DIRECT'] as const;
export type ConversationKind = (typeof CONVERSATION_KINDS)[number];
export const CONVERSATION_STATUSES = ['ACTIVE', 'PENDING_APPROVAL', 'LOCKED', 'DISABLED'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];
export const PARTICIPANT_ROLES = ['OWNER', 'MEMBER'] as const;
export type ParticipantRole = (typeof PARTICIPANT_ROLES)[number];

/**
 * A chat conversation of a territory: its two channels (one of each kind per territory, created on first listing),
 * invite-only groups (PENDING_APPROVAL until a curator approves) and direct messages (one per pair and territory,
 * `directKey`). `lastSeq` is the sequence number of its newest message: a message takes `lastSeq + 1` under the
 * row lock of this conversation, so messages of one conversation are totally ordered in commit order, which is what
 * makes cursor paging and real-time resume gap-free.
 */
export const ChatConversation = defineEntity({
  name: 'ChatConversation',
  tableName: 'chat_conversation',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    kind: p.string().length(30).$type<ConversationKind>(),
    status: p.string().length(20).$type<ConversationStatus>(),
    name: p.string().length(100).nullable(),
    description: p.string().length(500).nullable(),
    createdByUserId: () => p.manyToOne(User).mapToPk().fieldName('created_by_user_id').nullable().deleteRule('set null').index(),
    /** DIRECT only: `<smaller user id>:<larger user id>`, unique per territory. */
    directKey: p.string().length(80).nullable(),
    lastSeq: p.integer().default(0),
    lastMessageAtUtc: p.datetime().nullable(),
    lastMessagePreview: p.string().length(200).nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  indexes: [
    // Group list of a territory (ACTIVE only) and the channels.
    { properties: ['territoryId', 'kind', 'status'] },
    {
      name: 'chat_conversation_channel_unique',
      expression: `create unique index "chat_conversation_channel_unique" on "chat_conversation" ("territory_id", "kind") where kind in ('TERRITORY_PUBLIC', 'TERRITORY_RESIDENTS')`,
    },
    {
      name: 'chat_conversation_direct_unique',
      expression: `create unique index "chat_conversation_direct_unique" on "chat_conversation" ("territory_id", "direct_key") where direct_key is not null`,
    },
  ],
});

/**
 * A participant of a conversation with its read marker and mute state. Groups and direct messages list their
 * participants here; in the channels a row appears when a reader first marks it read (its read marker).
 */
export const ChatParticipant = defineEntity({
  name: 'ChatParticipant',
  tableName: 'chat_participant',
  triggers: [refuseDeletedAccountTrigger('chat_participant', 'user_id')],
  properties: {
    conversationId: () => p.manyToOne(ChatConversation).mapToPk().fieldName('conversation_id').deleteRule('cascade').primary(),
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').primary().index(),
    role: p.string().length(10).$type<ParticipantRole>(),
    joinedAtUtc: p.datetime().onCreate(() => new Date()),
    lastReadMessageId: p.uuid().nullable(),
    lastReadSeq: p.integer().default(0),
    lastReadAtUtc: p.datetime().nullable(),
    mutedUntilUtc: p.datetime().nullable(),
  },
});

/**
 * A message: `seq` orders it within its conversation (see ChatConversation). The sender stays on the row after an
 * account deletion (the account is anonymised), so conversations of others keep their history.
 */
export const ChatMessage = defineEntity({
  name: 'ChatMessage',
  tableName: 'chat_message',
  properties: {
    ...baseProperties,
    conversationId: () => p.manyToOne(ChatConversation).mapToPk().fieldName('conversation_id').deleteRule('cascade'),
    seq: p.integer(),
    senderUserId: () => p.manyToOne(User).mapToPk().fieldName('sender_user_id').deleteRule('cascade').index(),
    text: p.string().length(4000),
    mediaId: p.uuid().nullable(),
  },
  // The cursor: newest first within a conversation, resume after a sequence number. Its `conversation_id` statistics
  // say conversations are large (Migration20261127130000), and `sender_user_id`'s that senders are many
  // (Migration20261127180000): a named page's generic plan walks it backwards, hidden senders or not.
  uniques: [{ properties: ['conversationId', 'seq'] }],
  // Paging by `beforeCreatedAtUtc` alone finds its boundary here.
  indexes: [{ properties: ['conversationId', 'createdAtUtc'] }],
});
