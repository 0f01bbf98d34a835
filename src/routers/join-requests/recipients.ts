import type { EntityManager } from '@mikro-orm/postgresql';

const ids = (rows: { id: string }[]) => rows.map((r) => r.id).sort();

/**
 * A membership row `m` that makes its user eligible in its territory: CURATOR, or a verified resident (RESIDENT
 * with a residency verification). Shared by addressing and deciding so both apply the same rule.
 */
const ELIGIBLE_MEMBERSHIP = `('CURATOR' = any(m.capabilities)
  or (m.role = 'RESIDENT' and (m.geo_verified_at_utc is not null or m.document_verified_at_utc is not null)))`;

/**
 * Who a join request is addressed to (rule 3: nobody self-approves, the requester is never a recipient).
 * Of the requested users, only the eligible ones count: verified residents of the territory (RESIDENT with a
 * residency verification), its curators, or a system admin. With none given or none eligible the request goes
 * to the territory's curators; with no curator, to the system admins. Unknown or deleted users are dropped.
 */
export async function resolveRecipients(em: EntityManager, territoryId: string, requesterUserId: string, requested: string[]): Promise<string[]> {
  if (requested.length > 0) {
    const eligible = await em.execute<{ id: string }[]>(
      `select u.id from app_user u
        where u.id = any(array[?]::uuid[]) and u.id <> ? and u.deleted_at_utc is null
          and (exists (select 1 from territory_membership m where m.user_id = u.id and m.territory_id = ? and ${ELIGIBLE_MEMBERSHIP})
               or exists (select 1 from user_permission p where p.user_id = u.id and p.permission = 'SYSTEM_ADMIN'))`,
      [[...new Set(requested)], requesterUserId, territoryId],
    );
    if (eligible.length > 0) return ids(eligible);
  }
  const curators = await em.execute<{ id: string }[]>(
    `select m.user_id as id from territory_membership m join app_user u on u.id = m.user_id
      where m.territory_id = ? and 'CURATOR' = any(m.capabilities) and m.user_id <> ? and u.deleted_at_utc is null`,
    [territoryId, requesterUserId],
  );
  if (curators.length > 0) return ids(curators);
  const admins = await em.execute<{ id: string }[]>(
    `select p.user_id as id from user_permission p join app_user u on u.id = p.user_id
      where p.permission = 'SYSTEM_ADMIN' and p.user_id <> ? and u.deleted_at_utc is null`,
    [requesterUserId],
  );
  return ids(admins);
}

/**
 * Who may decide the request now: a system admin, a curator of its territory, or a stored recipient who is still
 * eligible (a verified resident of the territory). Eligibility is re-checked here because it can be lost after
 * the request was addressed (capability revoked, residency moved, verification cleared). The requester is
 * refused by the caller before this check.
 */
export async function canDecide(
  em: EntityManager,
  user: { id: string; permissions: readonly string[] },
  request: { id: string; territoryId: string },
): Promise<boolean> {
  if (user.permissions.includes('SYSTEM_ADMIN')) return true;
  const rows = await em.execute(
    `select 1 from territory_membership m
      where m.territory_id = ? and m.user_id = ? and ${ELIGIBLE_MEMBERSHIP}
        and ('CURATOR' = any(m.capabilities)
             or exists (select 1 from join_request_recipient r where r.join_request_id = ? and r.recipient_user_id = m.user_id))`,
    [request.territoryId, user.id, request.id],
  );
  return rows.length > 0;
}

/**
 * Who may read the request: its requester, its stored recipients (even after losing eligibility: they were
 * shown it), curators of its territory and system admins.
 */
export async function canView(
  em: EntityManager,
  user: { id: string; permissions: readonly string[] },
  request: { id: string; territoryId: string; requesterUserId: string },
): Promise<boolean> {
  if (request.requesterUserId === user.id || user.permissions.includes('SYSTEM_ADMIN')) return true;
  const rows = await em.execute(
    `select 1 from join_request_recipient where join_request_id = ? and recipient_user_id = ?
     union all
     select 1 from territory_membership where territory_id = ? and user_id = ? and 'CURATOR' = any(capabilities)
     limit 1`,
    [request.id, user.id, request.territoryId, user.id],
  );
  return rows.length > 0;
}
