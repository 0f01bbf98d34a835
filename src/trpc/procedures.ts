import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuthUser } from '../http/auth.js';
import type { TerritoryCapability } from '../entities/membership.entity.js';
import type { SystemPermission } from '../entities/user.entity.js';
import { forbidden, notFound, unauthorized } from '../platform/problems.js';
import { baseProcedure } from './init.js';
import { isUuid } from '../platform/ids.js';

/** No token needed (territory lists, login). A valid token is still read so handlers may personalise. */
export const publicProcedure = baseProcedure;

/** A valid bearer token of an active user; `ctx.user` is set. */
export const authedProcedure = baseProcedure.use(({ ctx, next }) => {
  const user = ctx.auth.user;
  if (!user) throw unauthorized(ctx.auth.error ?? 'Authentication is required.');
  return next({ ctx: { ...ctx, user } });
});

export const hasPermission = (user: AuthUser, ...permissions: SystemPermission[]) =>
  permissions.some((p) => user.permissions.includes(p));

/** Holds any of the given system permissions. */
export const permissionProcedure = (...permissions: SystemPermission[]) =>
  authedProcedure.use(({ ctx, next }) => {
    if (!hasPermission(ctx.user, ...permissions)) throw forbidden(`This operation requires ${permissions.join(' or ')}.`);
    return next();
  });

export const adminProcedure = permissionProcedure('SYSTEM_ADMIN');

/**
 * True when the user holds one of the capabilities in the territory (SYSTEM_ADMIN holds them all). The list goes
 * through `array[?]`: MikroORM renders an array parameter as a comma list.
 */
export async function holdsCapability(em: EntityManager, user: AuthUser, territoryId: string, capabilities: TerritoryCapability[]) {
  if (hasPermission(user, 'SYSTEM_ADMIN')) return true;
  const rows = await em
    .getConnection()
    .execute<{ ok: boolean }[]>(
      'select 1 as ok from territory_membership where territory_id = ? and user_id = ? and capabilities && array[?]::text[] limit 1',
      [territoryId, user.id, capabilities],
    );
  return rows.length > 0;
}

/**
 * The territory exists (else 404) and the user holds one of the capabilities there (else 403). Services call this
 * first when the territory is not a procedure input.
 */
export async function requireTerritoryCapability(em: EntityManager, user: AuthUser, territoryId: string, capabilities: TerritoryCapability[]) {
  const exists = await em.getConnection().execute('select 1 from territory where id = ?', [territoryId]);
  if (exists.length === 0) throw notFound('Territory');
  if (!(await holdsCapability(em, user, territoryId, capabilities))) {
    throw forbidden(`This operation requires ${capabilities.join(' or ')} in this territory.`);
  }
}

/**
 * Holds one of the capabilities in the territory named by the input's `territoryId` (path or body).
 * A malformed id is left to the input schema (400).
 */
export const territoryProcedure = (...capabilities: TerritoryCapability[]) =>
  authedProcedure.use(async ({ ctx, next, getRawInput }) => {
    const raw = (await getRawInput()) as { territoryId?: unknown } | undefined;
    const territoryId = raw?.territoryId;
    if (isUuid(territoryId)) {
      await requireTerritoryCapability(ctx.em, ctx.user, territoryId, capabilities);
    }
    return next();
  });
