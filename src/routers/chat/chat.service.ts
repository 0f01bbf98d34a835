/**
 * Chat: the territory's two channels, invite-only groups and direct messages (DESIGN section 14). Every method opens
 * with `requireTerritory(ctx, territoryId, {flag: 'CHATENABLED'})`, then the flag of the conversation's kind (both
 * 404 CHAT_DISABLED: flags are checked before anything about the caller), then the spec's permission table:
 * - TERRITORY_PUBLIC: read by members (VISITOR or RESIDENT); written by identity-Verified RESIDENTs;
 * - TERRITORY_RESIDENTS: read and written by identity-Verified RESIDENTs;
 * - GROUP: created by identity-Verified RESIDENTs (PENDING_APPROVAL until a curator approves); read and written by
 *   its participants (invite-only) and SYSTEM_ADMIN; its details and participants are also visible to the
 *   territory's curators and moderators, who approve, lock, unlock and disable it, and members discover it in the
 *   listing, but what its messages say (the newest one's time and text, the counts) only its readers see;
 * - DIRECT: read and written by its two participants and SYSTEM_ADMIN; started by a Verified user whom the
 *   recipient's contact visibility allows and whom neither blocked.
 * A refused caller gets 403; writing to a conversation that is not ACTIVE, 409.
 *
 * Notifications (through the outbox, so each user's notification preferences apply): a direct message notifies its
 * recipient unless their participation is muted (`mutedUntilUtc` later than now); an invitation notifies the
 * invitee; a new group waiting for approval notifies the territory's curators.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, type HotReadSource, runHotRead } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import type { ConversationKind, ConversationStatus } from '../../entities/chat.entity.js';
import type { TerritoryFeatureFlag } from '../../entities/territory.entity.js';
import type { AccountEraser } from '../../platform/account-erasure.js';
import { newId } from '../../platform/ids.js';
import { AppError, badRequest, conflict, forbidden, notFound, validationFailed } from '../../platform/problems.js';
import type { AuthUser, ServiceContext } from '../../platform/service-context.js';
import { refusePostingRestricted, requireTerritory, type TerritoryAccess } from '../../policy/territory-access.js';
import { enforceProhibitedWordsOn } from '../moderation-rules/moderation-rules.service.js';
import { blockedUserIdsOf } from '../blocks/blocks.queries.js';
import { assertAttachable, attachMedia, mediaUrl } from '../media/media.service.js';
import { curatorIdsOf } from '../memberships/memberships.queries.js';
import { enqueueNotification } from '../notifications/outbox.js';
import {
  conversationById,
  CHAT_PREVIEW_MAX,
  type ConversationAccessRow,
  conversationForAccess,
  type ConversationRow,
  type ConversationViewer,
  conversationOfMessage,
  directRecipientOf,
  firstSeqAtOrAfterQuery,
  isNamedMessagePage,
  messageById,
  messageSeqOf,
  messagesBeforeQuery,
  type MessageRow,
  notifiedParticipantsOf,
  participantsQuery,
  type ParticipantRow,
  territoryConversationsQuery,
} from './chat.queries.js';
import type {
  ConversationOutput,
  CreateGroupInput,
  GroupInput,
  ListMessagesInput,
  MarkReadInput,
  MessageOutput,
  MessagesOutput,
  ParticipantInput,
  SendMessageInput,
  StartDirectInput,
} from './chat.schemas.js';

/**
 * PostgreSQL channel announcing each committed message, `{"c": conversationId, "m": messageId}`, and each change of
 * who may read a conversation, `{"c": conversationId}`.
 */
export const CHAT_MESSAGE_CHANNEL = 'chat_message';

/** The flag each kind needs besides CHATENABLED. */
const KIND_FLAGS: Record<ConversationKind, TerritoryFeatureFlag> = {
  TERRITORY_PUBLIC: 'CHATTERITORYPUBLICCHANNEL',
  TERRITORY_RESIDENTS: 'CHATTERITORYRESIDENTSCHANNEL',
  GROUP: 'CHATGROUPS',
  DIRECT: 'CHATDMENABLED',
};

const CHANNEL_NAMES: Partial<Record<ConversationKind, string>> = {
  TERRITORY_PUBLIC: 'Public channel',
  TERRITORY_RESIDENTS: 'Residents channel',
};

const chatDisabled = () => notFound('Chat of this territory', 'CHAT_DISABLED');

