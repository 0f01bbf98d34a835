import type { ClientScope } from '../entities/client-application.entity.js';
import type { TerritoryCapability } from '../entities/membership.entity.js';
import type { SystemPermission } from '../entities/user.entity.js';
import { isUuid } from '../platform/ids.js';
import { forbidden, unauthorized, validationFailed } from '../platform/problems.js';
import { type AuthUser, hasPermission } from '../platform/service-context.js';
import { requireTerritory } from '../policy/territory-access.js';
import type { AuthClient } from '../policy/client-caller.js';
import { baseProcedure } from './init.js';

/** No token needed (territory lists, login). A valid token is still read so handlers may personalise. */
export const publicProcedure = baseProcedure;

/** A valid bearer token of an active user; `ctx.user` is set. */
export const authedProcedure = baseProcedure.use(({ ctx, next }) => {
  const user = ctx.auth.user;
  if (!user) throw unauthorized(ctx.auth.error ?? 'Authentication is required.');
  // `ctx.user` is that user already (createContext, the call pipeline): narrowing its type needs no copy of the
  // whole context, which tRPC makes for every `next({ ctx })`.
  if (ctx.user === user) return next() as unknown as ReturnType<typeof next<{ user: AuthUser }>>;
  return next({ ctx: { user } });
});

/** Holds any of the given system permissions. */
export const permissionProcedure = (...permissions: SystemPermission[]) =>
  authedProcedure.use(({ ctx, next }) => {
    if (!hasPermission(ctx.user, ...permissions)) throw forbidden(`This operation requires ${permissions.join(' or ')}.`);
    return next();
  });

export const adminProcedure = permissionProcedure('SYSTEM_ADMIN');

/**
 * Holds one of the capabilities in the territory named by the input's `territoryId` (path or body); a territory
 * the caller may not see is 404 (status VISIBLE). Fails closed: without a well-formed `territoryId` the call is a
 * 400 before anything runs.
 */
export const territoryProcedure = (...capabilities: TerritoryCapability[]) =>
  authedProcedure.use(async ({ ctx, next, getRawInput }) => {
    const raw = (await getRawInput()) as { territoryId?: unknown } | undefined;
    const territoryId = raw?.territoryId;
    if (!isUuid(territoryId)) throw validationFailed('territoryId', 'must be a UUID');
    await requireTerritory(ctx, territoryId, { as: capabilities, status: 'VISIBLE' });
    return next();
  });

/**
 * The journeys API (v2): a client token holding `scope` (401 without a valid one, 403 without the scope). A user
 * JWT alone in `Authorization` is not a client token: 401. `ctx.user` is the user of `X-User-Token`, when sent.
 */
export const journeyProcedure = (scope: ClientScope) =>
  baseProcedure.use(({ ctx, next }) => {
    const { client, error } = ctx.client;
    if (!client) throw unauthorized(error);
    if (!client.scopes.includes(scope)) throw forbidden(`This operation requires the ${scope} scope.`);
    // `ctx.client` is `{ client, error: null }` already (ClientAuth): narrowing its type needs no copy of the context,
    // whose copy would also fork the request's manager (src/trpc/invoke.ts), as authedProcedure says.
    return next() as unknown as ReturnType<typeof next<{ client: { client: AuthClient; error: null } }>>;
  });

/**
 * A journey acting for a user: the client token holding `scope` (GET: `journeys:read`, POST: `journeys:write`),
 * then the user of `X-User-Token` (401 UNAUTHORIZED when missing or invalid); `ctx.user` is that user.
 */
export const journeyUserProcedure = (scope: ClientScope) =>
  journeyProcedure(scope).use(({ ctx, next }) => {
    const user = ctx.auth.user;
    if (!user) throw unauthorized(ctx.auth.error ?? 'This journey acts for a user: send their access token in X-User-Token.');
    if (ctx.user === user) return next() as unknown as ReturnType<typeof next<{ user: AuthUser }>>;
    return next({ ctx: { user } });
  });
