/**
 * Reads of memberships: the caller's own (their lists) and those other domains need. Memberships are written only by
 * this domain's services (memberships.service.ts, residency-*.ts); everyone else reads through here.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, pgArray, type SqlQuery } from '../../db/sql.js';
import type { MembershipRole, TerritoryCapability } from '../../entities/membership.entity.js';

/**
 * Active RESIDENT members of the territory other than `exceptUserId` (one `user_id` column): who hears about new
 * content there. A statement, not ids: the outbox resolves it in the cause's transaction (`enqueueNotificationTo`).
 */
export function residentsQuery(territoryId: string, exceptUserId: string): SqlQuery {
  // Not those who blocked `exceptUserId` (the author of what is announced): its content is hidden from them.
  return {
    sql: `select m.user_id from territory_membership m join app_user u on u.id = m.user_id
           where m.territory_id = ?::uuid and m.role = 'RESIDENT' and m.user_id <> ?::uuid and u.deleted_at_utc is null
             and not exists (select 1 from user_block b where b.blocker_user_id = m.user_id and b.blocked_user_id = ?::uuid)`,
    params: [territoryId, exceptUserId, exceptUserId],
  };
}

/** Per territory (`territory_id`), how many residents it has (`n`): the validation percentage of assets. */
export function residentCountsQuery(territoryIds: string[]): SqlQuery {
  return {
    sql: `select territory_id, count(*)::int as n from territory_membership
           where territory_id = any(?::uuid[]) and role = 'RESIDENT' group by territory_id`,
    params: [pgArray([...new Set(territoryIds)])],
  };
}

/** A membership as its readers answer it: the entity's own property names, so `toMembershipOutput` takes either. */
export interface MembershipFacts {
  id: string;
  territoryId: string;
  userId: string;
  role: MembershipRole;
  /** Timestamps as the driver gives them (ISO strings through the ORM's pool): only their presence and instant count. */
  geoVerifiedAtUtc: string | null;
  documentVerifiedAtUtc: string | null;
  capabilities: TerritoryCapability[] | null;
  createdAtUtc: string;
}

const MEMBERSHIP_FACTS = `select m.id, m.territory_id as "territoryId", m.user_id as "userId", m.role, m.geo_verified_at_utc as "geoVerifiedAtUtc",
  m.document_verified_at_utc as "documentVerifiedAtUtc", m.capabilities, m.created_at_utc as "createdAtUtc" from territory_membership m`;

/** The user's memberships, oldest first (`territory_membership.user_id` index); of one territory when given. */
export function membershipsOfQuery(userId: string, territoryId?: string): SqlQuery {
  return territoryId
    ? { sql: `${MEMBERSHIP_FACTS} where m.territory_id = ?::uuid and m.user_id = ?::uuid`, params: [territoryId, userId] }
    : { sql: `${MEMBERSHIP_FACTS} where m.user_id = ?::uuid order by m.created_at_utc, m.id`, params: [userId] };
}

/** The territories where the user is RESIDENT (at most one, kept so by the residency lock). */
export async function residentTerritoryIdsOf(em: EntityManager, userId: string): Promise<string[]> {
  const rows = await execSql<{ territory_id: string }>(em, "select territory_id from territory_membership where user_id = ? and role = 'RESIDENT'", [userId]);
  return rows.map((r) => r.territory_id);
}

/** Active users holding CURATOR in the territory, other than `exceptUserId`, sorted. */
export async function curatorIdsOf(em: EntityManager, territoryId: string, exceptUserId: string): Promise<string[]> {
  const rows = await execSql<{ id: string }>(
    em,
    `select m.user_id as id from territory_membership m join app_user u on u.id = m.user_id
      where m.territory_id = ? and 'CURATOR' = any(m.capabilities) and m.user_id <> ? and u.deleted_at_utc is null`,
    [territoryId, exceptUserId],
  );
  return rows.map((r) => r.id).sort();
}

/**
 * Of `userIds`, the active users other than `exceptUserId` who may approve residency in the territory: its curators
 * and verified residents (RESIDENT with a residency verification), and system admins. Sorted.
 */
export async function residencyApproversAmong(em: EntityManager, territoryId: string, exceptUserId: string, userIds: string[]): Promise<string[]> {
  const rows = await execSql<{ id: string }>(
    em,
    `select u.id from app_user u
      where u.id = any(?::uuid[]) and u.id <> ? and u.deleted_at_utc is null
        and (exists (select 1 from territory_membership m
                      where m.user_id = u.id and m.territory_id = ?
                        and ('CURATOR' = any(m.capabilities)
                             or (m.role = 'RESIDENT' and (m.geo_verified_at_utc is not null or m.document_verified_at_utc is not null))))
             or exists (select 1 from user_permission p where p.user_id = u.id and p.permission = 'SYSTEM_ADMIN'))`,
    [pgArray([...new Set(userIds)]), exceptUserId, territoryId],
  );
  return rows.map((r) => r.id).sort();
}