/**
 * Wakes the live streams of the conversation (at commit, inside a transaction) so they re-check their readers' right
 * to read: a removed participant or a disabled group loses the stream at once.
 */
const announceAccessChange = (em: EntityManager, conversationId: string) =>
  execSql(em, `select pg_notify('${CHAT_MESSAGE_CHANNEL}', ?)`, [JSON.stringify({ c: conversationId })]);

/** Flags first: CHATENABLED (through requireTerritory), then the kind's own flag. */
async function chatTerritory(ctx: Pick<ServiceContext, 'em' | 'user' | 'sessionId'>, territoryId: string, kindFlag?: TerritoryFeatureFlag) {
  const access = await requireTerritory(ctx, territoryId, { flag: 'CHATENABLED' });
  if (kindFlag && !access.hasFlag(kindFlag)) throw chatDisabled();
  return access;
}

const isVerified = (user: AuthUser) => user.identityVerificationStatus === 'Verified';

/** Identity-Verified RESIDENT of the territory: who writes the channels and creates groups. */
const isVerifiedResident = (user: AuthUser, access: TerritoryAccess) => isVerified(user) && access.isResident;

type Need = 'read' | 'write' | 'view';

/** Whether the caller may read (`read`), write (`write`) or see the details of (`view`) the conversation. */
function allows(need: Need, conv: ConversationAccessRow, access: TerritoryAccess, user: AuthUser): boolean {
  const participant = conv.my_role !== null;
  switch (conv.kind) {
    case 'TERRITORY_PUBLIC':
      return need === 'write' ? isVerifiedResident(user, access) : access.isMember || isVerifiedResident(user, access);
    case 'TERRITORY_RESIDENTS':
      return isVerifiedResident(user, access);
    case 'GROUP':
      if (need === 'view') return participant || access.holds('CURATOR', 'MODERATOR');
      return participant || access.isSystemAdmin;
    case 'DIRECT':
      return participant || access.isSystemAdmin;
  }
}

function refusal(need: Need, conv: ConversationAccessRow, user: AuthUser): AppError {
  if ((conv.kind === 'TERRITORY_PUBLIC' && need === 'write') || conv.kind === 'TERRITORY_RESIDENTS') {
    if (!isVerified(user)) return forbidden('Only identity-verified users can do this in this channel.', 'IDENTITY_NOT_VERIFIED');
    return forbidden('Only residents of this territory can do this in this channel.', 'NOT_RESIDENT');
  }
  if (conv.kind === 'TERRITORY_PUBLIC') return forbidden('Only members of this territory can read its public channel.', 'NOT_MEMBER');
  return forbidden('Only participants of this conversation can do this.', 'NOT_PARTICIPANT');
}

/**
 * The viewer of group and direct-message summaries: participants read them, and so does SYSTEM_ADMIN without taking
 * part (`allows`); curators and moderators see a group's details but not what its messages say.
 */
const privateViewer = (user: AuthUser, access: TerritoryAccess): ConversationViewer => ({
  id: user.id,
  readsUnjoined: access.isSystemAdmin,
  hiddenSenders: access.blockedUserIds,
});

interface OpenConversation {
  conv: ConversationAccessRow;
  access: TerritoryAccess;
}

/** The conversation (404), its territory's flags (404 CHAT_DISABLED), then the permission table (403). */
async function openConversation(ctx: ServiceContext, conversationId: string, need: Need): Promise<OpenConversation> {
  const conv = await conversationForAccess(ctx, conversationId, ctx.user.id);
  if (!conv) throw notFound('Conversation');
  const access = await chatTerritory(ctx, conv.territory_id, KIND_FLAGS[conv.kind]);
  if (!allows(need, conv, access, ctx.user)) throw refusal(need, conv, ctx.user);
  return { conv, access };
}

function toConversation(r: ConversationRow): ConversationOutput {
  return {
    id: r.id,
    territoryId: r.territory_id,
    kind: r.kind,
    status: r.status,
    name: r.name ?? CHANNEL_NAMES[r.kind] ?? null,
    description: r.description,
    createdByUserId: r.created_by_user_id,
    createdAtUtc: r.created_at_utc,
    lastMessageAtUtc: r.last_message_at_utc,
    lastMessagePreview: r.last_message_preview,
    messageCount: Number(r.message_count),
    unreadCount: Number(r.unread_count),
  };
}

