/** The reads other domains make of notifications; they never type SQL against the outbox themselves. */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';

/**
 * Notifications generated for a store in `[fromUtc, toUtc)` (the merchant's `notifications` meter): outbox messages
 * whose data names the store (ORDER_PAID, INQUIRY_RECEIVED), one per cause however many recipients it has.
 */
export async function storeNotificationCount(em: EntityManager, storeId: string, fromUtc: Date, toUtc: Date): Promise<number> {
  const [row] = await execSql<{ n: number }>(
    em,
    `select count(*)::int as n from outbox_message where data->>'storeId' = ? and created_at_utc >= ? and created_at_utc < ?`,
    [storeId, fromUtc, toUtc],
  );
  return row?.n ?? 0;
}
