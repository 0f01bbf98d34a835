import { ChangeSetType, type EntityManager, type EventSubscriber, type FlushEventArgs } from '@mikro-orm/postgresql';
import { execSql, type SqlQuery } from '../../db/sql.js';
import { NOTIFICATION_TYPES, type NotificationType, OutboxMessage } from '../../entities/notification.entity.js';
import { newId } from '../../platform/ids.js';

/** PostgreSQL channel that tells the dispatcher workers "outbox rows were committed". */
export const OUTBOX_CHANNEL = 'outbox_pending';

const TITLE_MAX = 200;
const BODY_MAX = 2000;

export interface OutgoingNotification {
  type: NotificationType;
  recipientUserIds: string[];
  title: string;
  body: string;
  /** Ids of what caused it (territoryId, joinRequestId, postId...); clients link with them. */
  data: Record<string, unknown>;
  /** Identifies the cause, e.g. `join-request:<id>:received`: delivery is unique per (sourceKey, recipient). */
  sourceKey: string;
}

// Titles and bodies are built from user content; a long one is shortened rather than failing the cause.
const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/**
 * Persists ONE outbox row for the notification. It is only `em.persist`ed: the caller's flush or transaction
 * commits it together with the change that causes it (and a rollback drops both). Returns null, writing nothing,
 * when there is no recipient.
 */
export function enqueueNotification(em: EntityManager, n: OutgoingNotification) {
  if (!NOTIFICATION_TYPES.includes(n.type)) throw new Error(`Unknown notification type ${String(n.type)}`);
  const recipientUserIds = [...new Set(n.recipientUserIds)];
  if (recipientUserIds.length === 0) return null;
  return em.create(OutboxMessage, {
    type: n.type,
    recipientUserIds,
    title: clip(n.title, TITLE_MAX),
    body: clip(n.body, BODY_MAX),
    data: n.data,
    sourceKey: n.sourceKey,
    processedAtUtc: null,
  });
}

/**
 * `enqueueNotification` for the recipients a statement selects (`recipients`: one column of user ids), resolved by
 * PostgreSQL in the cause's transaction: a territory's residents are thousands of ids, which read into the process
 * and sent back as the row's array cost a post in a territory of 5,000 residents ~30 ms of API CPU
 * (bench/PROFILE.md). Writes nothing when the statement selects nobody; the NOTIFY is part of the transaction, as
 * `OutboxNotifySubscriber` sends it for rows the ORM flushes. Awaited: the row is written now, not at the flush.
 */
export async function enqueueNotificationTo(em: EntityManager, recipients: SqlQuery, n: Omit<OutgoingNotification, 'recipientUserIds'>): Promise<void> {
  if (!NOTIFICATION_TYPES.includes(n.type)) throw new Error(`Unknown notification type ${String(n.type)}`);
  const written = await execSql<{ id: string }>(
    em,
    `insert into outbox_message (id, created_at_utc, type, recipient_user_ids, title, body, data, source_key, processed_at_utc)
     select ?::uuid, ?, ?, r.ids, ?, ?, ?::jsonb, ?, null
       from (select array(select x.user_id::text from (${recipients.sql}) x) as ids) r
      where cardinality(r.ids) > 0
     returning id`,
    [newId(), new Date(), n.type, clip(n.title, TITLE_MAX), clip(n.body, BODY_MAX), JSON.stringify(n.data), n.sourceKey, ...recipients.params],
  );
  if (written.length > 0) await execSql(em, `select pg_notify('${OUTBOX_CHANNEL}', '')`);
}

/**
 * After a flush that inserted outbox rows, sends `NOTIFY outbox_pending`. Inside a transaction the NOTIFY is part
 * of it, so PostgreSQL delivers it exactly when the rows become visible (and never after a rollback); a flush
 * outside a transaction has already committed, so it is sent at once. Workers listening on the channel start a
 * dispatch job; the per-minute schedule is the backstop for a missed signal.
 */
export class OutboxNotifySubscriber implements EventSubscriber {
  async afterFlush({ em, uow }: FlushEventArgs) {
    const created = uow.getChangeSets().some((cs) => cs.type === ChangeSetType.CREATE && cs.meta.className === OutboxMessage.meta.className);
    if (!created) return;
    await execSql(em as EntityManager, `select pg_notify('${OUTBOX_CHANNEL}', '')`);
  }
}
