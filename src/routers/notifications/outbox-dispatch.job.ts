import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { execSql, pgArray } from '../../db/sql.js';
import { defineJob } from '../../platform/job.js';
import { newId } from '../../platform/ids.js';
import type { Realtime } from '../../realtime/realtime.js';
import { notificationPreferencesOf } from '../preferences/preferences.queries.js';
import { readConfigNumber } from '../system-config/system-config.queries.js';
import { ALWAYS_DELIVERED, type NotificationType } from '../../entities/notification.entity.js';
import { NOTIFICATION_CHANNEL } from './notifications.live.js';
import { OUTBOX_CHANNEL } from './outbox.js';

export const DISPATCH_BATCH_SIZE_KEY = 'Notifications:DispatchBatchSize';
const DEFAULT_BATCH_SIZE = 100;
/** Batches per run: a run ends even while rows keep arriving; the next nudge or schedule continues. */
const MAX_BATCHES_PER_RUN = 20;

export interface DispatchOptions {
  batchSize?: number;
  /**
   * Called after a message's notifications were inserted, before the message is marked processed, in the same
   * transaction. Tests throw here to stand for a dispatcher that dies mid-batch.
   */
  afterMessage?: (outboxMessageId: string) => void | Promise<void>;
}

export interface DispatchResult {
  /** Outbox rows marked processed. */
  messages: number;
  /** Notifications created (recipients already holding one for the same source are not counted). */
  delivered: number;
}

interface OutboxRow {
  id: string;
  type: NotificationType;
  recipient_user_ids: string[];
  title: string;
  body: string;
  data: Record<string, unknown>;
  source_key: string;
}

/**
 * Drains the outbox into notifications. Each batch is one transaction: it claims the oldest pending rows with
 * `for update skip locked` (a concurrent dispatcher takes other rows, never the same ones), inserts one
 * notification per recipient whose preference flag for the type is on (`on conflict do nothing` on
 * (source_key, user_id), so a re-run after any crash cannot deliver twice), `pg_notify`s each new one for the
 * real-time subscribers (sent by PostgreSQL only if the batch commits), and marks the rows processed. A crash
 * anywhere rolls the whole batch back; the next run redoes it.
 */
export async function dispatchOutbox(em: EntityManager, options: DispatchOptions = {}): Promise<DispatchResult> {
  const batchSize = options.batchSize ?? (await readConfigNumber(em, DISPATCH_BATCH_SIZE_KEY, DEFAULT_BATCH_SIZE));
  const total: DispatchResult = { messages: 0, delivered: 0 };
  for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
    const result = await em.fork().transactional((tx) => dispatchBatch(tx, Math.max(1, Math.floor(batchSize)), options));
    total.messages += result.messages;
    total.delivered += result.delivered;
    if (result.messages < batchSize) break;
  }
  return total;
}

async function dispatchBatch(em: EntityManager, batchSize: number, options: DispatchOptions): Promise<DispatchResult> {
  const rows = await execSql<OutboxRow>(
    em,
    `select id, type, recipient_user_ids, title, body, data, source_key
       from outbox_message
      where processed_at_utc is null
      order by created_at_utc, id
      limit ?
      for update skip locked`,
    [batchSize],
  );
  if (rows.length === 0) return { messages: 0, delivered: 0 };

  const preferences = await notificationPreferencesOf(
    em,
    rows.flatMap((r) => r.recipient_user_ids),
  );
  let delivered = 0;
  for (const row of rows) {
    const recipients = [...new Set(row.recipient_user_ids)].filter(
      (userId) => ALWAYS_DELIVERED.includes(row.type) || preferences.get(userId)?.[row.type] !== false,
    );
    if (recipients.length > 0) delivered += await insertNotifications(em, row, recipients);
    await options.afterMessage?.(row.id);
  }
  await execSql(em, 'update outbox_message set processed_at_utc = now() where id = any(?::uuid[])', [pgArray(rows.map((r) => r.id))]);
  return { messages: rows.length, delivered };
}

/** One statement per message: recipients that are no (longer) active users are skipped, not an error. */
async function insertNotifications(em: EntityManager, row: OutboxRow, recipients: string[]) {
  const ids = recipients.map(() => newId());
  const inserted = await execSql<{ id: string }>(
    em,
    `with input as (
       select * from unnest(?::uuid[], ?::uuid[]) as i(id, user_id)
     ), created as (
       insert into notification (id, created_at_utc, user_id, type, title, body, data, source_key, read_at_utc)
       select input.id, clock_timestamp(), input.user_id, ?, ?, ?, ?::jsonb, ?, null
         from input join app_user u on u.id = input.user_id and u.deleted_at_utc is null
       on conflict (source_key, user_id) do nothing
       returning id, user_id
     )
     select id, pg_notify(?, json_build_object('userId', user_id, 'notificationId', id)::text) from created`,
    [pgArray(ids), pgArray(recipients), row.type, row.title, row.body, JSON.stringify(row.data ?? {}), row.source_key, NOTIFICATION_CHANNEL],
  );
  return inserted.length;
}

/**
 * Starts a dispatch job whenever a committed transaction signals new outbox rows (see OutboxNotifySubscriber), or
 * the LISTEN connection comes back (a signal may have been lost meanwhile). Signals arriving together start one
 * job. Only processes that run workers call this.
 */
export function listenForOutboxSignals(realtime: Realtime, sendDispatchJob: () => Promise<unknown>, log: (message: string, error?: unknown) => void) {
  let scheduled = false;
  const nudge = () => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      sendDispatchJob().catch((error: unknown) => log('outbox: cannot start a dispatch job', error));
    }, 20).unref();
  };
  const off = realtime.on(OUTBOX_CHANNEL, nudge);
  const offReconnect = realtime.onReconnect(nudge);
  return () => {
    off();
    offReconnect();
  };
}

/**
 * Drains the notification outbox. Started right after a commit that wrote outbox rows (NOTIFY outbox_pending, see
 * `listenForOutboxSignals`); the per-minute schedule is the backstop. Polled often: a dispatch job is what turns a
 * committed outbox row into a delivered notification.
 */
export const outboxDispatchJob = defineJob({
  queue: 'outbox-dispatch',
  payload: z.object({}).strict(),
  schedule: '* * * * *',
  pollingIntervalSeconds: 0.5,
  handle: async ({ em }) => {
    await dispatchOutbox(em);
  },
});
