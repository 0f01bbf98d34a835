/**
 * Reads of memberships that other domains need. Memberships are written only by this domain's services
 * (memberships.service.ts, residency-*.ts); everyone else reads through here.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';

/** Active RESIDENT members of the territory other than `exceptUserId`: who hears about new content there. */
export async function residentIdsOf(em: EntityManager, territoryId: string, exceptUserId: string): Promise<string[]> {
  const rows = await execSql<{ user_id: string }>(
    em,
    `select m.user_id from territory_membership m join app_user u on u.id = m.user_id
      where m.territory_id = ? and m.role = 'RESIDENT' and m.user_id <> ? and u.deleted_at_utc is null`,
    [territoryId, exceptUserId],
  );
  return rows.map((r) => r.user_id);
}
