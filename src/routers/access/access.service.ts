import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import type { TerritoryCapability } from '../../entities/membership.entity.js';
import { User, UserPermission, type SystemPermission } from '../../entities/user.entity.js';
import { newId } from '../../platform/ids.js';
import { conflict, forbidden, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { announceCallerChange, forgetCachedUser } from '../../policy/caller.js';
import type { AccountEraser } from '../../platform/account-erasure.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { addCapability, removeCapability } from '../memberships/capabilities.js';
import { toMembershipOutput } from '../memberships/memberships.service.js';

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
export async function grantPermission(ctx: ServiceContext, input: { userId: string; permission: SystemPermission }) {
  const { em } = ctx;
  const actorId = ctx.user.id;
  const { userId, permission } = input;
  await requireActiveUser(em, userId);
  await em.transactional(async (tx) => {
    const inserted = await execSql<{ id: string }>(
      tx,
      `insert into user_permission (id, created_at_utc, user_id, permission, granted_by_user_id) values (?, now(), ?, ?, ?)
       on conflict (user_id, permission) do nothing returning id`,
      [newId(), userId, permission, actorId],
    );
    if (inserted.length > 0) {
      audit(tx, { actorUserId: actorId, action: 'permission.granted', subjectType: 'User', subjectId: userId, data: { permission } });
      await announceCallerChange(tx, { userId, closeSockets: false });
    }
  });
  forgetCachedUser(userId);
  return { userId, permissions: await permissionsOf(em, userId) };
}

/** Idempotent. The last active SYSTEM_ADMIN cannot be revoked (the system would have no administrator left). */
export async function revokePermission(ctx: ServiceContext, input: { userId: string; permission: SystemPermission }) {
  const { em } = ctx;
  const actorId = ctx.user.id;
  const { userId, permission } = input;
  await requireActiveUser(em, userId);
  await em.transactional(async (tx) => {
    if (permission === 'SYSTEM_ADMIN') await refuseLastSystemAdmin(tx, userId, 'The last SYSTEM_ADMIN cannot be revoked.');
    const deleted = await execSql<{ id: string }>(tx, 'delete from user_permission where user_id = ? and permission = ? returning id', [userId, permission]);
    if (deleted.length > 0) {
      audit(tx, { actorUserId: actorId, action: 'permission.revoked', subjectType: 'User', subjectId: userId, data: { permission } });
      // Every process forgets the cached roles, and sockets opened with the permission close.
      await announceCallerChange(tx, { userId });
    }
  });
  forgetCachedUser(userId);
}

/** Locks every admin row so two admins revoking (or deleting) each other at once cannot leave none. */
async function refuseLastSystemAdmin(tx: EntityManager, userId: string, detail: string) {
  const admins = await execSql<{ user_id: string }>(
    tx,
    `select p.user_id from user_permission p join app_user u on u.id = p.user_id
      where p.permission = 'SYSTEM_ADMIN' and u.deleted_at_utc is null for update of p`,
  );
  if (admins.some((a) => a.user_id === userId) && admins.length === 1) throw conflict(detail, 'LAST_SYSTEM_ADMIN');
}

/** Account deletion: the system permissions go, unless the user is the last SYSTEM_ADMIN (409). */
export const erasePermissions: AccountEraser = async ({ em, userId }) => {
  await refuseLastSystemAdmin(em, userId, 'The last SYSTEM_ADMIN cannot delete their account; grant SYSTEM_ADMIN to someone else first.');
  await execSql(em, 'delete from user_permission where user_id = ?', [userId]);
};

// ---- territory capabilities

/**
 * 404 for an unknown territory, then 403 unless the caller may manage the capability there: CURATOR is managed by
 * SYSTEM_ADMIN only, MODERATOR also by the territory's curators. Then 404 for an unknown user.
 */
async function authorizeCapabilityChange(ctx: ServiceContext, input: CapabilityChange) {
  const access = await requireTerritory(ctx, input.territoryId, { status: 'VISIBLE' });
  const allowed = access.isSystemAdmin || (input.capability === 'MODERATOR' && access.holds('CURATOR'));
  if (!allowed) {
    throw forbidden(
      input.capability === 'CURATOR' ? 'Only a SYSTEM_ADMIN manages CURATOR.' : 'Only a CURATOR of this territory or a SYSTEM_ADMIN manages MODERATOR.',
    );
  }
  await requireActiveUser(ctx.em, input.userId);
}

interface CapabilityChange {
  territoryId: string;
  userId: string;
  capability: TerritoryCapability;
}

/** Adds the capability to the user's membership, creating a VISITOR membership when there is none. Idempotent. */
export async function grantCapability(ctx: ServiceContext, input: CapabilityChange) {
  await authorizeCapabilityChange(ctx, input);
  return toMembershipOutput(await addCapability(ctx.em, { ...input, actorUserId: ctx.user.id }));
}

/** Removes the capability; absent membership or capability is fine (idempotent). The membership itself stays. */
export async function revokeCapability(ctx: ServiceContext, input: CapabilityChange) {
  await authorizeCapabilityChange(ctx, input);
  await removeCapability(ctx.em, { ...input, actorUserId: ctx.user.id });
}
