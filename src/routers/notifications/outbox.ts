import { ChangeSetType, type EntityManager, type EventSubscriber, type FlushEventArgs } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import { NOTIFICATION_TYPES, type NotificationType, OutboxMessage } from '../../entities/notification.entity.js';

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
