/** SQL of the interests domain: other domains never type SQL against `user_interest` themselves. */
import type { SqlQuery } from '../../db/sql.js';

/** A user's tags, oldest first (at most ten: `MAX_INTERESTS_PER_USER`). */
export function interestsOfQuery(userId: string): SqlQuery {
  return { sql: 'select tag from user_interest where user_id = ?::uuid order by created_at_utc, id', params: [userId] };
}
