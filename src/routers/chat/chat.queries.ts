/**
 * SQL of the chat reads: conversations with the caller's unread count, message pages by sequence number (the cursor),
 * and the few facts about other users that starting a direct message needs.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, type HotReadSource, isoColumn, pgArray, runHotRead, type SqlQuery } from '../../db/sql.js';
import type { ConversationKind, ConversationStatus, ParticipantRole } from '../../entities/chat.entity.js';
import type { MediaType } from '../../entities/media.entity.js';
import type { Visibility } from '../../entities/preferences.entity.js';
import { contactVisibilityOf } from '../preferences/preferences.queries.js';
import { MESSAGES_LIMIT_DEFAULT } from './chat.schemas.js';

/** A conversation as access checks see it: its facts and the viewer's participation, none of its messages' content. */
export interface ConversationAccessRow {
  id: string;
  territory_id: string;
  kind: ConversationKind;
  status: ConversationStatus;
  name: string | null;
  description: string | null;
  created_by_user_id: string | null;
  created_at_utc: string;
  last_seq: number;
  /** The viewer's participation (null: none). */
  my_role: ParticipantRole | null;
}

/**
 * A conversation as a summary shows it. What its messages tell (the time and text of the newest, how many there are,
 * how many the viewer has not read) is the viewer's only if they may read them: otherwise null, null, 0 and 0.
 */
export interface ConversationRow extends Omit<ConversationAccessRow, 'last_seq'> {
  last_message_at_utc: string | null;
  last_message_preview: string | null;
  message_count: number;
  unread_count: number;
}

/** The longest preview of a conversation's newest message (a longer text is cut, with an ellipsis). */
export const CHAT_PREVIEW_MAX = 200;

/**
 * Conversations with the viewer's role and, to a reader, what their messages tell: the unread count is the messages
 * of others after the viewer's read marker, counted on the (conversation_id, seq) index. A reader is a participant,
 * or anyone when the service says the viewer reads these conversations without taking part (`readsUnjoined`: a
 * SYSTEM_ADMIN, a channel's readers); for anyone else (a member discovering an invite-only group, a curator
 * deciding one) the content stays in the database and the history is not counted. A viewer who blocked someone
 * (`hiding`) sees no trace of their messages: the newest message shown is the newest of anyone else (read backwards
 * on the same index, cut as the stored preview is), and none of theirs counts as unread.
 */
function conversationSelect(hiding: boolean) {
  const notHidden = 'not (m.sender_user_id = any(?::uuid[]))';
  const newestAt = hiding ? 'n.created_at_utc' : 'c.last_message_at_utc';
  const preview = hiding
    ? `case when length(n.text) <= ${CHAT_PREVIEW_MAX} then n.text else left(n.text, ${CHAT_PREVIEW_MAX - 1}) || '…' end`
    : 'c.last_message_preview';
  return {
    newestAt,
    sql: `
  select c.id, c.territory_id, c.kind, c.status, c.name, c.description, c.created_by_user_id,
         ${isoColumn('c.created_at_utc')} as created_at_utc,
         case when v.reads then ${isoColumn(newestAt)} end as last_message_at_utc,
         case when v.reads then ${preview} end as last_message_preview,
         case when v.reads then c.last_seq else 0 end as message_count,
         p.role as my_role,
         case when v.reads then
           (select count(*)::int from chat_message m
             where m.conversation_id = c.id and m.seq > coalesce(p.last_read_seq, 0) and m.sender_user_id <> ?${hiding ? ` and ${notHidden}` : ''})
         else 0 end as unread_count
    from chat_conversation c
    left join chat_participant p on p.conversation_id = c.id and p.user_id = ?
    cross join lateral (select p.user_id is not null or ?::boolean as reads) v${
      hiding
        ? `
    left join lateral (select m.created_at_utc, m.text from chat_message m
                        where m.conversation_id = c.id and ${notHidden} order by m.seq desc limit 1) n on true`
        : ''
    }`,
    /** The parameters of `sql`, in their order; the query's own follow. */
    params: (viewer: ConversationViewer) => {
      const hidden = pgArray(viewer.hiddenSenders);
      return hiding ? [viewer.id, hidden, viewer.id, viewer.readsUnjoined, hidden] : [viewer.id, viewer.id, viewer.readsUnjoined];
    },
  };
}
const CONVERSATION_SELECT = conversationSelect(false);
const CONVERSATION_SELECT_HIDING = conversationSelect(true);
const selectFor = (viewer: ConversationViewer) => (viewer.hiddenSenders.length > 0 ? CONVERSATION_SELECT_HIDING : CONVERSATION_SELECT);

