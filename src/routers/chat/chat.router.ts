import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { zTrackedAsyncIterable } from '../notifications/notifications.schemas.js';
import { liveMessages } from './chat.live.js';
import {
  channelsOutput,
  conversationInput,
  conversationOutput,
  createGroupInput,
  groupInput,
  groupsOutput,
  listMessagesInput,
  markReadInput,
  messageOutput,
  messagesOutput,
  onMessageInput,
  participantInput,
  participantsOutput,
  sendMessageInput,
  startDirectInput,
  territoryInput,
} from './chat.schemas.js';
import * as chat from './chat.service.js';

const TAGS = ['Chat'];
const GROUPS = '/api/v1/territories/{territoryId}/chat/groups';
const CONVERSATION = '/api/v1/chat/conversations/{conversationId}';

const groupAction = (action: 'approve' | 'lock' | 'unlock' | 'disable', summary: string) =>
  authedProcedure
    .meta({ openapi: { method: 'POST', path: `${GROUPS}/{groupId}/${action}`, tags: TAGS, summary } })
    .input(groupInput)
    .output(conversationOutput)
    .mutation(({ ctx, input }) => chat.decideGroup(ctx, { ...input, action }));

export const chatRouter = router({
  channels: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/territories/{territoryId}/chat/channels',
        tags: TAGS,
        summary: "The territory's public and residents channels the caller may read (created on first listing)",
      },
    })
    .input(territoryInput)
    .output(channelsOutput)
    .query(({ ctx, input }) => chat.listChannels(ctx, input)),

  groups: authedProcedure
    .meta({ openapi: { method: 'GET', path: GROUPS, tags: TAGS, summary: "The territory's ACTIVE groups" } })
    .input(territoryInput)
    .output(groupsOutput)
    .query(({ ctx, input }) => chat.listGroups(ctx, input)),

  createGroup: authedProcedure
    .meta({
      openapi: { method: 'POST', path: GROUPS, tags: TAGS, summary: 'Create a group (identity-verified residents); PENDING_APPROVAL until a curator approves' },
      successStatus: 201,
    })
    .input(createGroupInput)
    .output(conversationOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await chat.createGroup(ctx, input);
      ctx.resp.headers.Location = `/api/v1/chat/conversations/${created.id}`;
      return created;
    }),

  approveGroup: groupAction('approve', 'Approve a pending group (curator or SYSTEM_ADMIN): ACTIVE'),
  lockGroup: groupAction('lock', 'Lock a group (moderator or SYSTEM_ADMIN): LOCKED, no new messages'),
  unlockGroup: groupAction('unlock', 'Unlock a locked group (moderator or SYSTEM_ADMIN): ACTIVE'),
  disableGroup: groupAction('disable', 'Disable a group (moderator or SYSTEM_ADMIN): DISABLED'),

  startDirect: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/chat/direct',
        tags: TAGS,
        summary: "Start a direct message (identity-verified; the recipient's contact visibility and blocks apply); 200 with the pair's existing one",
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(startDirectInput)
    .output(conversationOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, conversation } = await chat.startDirect(ctx, input);
      if (created) ctx.resp.headers.Location = `/api/v1/chat/conversations/${conversation.id}`;
      else ctx.resp.status = 200;
      return conversation;
    }),

  conversation: authedProcedure
    .meta({ openapi: { method: 'GET', path: CONVERSATION, tags: TAGS, summary: 'A conversation, with my unread count' } })
    .input(conversationInput)
    .output(conversationOutput)
    .query(({ ctx, input }) => chat.getConversation(ctx, input)),

  messages: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${CONVERSATION}/messages`,
        tags: TAGS,
        summary: 'Messages newest first, by cursor (beforeCreatedAtUtc and beforeMessageId of nextCursor; or before; limit 1..100, default 50)',
      },
    })
    .input(listMessagesInput)
    .output(messagesOutput)
    .query(({ ctx, input }) => chat.listMessages(ctx, input)),

  sendMessage: authedProcedure
    .meta({
      openapi: { method: 'POST', path: `${CONVERSATION}/messages`, tags: TAGS, summary: 'Send a message (text, optional mediaId: one image or one audio)' },
      successStatus: 201,
    })
    .input(sendMessageInput)
    .output(messageOutput)
    .mutation(({ ctx, input }) => chat.sendMessage(ctx, input)),

  participants: authedProcedure
    .meta({ openapi: { method: 'GET', path: `${CONVERSATION}/participants`, tags: TAGS, summary: 'Participants with their read markers' } })
    .input(conversationInput)
    .output(participantsOutput)
    .query(({ ctx, input }) => chat.listParticipants(ctx, input)),

  addParticipant: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${CONVERSATION}/participants`,
        tags: TAGS,
        summary: 'Invite a member of the territory into a group (owner or SYSTEM_ADMIN; 204)',
      },
      successStatus: 204,
    })
    .input(participantInput)
    .output(z.void())
    .mutation(({ ctx, input }) => chat.addParticipant(ctx, input)),

  removeParticipant: authedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${CONVERSATION}/participants/{userId}`,
        tags: TAGS,
        summary: 'Remove a participant from a group (owner or SYSTEM_ADMIN), or leave it (204)',
      },
      successStatus: 204,
    })
    .input(participantInput)
    .output(z.void())
    .mutation(({ ctx, input }) => chat.removeParticipant(ctx, input)),

  markRead: authedProcedure
    .meta({
      openapi: { method: 'POST', path: `${CONVERSATION}/read`, tags: TAGS, summary: 'Move my read marker to a message (the newest when omitted; 204)' },
      successStatus: 204,
    })
    .input(markReadInput)
    .output(z.void())
    .mutation(({ ctx, input }) => chat.markRead(ctx, input)),

  /**
   * Real time over the tRPC WebSocket (or SSE): each new message of the conversation, from any API process,
   * authorised like reading; `lastEventId` (a message id) resumes after that message.
   */
  onMessage: authedProcedure
    .input(onMessageInput)
    .output(zTrackedAsyncIterable(messageOutput))
    .subscription(({ ctx, input, signal }) => liveMessages(ctx.deps, ctx, input, { signal, outlet: ctx.connection.socket })),
});
