/** Reads of blocks that other domains need (feed, map, media and comments hide what the caller blocked). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';

/** Users the caller blocked: content by them is hidden from the caller. */
export async function blockedUserIdsOf(em: EntityManager, userId: string): Promise<string[]> {
  const rows = await execSql<{ blocked_user_id: string }>(em, 'select blocked_user_id from user_block where blocker_user_id = ?', [userId]);
  return rows.map((r) => r.blocked_user_id);
}