/**
 * The access check of every chat call and of every wake of a live stream reads this: the unread count (a scan of the
 * messages after the reader's marker, the whole history for a reader without one) is left to the reads that answer
 * it, or 1000 subscribers of a large channel would each count its history on every message; the newest message's
 * text and time, to the summaries that may show them.
 */
const CONVERSATION_ACCESS_SELECT = `
  select c.id, c.territory_id, c.kind, c.status, c.name, c.description, c.created_by_user_id,
         ${isoColumn('c.created_at_utc')} as created_at_utc, c.last_seq, p.role as my_role
    from chat_conversation c
    left join chat_participant p on p.conversation_id = c.id and p.user_id = ?`;

export function conversationAccessQuery(id: string, viewerId: string): SqlQuery {
  return { sql: `${CONVERSATION_ACCESS_SELECT} where c.id = ?`, params: [viewerId, id] };
}

/** A key lookup (the conversation, the viewer's participation): prepared, its generic plan is the custom one. */
export async function conversationForAccess(source: HotReadSource, id: string, viewerId: string): Promise<ConversationAccessRow | null> {
  const [row] = await runHotRead<ConversationAccessRow>(source, conversationAccessQuery(id, viewerId), { prepared: true });
  return row ?? null;
}

/** Who views the summaries, whether they read them without being a participant, and whom they blocked (see `conversationSelect`). */
export interface ConversationViewer {
  id: string;
  readsUnjoined: boolean;
  hiddenSenders: readonly string[];
}

export function conversationByIdQuery(id: string, viewer: ConversationViewer): SqlQuery {
  const select = selectFor(viewer);
  return { sql: `${select.sql} where c.id = ?`, params: [...select.params(viewer), id] };
}

/** Most recently active first; conversations the viewer may not read come after, in id order, their activity withheld. */
export function territoryConversationsQuery(
  territoryId: string,
  kinds: ConversationKind[],
  statuses: ConversationStatus[],
  viewer: ConversationViewer,
): SqlQuery {
  const select = selectFor(viewer);
  return {
    sql: `${select.sql}
     where c.territory_id = ? and c.kind = any(?::text[]) and c.status = any(?::text[])
     order by c.kind desc, case when v.reads then ${select.newestAt} end desc nulls last, c.id`,
    params: [...select.params(viewer), territoryId, pgArray(kinds), pgArray(statuses)],
  };
}

export interface MessageRow {
  id: string;
  conversation_id: string;
  seq: number;
  sender_user_id: string;
  text: string;
  media_id: string | null;
  media_type: MediaType | null;
  created_at_utc: string;
}

const MESSAGE_SELECT = `
  select m.id, m.conversation_id, m.seq, m.sender_user_id, m.text, m.media_id, a.media_type,
         ${isoColumn('m.created_at_utc')} as created_at_utc
    from chat_message m
    left join media_asset a on a.id = m.media_id and a.deleted_at_utc is null`;

/** A page of the default size, with the row that says whether another page follows. */
const NAMED_PAGE_ROWS = MESSAGES_LIMIT_DEFAULT + 1;

/**
 * Whether `messagesBeforeQuery` writes the page as a named statement's text, to run prepared: a page of the default
 * size, the common read (a channel opened). Its text keeps one generic plan: the conversation, the bound and the
 * hidden senders (a reader who blocked someone) are InitPlan values, estimated alike with and without their values,
 * and the limit is written in; with them as parameters PostgreSQL planned every call (0 generic plans of 600), a third
 * of the page's CPU. Other sizes keep the parameters, unnamed (a literal limit per size would take a statement name
 * each).
 */
export const isNamedMessagePage = (limit: number) => limit === NAMED_PAGE_ROWS;

/**
 * One page, newest first, of the messages with `seq < beforeSeq` (all when null), without those of `hiddenSenders`.
 * Walks the unique (conversation_id, seq) index backwards: a message committed meanwhile has a higher seq than any
 * already served, so pages never repeat or skip one.
 */
export function messagesBeforeQuery(conversationId: string, beforeSeq: number | null, hiddenSenders: readonly string[], limit: number): SqlQuery {
  if (isNamedMessagePage(limit)) {
    const hidden = hiddenSenders.length > 0;
    return {
      sql: `${MESSAGE_SELECT}
       where m.conversation_id = (select ?::uuid) and m.seq < (select ?::int)${hidden ? ' and not (m.sender_user_id = any((select ?::uuid[])::uuid[]))' : ''}
       order by m.seq desc
       limit ${NAMED_PAGE_ROWS}`,
      params: [conversationId, beforeSeq ?? 2147483647, ...(hidden ? [pgArray(hiddenSenders)] : [])],
    };
  }
  return {
    sql: `${MESSAGE_SELECT}
     where m.conversation_id = ? and m.seq < ? and not (m.sender_user_id = any(?::uuid[]))
     order by m.seq desc
     limit ?`,
    params: [conversationId, beforeSeq ?? 2147483647, pgArray(hiddenSenders), limit],
  };
}

