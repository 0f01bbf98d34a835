import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import { AppError } from '../../platform/problems.js';
import { readConfigNumber } from '../system-config/system-config.queries.js';

/** The system setting of the per-user storage quota, and its default (1 GiB). */
export const USER_QUOTA_KEY = 'Media:UserQuotaBytes';
export const DEFAULT_USER_QUOTA_BYTES = 1024 * 1024 * 1024;

function formatSize(bytes: number) {
  const MB = 1024 * 1024;
  if (bytes >= 1024 * MB) return `${Math.round((bytes / (1024 * MB)) * 100) / 100} GB`;
  if (bytes >= MB) return `${Math.round((bytes / MB) * 100) / 100} MB`;
  return `${bytes} bytes`;
}

/**
 * Bytes a user holds in storage: their media not deleted (marked-deleted media are being purged and do not count)
 * and their evidence documents (identity and residency uploads).
 */
export async function storedBytesOf(em: EntityManager, userId: string): Promise<number> {
  const [row] = await execSql<{ total: string | number }>(
    em,
    `select (select coalesce(sum(size_bytes), 0) from media_asset where uploaded_by_user_id = ? and deleted_at_utc is null)
          + (select coalesce(sum(size_bytes), 0) from evidence where user_id = ?) as total`,
    [userId, userId],
  );
  return Number(row?.total ?? 0);
}

/**
 * 413 `STORAGE_QUOTA_EXCEEDED` when storing `sizeBytes` more would take the user past `Media:UserQuotaBytes`.
 * Without the lock of `reserveStorage` this is only a first check (before the bytes are copied to storage).
 */
export async function assertStorageQuota(em: EntityManager, userId: string, sizeBytes: number): Promise<void> {
  const quota = await readConfigNumber(em, USER_QUOTA_KEY, DEFAULT_USER_QUOTA_BYTES);
  const used = await storedBytesOf(em, userId);
  if (used + sizeBytes > quota) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      'STORAGE_QUOTA_EXCEEDED',
      `Storing this file (${formatSize(sizeBytes)}) would exceed your storage quota of ${formatSize(quota)}: ${formatSize(used)} are in use. ` +
        'Delete media you no longer need, then try again.',
    );
  }
}

/**
 * In the transaction that inserts the row of a stored file: takes the user's storage lock (held until commit), then
 * checks the quota. Concurrent uploads of one user therefore check one after the other, each seeing the rows the
 * earlier ones committed, and cannot pass together when together they exceed the quota.
 */
export async function reserveStorage(tx: EntityManager, userId: string, sizeBytes: number): Promise<void> {
  await execSql(tx, 'select pg_advisory_xact_lock(hashtextextended(?, 0))', [`storage-quota:${userId}`]);
  await assertStorageQuota(tx, userId, sizeBytes);
}