function toMessage(r: MessageRow): MessageOutput {
  return {
    id: r.id,
    conversationId: r.conversation_id,
    senderUserId: r.sender_user_id,
    text: r.text,
    media: r.media_id && r.media_type ? { id: r.media_id, url: mediaUrl(r.media_id), mediaType: r.media_type } : null,
    createdAtUtc: r.created_at_utc,
  };
}

async function loadConversation(source: HotReadSource, id: string, viewer: ConversationViewer): Promise<ConversationOutput> {
  const row = await conversationById(source, id, viewer);
  if (!row) throw notFound('Conversation');
  return toConversation(row);
}

// ---- territory level: channels and groups

/**
 * The channels the caller may read, created on first listing when their flags are on: the public channel for
 * members, the residents channel for identity-Verified residents. A listing reads them first, on the pool; only
 * when one the caller may read is missing does it create the enabled ones (idempotent inserts) and read again.
 */
export async function listChannels(ctx: ServiceContext, input: { territoryId: string }) {
  const access = await chatTerritory(ctx, input.territoryId);
  if (!access.hasFlag('CHATTERITORYPUBLICCHANNEL') && !access.hasFlag('CHATTERITORYRESIDENTSCHANNEL')) throw chatDisabled();
  if (!access.isMember) throw forbidden('Only members of this territory can open its chat channels.', 'NOT_MEMBER');
  const enabled = (['TERRITORY_PUBLIC', 'TERRITORY_RESIDENTS'] as const).filter((kind) => access.hasFlag(KIND_FLAGS[kind]));
  const readable = enabled.filter((kind) => kind === 'TERRITORY_PUBLIC' || isVerifiedResident(ctx.user, access));
  if (readable.length === 0) return { territoryId: access.territoryId, channels: [] };
  // Only channels the caller reads are listed: each shows what its messages say.
  const channels = territoryConversationsQuery(access.territoryId, readable, ['ACTIVE', 'LOCKED', 'DISABLED'], {
    id: ctx.user.id,
    readsUnjoined: true,
    hiddenSenders: access.blockedUserIds,
  });
  let rows = await runHotRead<ConversationRow>(ctx, channels, { prepared: true });
  if (rows.length < readable.length) {
    for (const kind of enabled) {
      await execSql(
        ctx.em,
        `insert into chat_conversation (id, created_at_utc, territory_id, kind, status, name, description, created_by_user_id, direct_key, last_seq, updated_at_utc)
         values (?, ?, ?, ?, 'ACTIVE', ?, null, null, null, 0, ?) on conflict do nothing`,
        [newId(), ctx.clock.now(), access.territoryId, kind, CHANNEL_NAMES[kind], ctx.clock.now()],
      );
    }
    rows = await runHotRead<ConversationRow>(ctx, channels, { prepared: true });
  }
  return { territoryId: access.territoryId, channels: rows.map(toConversation) };
}

/**
 * ACTIVE groups of the territory, to its members and its curators and moderators. Groups are invite-only: what their
 * messages say (the newest one's time and text, the counts) shows only in those the caller may read.
 */
export async function listGroups(ctx: ServiceContext, input: { territoryId: string }) {
  const access = await chatTerritory(ctx, input.territoryId, 'CHATGROUPS');
  if (!access.is('member', 'CURATOR', 'MODERATOR')) throw forbidden('Only members of this territory can list its chat groups.', 'NOT_MEMBER');
  const rows = await runHotRead<ConversationRow>(ctx, territoryConversationsQuery(access.territoryId, ['GROUP'], ['ACTIVE'], privateViewer(ctx.user, access)));
  return { territoryId: access.territoryId, groups: rows.map(toConversation) };
}

