import { execSql, type HotReadSource, runHotRead } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
import type { NotificationType } from '../../entities/notification.entity.js';
import { forbidden, notFound } from '../../platform/problems.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import type { NotificationOutput } from './notifications.schemas.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

interface NotificationRow {
  id: string;
  type: NotificationType;
  title: string;
  body: string;
  data: Record<string, unknown> | null;
  created_at_utc: Date;
  read_at_utc: Date | null;
}

const COLUMNS = 'id, type, title, body, data, created_at_utc, read_at_utc';

function toOutput(r: NotificationRow): NotificationOutput {
  return {
    id: r.id,
    type: r.type,
    title: r.title,
    body: r.body,
    data: r.data ?? {},
    createdAtUtc: new Date(r.created_at_utc).toISOString(),
    readAtUtc: r.read_at_utc ? new Date(r.read_at_utc).toISOString() : null,
  };
}

/** The caller's notifications, newest first (index notification_user_created_idx). */
export async function listMine(ctx: ServiceContext, input: { skip: number; take: number }) {
  const rows = await runHotRead<NotificationRow>(ctx, {
    sql: `select ${COLUMNS} from notification where user_id = ? order by created_at_utc desc, id desc limit ? offset ?`,
    params: [ctx.user.id, input.take, input.skip],
  });
  return rows.map(toOutput);
}

export async function pageMine(ctx: ServiceContext, input: { pageNumber: number; pageSize: number }) {
  const { pageNumber, pageSize } = input;
  const { offset, limit } = pageOffset(pageNumber, pageSize);
  const [rows, count] = await Promise.all([
    listMine(ctx, { skip: offset, take: limit }),
    runHotRead<{ n: string }>(ctx, { sql: 'select count(*)::text as n from notification where user_id = ?', params: [ctx.user.id] }, { prepared: true }),
  ]);
  return toPage(rows, Number(count[0]?.n ?? 0), pageNumber, pageSize);
}

/**
 * Marks one of the caller's notifications read; reading it again keeps the first read time. Someone else's
 * notification is indistinguishable from a missing one (404).
 */
export async function markRead(ctx: ServiceContext, input: { id: string }) {
  const { em } = ctx;
  const userId = ctx.user.id;
  const { id } = input;
  const rows = await execSql<NotificationRow>(
    em,
    `update notification set read_at_utc = coalesce(read_at_utc, now()) where id = ? and user_id = ? returning ${COLUMNS}`,
    [id, userId],
  );
  const row = rows[0];
  if (row) return toOutput(row);
  // The spec's 403 for a caller who is not the owner (Errors): whose it is stays unsaid, and nothing is written.
  const exists = await execSql<{ one: number }>(em, 'select 1 as one from notification where id = ?', [id]);
  if (exists.length > 0) throw forbidden('This notification is addressed to another user.');
  throw notFound('Notification');
}

/**
 * One of the user's notifications, or null (the real-time stream loads what a NOTIFY names, for each subscriber: a
 * key lookup, prepared).
 */
export async function findMine(source: HotReadSource, userId: string, id: string) {
  const rows = await runHotRead<NotificationRow>(
    source,
    { sql: `select ${COLUMNS} from notification where id = ? and user_id = ?`, params: [id, userId] },
    { prepared: true },
  );
  return rows[0] ? toOutput(rows[0]) : null;
}

/**
 * The user's notifications created after `afterId` (ids are time-ordered UUIDv7), oldest first: what a
 * reconnecting subscriber missed.
 */
export async function listMineAfter(source: HotReadSource, userId: string, afterId: string, limit: number) {
  const rows = await runHotRead<NotificationRow>(source, {
    sql: `select ${COLUMNS} from notification where user_id = ? and id > ? order by id limit ?`,
    params: [userId, afterId, limit],
  });
  return rows.map(toOutput);
}

/** The user's notifications created since `since`, oldest first (catch-up when nothing was delivered yet). */
export async function listMineSince(source: HotReadSource, userId: string, since: Date, limit: number) {
  const rows = await runHotRead<NotificationRow>(source, {
    sql: `select ${COLUMNS} from notification where user_id = ? and created_at_utc >= ? order by id limit ?`,
    params: [userId, since, limit],
  });
  return rows.map(toOutput);
}

/** Account deletion: the user's notifications go, and undelivered ones no longer name them as a recipient. */
export const eraseNotifications: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from notification where user_id = ?', [userId]);
  await execSql(
    em,
    'update outbox_message set recipient_user_ids = array_remove(recipient_user_ids, ?::text) where processed_at_utc is null and ?::text = any(recipient_user_ids)',
    [userId, userId],
  );
};
