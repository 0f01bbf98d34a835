/** Reads of blocks that other domains need (feed, map, media and comments hide what the caller blocked). */
import { type HotReadSource, runHotRead } from '../../db/sql.js';

/**
 * Users the caller blocked: content by them is hidden from the caller. A key lookup, prepared (inside a transaction
 * it runs on the transaction's connection). Where the caller's territory access was read, its `blockedUserIds`
 * already holds them.
 */
export async function blockedUserIdsOf(source: HotReadSource, userId: string): Promise<string[]> {
  const rows = await runHotRead<{ blocked_user_id: string }>(
    source,
    { sql: 'select blocked_user_id from user_block where blocker_user_id = ?', params: [userId] },
    { prepared: true },
  );
  return rows.map((r) => r.blocked_user_id);
}