/** An identity-Verified RESIDENT creates a group: PENDING_APPROVAL, with the creator as its OWNER. */
export async function createGroup(ctx: ServiceContext, input: CreateGroupInput): Promise<ConversationOutput> {
  const access = await chatTerritory(ctx, input.territoryId, 'CHATGROUPS');
  if (!access.isResident) throw forbidden('Only residents of this territory can create chat groups.', 'NOT_RESIDENT');
  if (!isVerified(ctx.user)) throw forbidden('Only identity-verified users can create chat groups.', 'IDENTITY_NOT_VERIFIED');
  const id = newId();
  const now = ctx.clock.now();
  await ctx.em.transactional(async (tx) => {
    await execSql(
      tx,
      `insert into chat_conversation (id, created_at_utc, territory_id, kind, status, name, description, created_by_user_id, direct_key, last_seq, updated_at_utc)
       values (?, ?, ?, 'GROUP', 'PENDING_APPROVAL', ?, ?, ?, null, 0, ?)`,
      [id, now, access.territoryId, input.name, input.description, ctx.user.id, now],
    );
    await execSql(tx, `insert into chat_participant (conversation_id, user_id, role, joined_at_utc, last_read_seq) values (?, ?, 'OWNER', ?, 0)`, [
      id,
      ctx.user.id,
      now,
    ]);
    enqueueNotification(tx, {
      type: 'CHAT_GROUP_PENDING_APPROVAL',
      recipientUserIds: await curatorIdsOf(tx, access.territoryId, ctx.user.id),
      title: `Chat group waiting for approval: ${input.name}`,
      body: `${ctx.user.displayName} created the group "${input.name}" in ${access.territory.name}; it opens once a curator approves it.`,
      data: { territoryId: access.territoryId, conversationId: id },
      sourceKey: `chat-group:${id}:pending-approval`,
    });
    await tx.flush();
  });
  return loadConversation(ctx.em, id, privateViewer(ctx.user, access));
}

type GroupAction = 'approve' | 'lock' | 'unlock' | 'disable';

/** Who decides each action, the statuses it applies to, and the result (a repeat on the result is a no-op). */
const GROUP_ACTIONS: Record<GroupAction, { by: 'CURATOR' | 'MODERATOR'; from: ConversationStatus[]; to: ConversationStatus; done: string }> = {
  approve: { by: 'CURATOR', from: ['PENDING_APPROVAL'], to: 'ACTIVE', done: 'approved' },
  lock: { by: 'MODERATOR', from: ['ACTIVE'], to: 'LOCKED', done: 'locked' },
  unlock: { by: 'MODERATOR', from: ['LOCKED'], to: 'ACTIVE', done: 'unlocked' },
  disable: { by: 'MODERATOR', from: ['PENDING_APPROVAL', 'ACTIVE', 'LOCKED'], to: 'DISABLED', done: 'disabled' },
};

/**
 * approve (CURATOR or SYSTEM_ADMIN): PENDING_APPROVAL -> ACTIVE; lock (MODERATOR or SYSTEM_ADMIN): ACTIVE -> LOCKED;
 * unlock: LOCKED -> ACTIVE; disable: any -> DISABLED. Another status: 409 GROUP_STATUS_CONFLICT.
 */
export async function decideGroup(ctx: ServiceContext, input: GroupInput & { action: GroupAction }): Promise<ConversationOutput> {
  const rule = GROUP_ACTIONS[input.action];
  const access = await chatTerritory(ctx, input.territoryId, 'CHATGROUPS');
  if (!access.holds(rule.by)) throw forbidden(`Only a ${rule.by.toLowerCase()} of this territory or a system admin can ${input.action} a group.`);
  await ctx.em.transactional(async (tx) => {
    const [row] = await execSql<{ status: ConversationStatus }>(
      tx,
      `select status from chat_conversation where id = ? and territory_id = ? and kind = 'GROUP' for update`,
      [input.groupId, access.territoryId],
    );
    if (!row) throw notFound('Group');
    if (row.status === rule.to) return;
    if (!rule.from.includes(row.status)) throw conflict(`A ${row.status} group cannot be ${rule.done}.`, 'GROUP_STATUS_CONFLICT');
    await execSql(tx, 'update chat_conversation set status = ?, updated_at_utc = ? where id = ?', [rule.to, ctx.clock.now(), input.groupId]);
    if (rule.to === 'DISABLED') await announceAccessChange(tx, input.groupId);
    audit(tx, {
      actorUserId: ctx.user.id,
      action: `chat.group.${input.action}`,
      subjectType: 'CHAT_GROUP',
      subjectId: input.groupId,
      territoryId: access.territoryId,
      data: { from: row.status, to: rule.to },
    });
    await tx.flush();
  });
  return loadConversation(ctx.em, input.groupId, privateViewer(ctx.user, access));
}

// ---- direct messages

const directKeyOf = (a: string, b: string) => (a < b ? `${a}:${b}` : `${b}:${a}`);

