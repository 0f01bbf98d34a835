import { type EntityManager, type InferEntity, LockMode, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { AuditEntry } from '../../entities/audit.entity.js';
import { TerritoryMembership, type TerritoryCapability } from '../../entities/membership.entity.js';
import { Territory } from '../../entities/territory.entity.js';
import { User, UserPermission, type SystemPermission } from '../../entities/user.entity.js';
import { forgetCachedUser } from '../../policy/caller.js';
import type { AuthUser } from '../../platform/service-context.js';
import { newId } from '../../platform/ids.js';
import { conflict, forbidden, notFound } from '../../platform/problems.js';
import { holdsCapability } from '../../trpc/procedures.js';
import { hasPermission } from '../../platform/service-context.js';
import { toMembershipOutput } from '../memberships/memberships.service.js';

type MembershipRow = InferEntity<typeof TerritoryMembership>;

async function requireActiveUser(em: EntityManager, userId: string) {
  const user = await em.findOne(User, { id: userId, deletedAtUtc: null });
  if (!user) throw notFound('User');
  return user;
}

async function permissionsOf(em: EntityManager, userId: string): Promise<SystemPermission[]> {
  const rows = await em.find(UserPermission, { userId }, { orderBy: { permission: 'asc' } });
  return rows.map((r) => r.permission);
}

// ---- system permissions (SYSTEM_ADMIN only: enforced by the procedure)

/** Idempotent: granting a held permission changes nothing and writes no audit row. */
export async function grantPermission(em: EntityManager, actorId: string, userId: string, permission: SystemPermission) {
  await requireActiveUser(em, userId);
  await em.transactional(async (tx) => {
    const inserted = await tx.execute<{ id: string }[]>(
      `insert into user_permission (id, created_at_utc, user_id, permission, granted_by_user_id) values (?, now(), ?, ?, ?)
       on conflict (user_id, permission) do nothing returning id`,
      [newId(), userId, permission, actorId],
    );
    if (inserted.length > 0) {
      tx.create(AuditEntry, { actorUserId: actorId, action: 'permission.granted', subjectType: 'User', subjectId: userId, data: { permission } });
    }
  });
  forgetCachedUser(userId);
  return { userId, permissions: await permissionsOf(em, userId) };
}

/** Idempotent. The last active SYSTEM_ADMIN cannot be revoked (the system would have no administrator left). */
export async function revokePermission(em: EntityManager, actorId: string, userId: string, permission: SystemPermission) {
  await requireActiveUser(em, userId);
  await em.transactional(async (tx) => {
    if (permission === 'SYSTEM_ADMIN') {
      // Locks every admin row so two admins revoking each other at once cannot leave none.
      const admins = await tx.execute<{ user_id: string }[]>(
        `select p.user_id from user_permission p join app_user u on u.id = p.user_id
          where p.permission = 'SYSTEM_ADMIN' and u.deleted_at_utc is null for update of p`,
      );
      if (admins.some((a) => a.user_id === userId) && admins.length === 1) {
        throw conflict('The last SYSTEM_ADMIN cannot be revoked.', 'LAST_SYSTEM_ADMIN');
      }
    }
    const deleted = await tx.execute<{ id: string }[]>('delete from user_permission where user_id = ? and permission = ? returning id', [
      userId,
      permission,
    ]);
    if (deleted.length > 0) {
      tx.create(AuditEntry, { actorUserId: actorId, action: 'permission.revoked', subjectType: 'User', subjectId: userId, data: { permission } });
    }
  });
  forgetCachedUser(userId);
}

// ---- territory capabilities

/**
 * 404 for an unknown territory, then 403 unless the caller may manage the capability there: CURATOR is managed by
 * SYSTEM_ADMIN only, MODERATOR also by the territory's curators. Then 404 for an unknown user.
 */
async function authorizeCapabilityChange(em: EntityManager, actor: AuthUser, territoryId: string, userId: string, capability: TerritoryCapability) {
  if (!(await em.findOne(Territory, { id: territoryId }, { fields: ['id'] }))) throw notFound('Territory');
  const allowed = hasPermission(actor, 'SYSTEM_ADMIN') || (capability === 'MODERATOR' && (await holdsCapability(em, actor, territoryId, ['CURATOR'])));
  if (!allowed) {
    throw forbidden(capability === 'CURATOR' ? 'Only a SYSTEM_ADMIN manages CURATOR.' : 'Only a CURATOR of this territory or a SYSTEM_ADMIN manages MODERATOR.');
  }
  await requireActiveUser(em, userId);
}

const capabilityAudit = (actorId: string, m: MembershipRow, action: string, capability: TerritoryCapability) => ({
  actorUserId: actorId,
  action,
  subjectType: 'TerritoryMembership',
  subjectId: m.id,
  territoryId: m.territoryId,
  data: { userId: m.userId, capability },
});

/** Adds the capability to the user's membership, creating a VISITOR membership when there is none. Idempotent. */
export async function grantCapability(em: EntityManager, actor: AuthUser, territoryId: string, userId: string, capability: TerritoryCapability) {
  await authorizeCapabilityChange(em, actor, territoryId, userId, capability);
  const apply = () =>
    em.transactional(async (tx) => {
      let membership = await tx.findOne(TerritoryMembership, { territoryId, userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (membership?.capabilities.includes(capability)) return membership;
      if (membership) membership.capabilities = [...membership.capabilities, capability];
      else membership = tx.create(TerritoryMembership, { id: newId(), territoryId, userId, role: 'VISITOR', capabilities: [capability] });
      tx.create(AuditEntry, capabilityAudit(actor.id, membership, 'capability.granted', capability));
      return membership;
    });
  try {
    return toMembershipOutput(await apply());
  } catch (error) {
    if (!(error instanceof UniqueConstraintViolationException)) throw error;
    // A concurrent request created the membership first; the retry finds and updates it.
    em.clear();
    return toMembershipOutput(await apply());
  }
}

/** Removes the capability; absent membership or capability is fine (idempotent). The membership itself stays. */
export async function revokeCapability(em: EntityManager, actor: AuthUser, territoryId: string, userId: string, capability: TerritoryCapability) {
  await authorizeCapabilityChange(em, actor, territoryId, userId, capability);
  await em.transactional(async (tx) => {
    const membership = await tx.findOne(TerritoryMembership, { territoryId, userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!membership?.capabilities.includes(capability)) return;
    membership.capabilities = membership.capabilities.filter((c) => c !== capability);
    tx.create(AuditEntry, capabilityAudit(actor.id, membership, 'capability.revoked', capability));
  });
}
