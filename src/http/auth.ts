import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppConfig } from '../config.js';
import type { IdentityVerificationStatus, SystemPermission } from '../entities/user.entity.js';
import { verifyAccessToken } from '../platform/jwt.js';
import { isUuid } from '../platform/ids.js';

/** The caller behind a bearer token, with the roles read from the database (not from the token). */
export interface AuthUser {
  id: string;
  displayName: string;
  identityVerificationStatus: IdentityVerificationStatus;
  permissions: SystemPermission[];
}

export interface RequestAuth {
  user: AuthUser | null;
  /** Why a presented token was refused; protected operations answer 401 with it. */
  error: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: RequestAuth;
  }
}

const CACHE_MS = 2000;
const cache = new Map<string, { user: AuthUser | null; until: number }>();

/** Permission and identity changes call this so they take effect at once in this process (others: within 2 s). */
export function forgetCachedUser(userId: string) {
  cache.delete(userId);
}

async function loadUser(em: EntityManager, id: string): Promise<AuthUser | null> {
  const hit = cache.get(id);
  if (hit && hit.until > Date.now()) return hit.user;
  const rows = await em.getConnection().execute<
    { id: string; display_name: string; identity_verification_status: IdentityVerificationStatus; permissions: SystemPermission[] | null }[]
  >(
    `select u.id, u.display_name, u.identity_verification_status,
            array_remove(array_agg(p.permission), null) as permissions
       from app_user u left join user_permission p on p.user_id = u.id
      where u.id = ? and u.deleted_at_utc is null
      group by u.id`,
    [id],
  );
  const row = rows[0];
  const user = row
    ? { id: row.id, displayName: row.display_name, identityVerificationStatus: row.identity_verification_status, permissions: row.permissions ?? [] }
    : null;
  if (cache.size > 50_000) cache.clear();
  cache.set(id, { user, until: Date.now() + CACHE_MS });
  return user;
}

export async function resolveBearer(header: string | undefined, config: AppConfig, em: EntityManager): Promise<RequestAuth> {
  if (!header) return { user: null, error: null };
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match?.[1]) return { user: null, error: 'The Authorization header must be "Bearer <token>".' };
  const check = await verifyAccessToken(config.jwt, match[1]);
  if (!check.ok) return { user: null, error: check.reason };
  if (!isUuid(check.subject)) return { user: null, error: 'The token is invalid.' };
  const user = await loadUser(em, check.subject);
  return user ? { user, error: null } : { user: null, error: 'The token belongs to no active user.' };
}

/** Resolves `Authorization: Bearer` on every request before rate limiting and routing. */
/** `em` may be the ORM's root EntityManager: the lookup is one raw query, with no identity map involved. */
export const authPlugin = fp(async (app: FastifyInstance, opts: { config: AppConfig; em: EntityManager }) => {
  app.decorateRequest('auth', null as unknown as RequestAuth);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    request.auth = await resolveBearer(request.headers.authorization, opts.config, opts.em);
  });
}, { name: 'auth' });