/**
 * Starts (or finds) the direct conversation of the caller and `userId` in the territory: CHATDMENABLED, a Verified
 * caller, the recipient's contact visibility (Public: anyone; ResidentsOnly: residents of the territory; Private:
 * nobody) and no block either way. `created` is false when the pair already had one.
 */
export async function startDirect(ctx: ServiceContext, input: StartDirectInput): Promise<{ created: boolean; conversation: ConversationOutput }> {
  const access = await chatTerritory(ctx, input.territoryId, 'CHATDMENABLED');
  if (!isVerified(ctx.user)) throw forbidden('Only identity-verified users can start direct messages.', 'IDENTITY_NOT_VERIFIED');
  if (input.userId === ctx.user.id)
    throw badRequest('You cannot start a direct message with yourself.', 'CANNOT_MESSAGE_SELF', [{ field: 'userId', message: 'must be another user' }]);
  const recipient = await directRecipientOf(ctx.em, input.userId, access.territoryId);
  if (!recipient) throw notFound('User');
  await assertNotBlocked(ctx.em, ctx.user.id, recipient.id);
  // ResidentsOnly: a resident of a territory the recipient belongs to (not of any territory the initiator picks).
  const allowed = recipient.contactVisibility === 'Public' || (recipient.contactVisibility === 'ResidentsOnly' && access.isResident && recipient.isMember);
  if (!allowed) throw forbidden("This user's preferences do not allow you to message them.", 'CONTACT_NOT_ALLOWED');

  const now = ctx.clock.now();
  const key = directKeyOf(ctx.user.id, recipient.id);
  const id = newId();
  const created = await ctx.em.transactional(async (tx) => {
    const inserted = await execSql<{ id: string }>(
      tx,
      `insert into chat_conversation (id, created_at_utc, territory_id, kind, status, name, description, created_by_user_id, direct_key, last_seq, updated_at_utc)
       values (?, ?, ?, 'DIRECT', 'ACTIVE', null, null, ?, ?, 0, ?) on conflict do nothing returning id`,
      [id, now, access.territoryId, ctx.user.id, key, now],
    );
    if (inserted.length === 0) return false;
    await execSql(
      tx,
      `insert into chat_participant (conversation_id, user_id, role, joined_at_utc, last_read_seq) values (?, ?, 'MEMBER', ?, 0), (?, ?, 'MEMBER', ?, 0)`,
      [id, ctx.user.id, now, id, recipient.id, now],
    );
    return true;
  });
  const [existing] = created
    ? [{ id }]
    : await execSql<{ id: string }>(ctx.em, 'select id from chat_conversation where territory_id = ? and direct_key = ?', [access.territoryId, key]);
  return { created, conversation: await loadConversation(ctx.em, existing!.id, privateViewer(ctx.user, access)) };
}

async function assertNotBlocked(em: EntityManager, a: string, b: string) {
  const [aBlocked, bBlocked] = await Promise.all([blockedUserIdsOf(em, a), blockedUserIdsOf(em, b)]);
  if (aBlocked.includes(b) || bBlocked.includes(a)) throw forbidden('One of you has blocked the other.', 'USER_BLOCKED');
}

// ---- one conversation

/** Its details to whoever may see them; what its messages say only to whoever may also read them. */
export async function getConversation(ctx: ServiceContext, input: { conversationId: string }): Promise<ConversationOutput> {
  const { conv, access } = await openConversation(ctx, input.conversationId, 'view');
  return loadConversation(ctx, conv.id, { id: ctx.user.id, readsUnjoined: allows('read', conv, access, ctx.user), hiddenSenders: access.blockedUserIds });
}

/** The sequence number below which a page starts (null: from the newest). */
async function pageStart(source: HotReadSource, conv: ConversationAccessRow, input: ListMessagesInput): Promise<number | null> {
  const beforeId = input.beforeMessageId ?? input.before;
  if (beforeId) {
    const seq = await messageSeqOf(source, conv.id, beforeId);
    if (seq === null) throw validationFailed(input.beforeMessageId ? 'beforeMessageId' : 'before', 'is not a message of this conversation');
    return seq;
  }
  if (input.beforeCreatedAtUtc) {
    const [row] = await runHotRead<{ seq: number }>(source, firstSeqAtOrAfterQuery(conv.id, input.beforeCreatedAtUtc));
    return row ? Number(row.seq) : null;
  }
  return null;
}

