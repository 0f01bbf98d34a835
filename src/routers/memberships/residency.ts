/**
 * Who is RESIDENT where: the one writer of membership roles. Every change of a user's residency takes the user's
 * residency lock first (so a user holds at most one RESIDENT membership), then row-locks the memberships it
 * changes, the lock every other residency writer (geo verification, documents, decisions) takes.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, pgArray } from '../../db/sql.js';
import { newId } from '../../platform/ids.js';
import { conflict } from '../../platform/problems.js';
import { cancelPendingWorkItems } from '../work-items/work-items.service.js';
import { residentTerritoryIdsOf } from './memberships.queries.js';

/** Serializes every change of one user's residency (approvals, transfers), until the transaction ends. */
export const lockResidency = (em: EntityManager, userId: string) =>
  execSql(em, 'select pg_advisory_xact_lock(hashtextextended(?, 0))', [`residency:${userId}`]);

/**
 * Makes the user RESIDENT of the territory with ResidencyVerification NONE (a membership that was RESIDENT already
 * keeps its verifications). Someone RESIDENT elsewhere keeps that residency and is refused (409) unless this is a
 * transfer: then the old memberships become VISITOR without their verifications (they vouched for the old
 * address) and their pending residency documents are cancelled. Runs in the caller's transaction; answers the
 * territories the user stopped being RESIDENT of.
 */
export async function grantResidency(em: EntityManager, grant: { userId: string; territoryId: string; transfer: boolean; at: Date }): Promise<string[]> {
  const { userId, territoryId } = grant;
  await lockResidency(em, userId);
  const elsewhere = (await residentTerritoryIdsOf(em, userId)).filter((id) => id !== territoryId);
  if (elsewhere.length > 0) {
    if (!grant.transfer) {
      throw conflict('The requester is already RESIDENT of another territory and must transfer their residency.', 'RESIDENT_ELSEWHERE');
    }
    const old = await execSql<{ id: string }>(
      em,
      `select id from territory_membership where user_id = ? and territory_id = any(?::uuid[]) and role = 'RESIDENT' for update`,
      [userId, pgArray(elsewhere)],
    );
    await execSql(
      em,
      `update territory_membership set role = 'VISITOR', geo_verified_at_utc = null, document_verified_at_utc = null where id = any(?::uuid[])`,
      [pgArray(old.map((m) => m.id))],
    );
    // Their pending document checks are moot now (membership rows locked first, then work items, as elsewhere).
    await cancelPendingWorkItems(em, {
      type: 'RESIDENCY_VERIFICATION',
      subjectIds: old.map((m) => m.id),
      notes: 'The member transferred their residency.',
      at: grant.at,
    });
  }
  await execSql(
    em,
    `insert into territory_membership (id, created_at_utc, territory_id, user_id, role, capabilities)
     values (?, ?, ?, ?, 'RESIDENT', '{}')
     on conflict (territory_id, user_id) do update set
       role = 'RESIDENT',
       geo_verified_at_utc = case when territory_membership.role = 'RESIDENT' then territory_membership.geo_verified_at_utc end,
       document_verified_at_utc = case when territory_membership.role = 'RESIDENT' then territory_membership.document_verified_at_utc end`,
    [newId(), grant.at, territoryId, userId],
  );
  return elsewhere;
}
