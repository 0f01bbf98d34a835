import { execSql } from '../../db/sql.js';
import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineJob } from '../../platform/job.js';

/**
 * Deletes expired 2FA challenges and refresh tokens, and rate-limit counters whose window ended long ago (a
 * counter row is reused while its caller keeps calling). Idempotent: a second run finds nothing to delete.
 */
export async function runAuthCleanup(em: EntityManager) {
  await execSql(em, `delete from two_factor_challenge where expires_at_utc < now() - interval '1 day'`);
  await execSql(em, `delete from refresh_token where expires_at_utc < now() - interval '1 day'`);
  await execSql(em, `delete from rate_limit_counter where window_started_at_utc < now() - interval '1 hour'`);
}

export const authCleanupJob = defineJob({
  queue: 'auth-cleanup',
  payload: z.object({}).strict(),
  schedule: '*/15 * * * *',
  handle: ({ em }) => runAuthCleanup(em),
});