/**
 * Messages newest first, by cursor: the page of messages before `beforeMessageId` (or `before`, or the instant
 * `beforeCreatedAtUtc`), `limit` of them; `nextCursor` names the oldest one served. Messages of users the reader
 * blocked are left out.
 */
export async function listMessages(ctx: ServiceContext, input: ListMessagesInput): Promise<MessagesOutput> {
  const { conv, access } = await openConversation(ctx, input.conversationId, 'read');
  const beforeSeq = await pageStart(ctx, conv, input);
  // Whom the reader blocked came with the territory's access row; reads given `ctx` leave its manager unforked.
  const rows = await runHotRead<MessageRow>(ctx, messagesBeforeQuery(conv.id, beforeSeq, access.blockedUserIds, input.limit + 1), {
    prepared: isNamedMessagePage(input.limit + 1),
  });
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    conversationId: conv.id,
    messages: page.map(toMessage),
    nextCursor: rows.length > input.limit && last ? { beforeCreatedAtUtc: last.created_at_utc, beforeMessageId: last.id } : null,
  };
}

/**
 * Sends a message: persisted (and its media attached) in one transaction that takes the next sequence number under
 * the conversation's row lock and announces the message with `pg_notify` (delivered by PostgreSQL at commit, so
 * subscribers never hear of a message that is not stored).
 */
export async function sendMessage(ctx: ServiceContext, input: SendMessageInput): Promise<MessageOutput> {
  const { conv, access } = await openConversation(ctx, input.conversationId, 'write');
  refusePostingRestricted(access);
  await enforceProhibitedWordsOn(ctx.em, access.territoryId, input.text, 'text');
  if (conv.status !== 'ACTIVE') throw conflict(`This conversation is ${conv.status}: no new messages.`, 'CONVERSATION_NOT_ACTIVE');
  if (conv.kind === 'DIRECT') {
    const [other] = await execSql<{ user_id: string }>(ctx.em, 'select user_id from chat_participant where conversation_id = ? and user_id <> ? limit 1', [
      conv.id,
      ctx.user.id,
    ]);
    if (other) await assertNotBlocked(ctx.em, ctx.user.id, other.user_id);
  }
  const id = newId();
  await ctx.em.transactional(async (tx) => {
    if (input.mediaId) {
      // Video (the spec's text), per-type flags, sizes and durations first; then the chat media switch.
      await assertAttachable(tx, { userId: ctx.user.id, territoryId: access.territoryId, target: 'chat', mediaIds: [input.mediaId] });
      if (!access.hasFlag('CHATMEDIAENABLED')) {
        const message = 'Media are not enabled for chat messages in this territory.';
        throw badRequest(message, 'MEDIA_TYPE_NOT_ALLOWED', [{ field: 'mediaId', message }]);
      }
    }
    const now = ctx.clock.now();
    const preview = input.text.length <= CHAT_PREVIEW_MAX ? input.text : `${input.text.slice(0, CHAT_PREVIEW_MAX - 1)}…`;
    // The lock, the sequence number and a creation time that never goes back within the conversation.
    const [locked] = await execSql<{ last_seq: number; at: string }>(
      tx,
      `update chat_conversation
          set last_seq = last_seq + 1,
              last_message_at_utc = greatest(coalesce(last_message_at_utc, ?::timestamptz), ?::timestamptz),
              last_message_preview = ?, updated_at_utc = ?
        where id = ? and status = 'ACTIVE'
        returning last_seq, to_json(last_message_at_utc)#>>'{}' as at`,
      [now, now, preview, now, conv.id],
    );
    if (!locked) throw conflict('This conversation is no longer active: no new messages.', 'CONVERSATION_NOT_ACTIVE');
    await execSql(
      tx,
      `insert into chat_message (id, created_at_utc, conversation_id, seq, sender_user_id, text, media_id) values (?, ?::timestamptz, ?, ?, ?, ?, ?)`,
      [id, locked.at, conv.id, locked.last_seq, ctx.user.id, input.text, input.mediaId ?? null],
    );
    if (input.mediaId) attachMedia(tx, { ownerType: 'CHAT_MESSAGE', ownerId: id, mediaIds: [input.mediaId] });
    // The sender has read what they wrote (participants only: channels keep markers of readers who marked them).
    await execSql(
      tx,
      'update chat_participant set last_read_seq = ?, last_read_message_id = ?, last_read_at_utc = ? where conversation_id = ? and user_id = ? and last_read_seq < ?',
      [locked.last_seq, id, now, conv.id, ctx.user.id, locked.last_seq],
    );
    if (conv.kind === 'DIRECT') {
      enqueueNotification(tx, {
        type: 'CHAT_DIRECT_MESSAGE_RECEIVED',
        recipientUserIds: await notifiedParticipantsOf(tx, conv.id, ctx.user.id, now),
        title: `New message from ${ctx.user.displayName}`,
        body: preview,
        data: { territoryId: access.territoryId, conversationId: conv.id, messageId: id },
        sourceKey: `chat-message:${id}:received`,
      });
    }
    await tx.flush();
    await execSql(tx, `select pg_notify('${CHAT_MESSAGE_CHANNEL}', ?)`, [JSON.stringify({ c: conv.id, m: id })]);
  });
  const row = await messageById(ctx.em, id);
  return toMessage(row!);
}

