import { z } from 'zod';
import { CONVERSATION_KINDS, CONVERSATION_STATUSES, PARTICIPANT_ROLES } from '../../entities/chat.entity.js';
import { MEDIA_TYPES } from '../../entities/media.entity.js';
import { zId } from '../../platform/ids.js';
import { zNumeric } from '../../platform/numeric.js';
import { zOptionalText, zText } from '../../platform/text.js';

export const GROUP_NAME_MAX = 100;
export const GROUP_DESCRIPTION_MAX = 500;
export const MESSAGE_TEXT_MAX = 4000;
export const MESSAGES_LIMIT_DEFAULT = 50;
export const MESSAGES_LIMIT_MAX = 100;

export const conversationOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    kind: z.enum(CONVERSATION_KINDS),
    status: z.enum(CONVERSATION_STATUSES),
    /** Groups: their name; channels: a fixed label; direct messages: null. */
    name: z.string().nullable(),
    description: z.string().nullable(),
    createdByUserId: z.uuid().nullable(),
    createdAtUtc: z.iso.datetime(),
    lastMessageAtUtc: z.iso.datetime().nullable(),
    lastMessagePreview: z.string().nullable(),
    messageCount: z.number().int(),
    /** Messages of others after the caller's read marker. */
    unreadCount: z.number().int(),
  })
  .meta({ id: 'ChatConversation' });
export type ConversationOutput = z.infer<typeof conversationOutput>;

export const channelsOutput = z.object({ territoryId: z.uuid(), channels: z.array(conversationOutput) }).meta({ id: 'ChatChannels' });
export const groupsOutput = z.object({ territoryId: z.uuid(), groups: z.array(conversationOutput) }).meta({ id: 'ChatGroups' });

export const messageOutput = z
  .object({
    id: z.uuid(),
    conversationId: z.uuid(),
    senderUserId: z.uuid(),
    text: z.string(),
    media: z.object({ id: z.uuid(), url: z.string(), mediaType: z.enum(MEDIA_TYPES) }).nullable(),
    createdAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'ChatMessage' });
export type MessageOutput = z.infer<typeof messageOutput>;

export const messageCursor = z.object({ beforeCreatedAtUtc: z.iso.datetime(), beforeMessageId: z.uuid() }).meta({ id: 'ChatMessageCursor' });

export const messagesOutput = z
  .object({
    conversationId: z.uuid(),
    /** Newest first. */
    messages: z.array(messageOutput),
    /** Pass both fields back for the next (older) page; null when there is none. */
    nextCursor: messageCursor.nullable(),
  })
  .meta({ id: 'ChatMessages' });
export type MessagesOutput = z.infer<typeof messagesOutput>;

export const participantOutput = z
  .object({
    userId: z.uuid(),
    role: z.enum(PARTICIPANT_ROLES),
    joinedAtUtc: z.iso.datetime(),
    lastReadMessageId: z.uuid().nullable(),
    lastReadAtUtc: z.iso.datetime().nullable(),
    mutedUntilUtc: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ChatParticipant' });
export type ParticipantOutput = z.infer<typeof participantOutput>;
export const participantsOutput = z.object({ conversationId: z.uuid(), participants: z.array(participantOutput) }).meta({ id: 'ChatParticipants' });

// ---- inputs

export const territoryInput = z.object({ territoryId: zId });
export const createGroupInput = z.object({
  territoryId: zId,
  name: zText({ max: GROUP_NAME_MAX }),
  description: zOptionalText(GROUP_DESCRIPTION_MAX),
});
export type CreateGroupInput = z.infer<typeof createGroupInput>;
export const groupInput = z.object({ territoryId: zId, groupId: zId });
export type GroupInput = z.infer<typeof groupInput>;

export const startDirectInput = z.object({ territoryId: zId, userId: zId });
export type StartDirectInput = z.infer<typeof startDirectInput>;

export const conversationInput = z.object({ conversationId: zId });

const isoTimestamp = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' }).transform((v) => new Date(v));

export const listMessagesInput = z.object({
  conversationId: zId,
  /** Messages older than this instant (with beforeMessageId: the cursor of the previous page). */
  beforeCreatedAtUtc: isoTimestamp.optional(),
  /** Messages older than this message. */
  beforeMessageId: zId.optional(),
  /** The same as beforeMessageId (the spec's `before`). */
  before: zId.optional(),
  limit: zNumeric(z.number().int().min(1).max(MESSAGES_LIMIT_MAX), MESSAGES_LIMIT_DEFAULT),
});
export type ListMessagesInput = z.infer<typeof listMessagesInput>;

export const sendMessageInput = z.object({
  conversationId: zId,
  text: zText({ max: MESSAGE_TEXT_MAX }),
  mediaId: zId.nullish(),
});
export type SendMessageInput = z.infer<typeof sendMessageInput>;

export const participantInput = z.object({ conversationId: zId, userId: zId });
export type ParticipantInput = z.infer<typeof participantInput>;

export const markReadInput = z.object({ conversationId: zId, messageId: zId.nullish() });
export type MarkReadInput = z.infer<typeof markReadInput>;

/** `lastEventId` (a message id) is sent back by tRPC clients on reconnect: the messages after it come first. */
export const onMessageInput = z.object({ conversationId: zId, lastEventId: zId.nullish() });
