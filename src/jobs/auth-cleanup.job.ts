import type { EntityManager } from '@mikro-orm/postgresql';

/** Deletes expired 2FA challenges and refresh tokens. Idempotent: a second run finds nothing to delete. */
export async function runAuthCleanup(em: EntityManager) {
  const connection = em.getConnection();
  await connection.execute(`delete from two_factor_challenge where expires_at_utc < now() - interval '1 day'`);
  await connection.execute(`delete from refresh_token where expires_at_utc < now() - interval '1 day'`);
}