/** Participants with their read markers, to whoever may see the conversation. */
export async function listParticipants(ctx: ServiceContext, input: { conversationId: string }) {
  const { conv } = await openConversation(ctx, input.conversationId, 'view');
  const rows = await runHotRead<ParticipantRow>(ctx, participantsQuery(conv.id));
  return {
    conversationId: conv.id,
    participants: rows.map((r) => ({
      userId: r.user_id,
      role: r.role,
      joinedAtUtc: r.joined_at_utc,
      lastReadMessageId: r.last_read_message_id,
      lastReadAtUtc: r.last_read_at_utc,
      mutedUntilUtc: r.muted_until_utc,
    })),
  };
}

/** The group (400 for other kinds) and whether the caller owns it. */
async function openGroup(ctx: ServiceContext, conversationId: string) {
  const opened = await openConversation(ctx, conversationId, 'view');
  if (opened.conv.kind !== 'GROUP') throw badRequest('Participants can only be changed in groups.', 'NOT_A_GROUP');
  return { ...opened, owns: opened.conv.my_role === 'OWNER' || opened.access.isSystemAdmin };
}

/**
 * Invites a member of the territory into a group (its OWNER or SYSTEM_ADMIN; idempotent). Not a member: 400; a
 * block either way between owner and invitee: 403; a DISABLED group: 409.
 */
export async function addParticipant(ctx: ServiceContext, input: ParticipantInput): Promise<void> {
  const { conv, access, owns } = await openGroup(ctx, input.conversationId);
  if (!owns) throw forbidden('Only the owner of the group or a system admin can add participants.', 'NOT_GROUP_OWNER');
  if (conv.status === 'DISABLED') throw conflict('This group is disabled.', 'CONVERSATION_NOT_ACTIVE');
  const invitee = await directRecipientOf(ctx.em, input.userId, access.territoryId);
  if (!invitee) throw notFound('User');
  if (!invitee.isMember)
    throw badRequest('Only members of the territory can join its groups.', 'NOT_MEMBER', [{ field: 'userId', message: 'is not a member of the territory' }]);
  await assertNotBlocked(ctx.em, ctx.user.id, invitee.id);
  await ctx.em.transactional(async (tx) => {
    const added = await execSql<{ user_id: string }>(
      tx,
      `insert into chat_participant (conversation_id, user_id, role, joined_at_utc, last_read_seq) values (?, ?, 'MEMBER', ?, 0)
       on conflict do nothing returning user_id`,
      [conv.id, invitee.id, ctx.clock.now()],
    );
    // A repeated invitation changes nothing and notifies nobody; one after the person left is a new invitation.
    if (added.length === 0) return;
    enqueueNotification(tx, {
      type: 'CHAT_GROUP_INVITATION_RECEIVED',
      recipientUserIds: [invitee.id],
      title: `You were added to the chat group ${conv.name ?? ''}`.trim(),
      body: `${ctx.user.displayName} added you to the group "${conv.name ?? ''}" in ${access.territory.name}.`,
      data: { territoryId: access.territoryId, conversationId: conv.id },
      sourceKey: `chat-group:${conv.id}:invitation:${newId()}`,
    });
    await tx.flush();
  });
}