/** Messages after `afterSeq`, oldest first: the real-time stream and its catch-up. */
export function messagesAfterQuery(conversationId: string, afterSeq: number, hiddenSenders: readonly string[], limit: number): SqlQuery {
  return {
    sql: `${MESSAGE_SELECT}
     where m.conversation_id = ? and m.seq > ? and not (m.sender_user_id = any(?::uuid[]))
     order by m.seq
     limit ?`,
    params: [conversationId, afterSeq, pgArray(hiddenSenders), limit],
  };
}

/** The first sequence number at or after an instant (the boundary of a `beforeCreatedAtUtc` page). */
export function firstSeqAtOrAfterQuery(conversationId: string, at: Date): SqlQuery {
  return {
    sql: `select seq from chat_message where conversation_id = ? and created_at_utc >= ? order by created_at_utc, seq limit 1`,
    params: [conversationId, at],
  };
}

/** The sequence number of a message of the conversation (a page's cursor, a read marker, a resumed stream). */
export function messageSeqQuery(conversationId: string, messageId: string): SqlQuery {
  return { sql: 'select seq from chat_message where id = ? and conversation_id = ?', params: [messageId, conversationId] };
}

export async function messageSeqOf(source: HotReadSource, conversationId: string, messageId: string): Promise<number | null> {
  const [row] = await runHotRead<{ seq: number }>(source, messageSeqQuery(conversationId, messageId), { prepared: true });
  return row ? Number(row.seq) : null;
}

export async function messageById(em: EntityManager, messageId: string): Promise<MessageRow | null> {
  const [row] = await execSql<MessageRow>(em, `${MESSAGE_SELECT} where m.id = ?`, [messageId]);
  return row ?? null;
}

export async function conversationById(source: HotReadSource, id: string, viewer: ConversationViewer): Promise<ConversationRow | null> {
  const [row] = await runHotRead<ConversationRow>(source, conversationByIdQuery(id, viewer), { prepared: true });
  return row ?? null;
}

export interface ParticipantRow {
  user_id: string;
  role: ParticipantRole;
  joined_at_utc: string;
  last_read_message_id: string | null;
  last_read_at_utc: string | null;
  muted_until_utc: string | null;
}

export function participantsQuery(conversationId: string): SqlQuery {
  return {
    sql: `select user_id, role, ${isoColumn('joined_at_utc')} as joined_at_utc, last_read_message_id,
                 ${isoColumn('last_read_at_utc')} as last_read_at_utc, ${isoColumn('muted_until_utc')} as muted_until_utc
            from chat_participant where conversation_id = ? order by joined_at_utc, user_id`,
    params: [conversationId],
  };
}

/**
 * The participants other than the sender whose conversation is not muted at `now` (`muted_until_utc` unset or
 * passed): who a new message notifies.
 */
export async function notifiedParticipantsOf(em: EntityManager, conversationId: string, senderId: string, now: Date): Promise<string[]> {
  const rows = await execSql<{ user_id: string }>(
    em,
    'select user_id from chat_participant where conversation_id = ? and user_id <> ? and (muted_until_utc is null or muted_until_utc <= ?) order by user_id',
    [conversationId, senderId, now],
  );
  return rows.map((r) => r.user_id);
}

/** The conversation of a message (the media reader of chat attachments starts from the message). */
export async function conversationOfMessage(em: EntityManager, messageId: string): Promise<string | null> {
  const [row] = await execSql<{ conversation_id: string }>(em, 'select conversation_id from chat_message where id = ?', [messageId]);
  return row?.conversation_id ?? null;
}

// ---- facts about another user that a direct message (or an invitation) needs.

export interface ChatUserFacts {
  id: string;
  contactVisibility: Visibility;
  /** Whether they have a membership (visitor or resident) in the territory asked about. */
  isMember: boolean;
}

/**
 * An active (not deleted) user, their contact visibility (from the preferences domain's reads) and whether they are
 * a member of `territoryId`. The users domain has no query module; this existence check is chat's only SQL on its
 * table.
 */
export async function directRecipientOf(em: EntityManager, userId: string, territoryId: string): Promise<ChatUserFacts | null> {
  const [row] = await execSql<{ id: string; is_member: boolean }>(
    em,
    `select u.id, exists (select 1 from territory_membership m where m.user_id = u.id and m.territory_id = ?) as is_member
       from app_user u where u.id = ? and u.deleted_at_utc is null`,
    [territoryId, userId],
  );
  return row ? { id: row.id, contactVisibility: await contactVisibilityOf(em, row.id), isMember: row.is_member } : null;
}