/** The owner (or SYSTEM_ADMIN) removes a participant, or a participant leaves; the owner cannot leave (409). */
export async function removeParticipant(ctx: ServiceContext, input: ParticipantInput): Promise<void> {
  const { conv, owns } = await openGroup(ctx, input.conversationId);
  if (!owns && input.userId !== ctx.user.id) throw forbidden('Only the owner of the group can remove other participants.', 'NOT_GROUP_OWNER');
  const [target] = await execSql<{ role: string }>(ctx.em, 'select role from chat_participant where conversation_id = ? and user_id = ?', [
    conv.id,
    input.userId,
  ]);
  // Removing who is not (or no longer) a participant changes nothing: an idempotent removal (the spec's 204).
  if (!target) return;
  if (target.role === 'OWNER') throw conflict('The owner cannot leave the group.', 'OWNER_CANNOT_LEAVE');
  await ctx.em.transactional(async (tx) => {
    await execSql(tx, 'delete from chat_participant where conversation_id = ? and user_id = ?', [conv.id, input.userId]);
    await announceAccessChange(tx, conv.id);
  });
}

/**
 * Moves the caller's read marker to the message (the newest when omitted); it never moves back. Channels keep a
 * marker row per reader; in groups and direct messages only participants have one (a SYSTEM_ADMIN reading is a no-op).
 */
export async function markRead(ctx: ServiceContext, input: MarkReadInput): Promise<void> {
  const { conv } = await openConversation(ctx, input.conversationId, 'read');
  let seq = Number(conv.last_seq);
  let messageId: string | null = null;
  if (input.messageId) {
    const found = await messageSeqOf(ctx.em, conv.id, input.messageId);
    if (found === null) throw notFound('Message');
    seq = found;
    messageId = input.messageId;
  } else if (seq > 0) {
    const [newest] = await execSql<{ id: string }>(ctx.em, 'select id from chat_message where conversation_id = ? and seq = ?', [conv.id, seq]);
    messageId = newest?.id ?? null;
  }
  const now = ctx.clock.now();
  const channel = conv.kind === 'TERRITORY_PUBLIC' || conv.kind === 'TERRITORY_RESIDENTS';
  if (channel) {
    await execSql(
      ctx.em,
      `insert into chat_participant (conversation_id, user_id, role, joined_at_utc, last_read_message_id, last_read_seq, last_read_at_utc)
       values (?, ?, 'MEMBER', ?, ?, ?, ?)
       on conflict (conversation_id, user_id) do update
          set last_read_message_id = excluded.last_read_message_id, last_read_seq = excluded.last_read_seq, last_read_at_utc = excluded.last_read_at_utc
        where chat_participant.last_read_seq <= excluded.last_read_seq`,
      [conv.id, ctx.user.id, now, messageId, seq, now],
    );
  } else {
    await execSql(
      ctx.em,
      'update chat_participant set last_read_message_id = ?, last_read_seq = ?, last_read_at_utc = ? where conversation_id = ? and user_id = ? and last_read_seq <= ?',
      [messageId, seq, now, conv.id, ctx.user.id, seq],
    );
  }
}

// ---- real time and other modules

/**
 * The read check of the live stream, with a fresh unit of work: the conversation, its sequence number now, the
 * senders hidden from the reader. Throws the same 404/403 as reading, and 409 for a DISABLED conversation (its
 * history stays readable, but nothing will ever arrive live).
 */
export async function openForReading(ctx: ServiceContext, conversationId: string) {
  const { conv, access } = await openConversation(ctx, conversationId, 'read');
  if (conv.status === 'DISABLED') throw conflict('This conversation is DISABLED: it has no live messages.', 'CONVERSATION_NOT_ACTIVE');
  return { lastSeq: Number(conv.last_seq), hidden: access.blockedUserIds };
}

export { messageSeqOf, toMessage };

/** The media reader of chat messages: media attached to a message is seen by whoever may read its conversation. */
export async function canSeeChatMessage(em: EntityManager, viewer: AuthUser, messageId: string): Promise<boolean> {
  const conversationId = await conversationOfMessage(em, messageId);
  if (!conversationId) return false;
  try {
    await openConversation({ em, user: viewer, sessionId: null } as ServiceContext, conversationId, 'read');
    return true;
  } catch (error) {
    if (error instanceof AppError) return false;
    throw error;
  }
}

/**
 * Account deletion: the person leaves every conversation (their read markers and memberships go; a group they own
 * passes to nobody and keeps its other participants). Their messages stay, authored by the anonymised account, so
 * the conversations of others keep their history; their attached media are erased by the media eraser.
 */
export const eraseChatParticipation: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from chat_participant where user_id = ?', [userId]);
};
