/**
 * Who the caller is, read per call from the database (roles are never taken from a token), behind a short
 * in-process cache: a granted or revoked permission takes effect within CACHE_MS, at once in the process that
 * changed it (`forgetCachedUser`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { IdentityVerificationStatus, SystemPermission } from '../entities/user.entity.js';
import type { AuthUser } from '../platform/service-context.js';

const CACHE_MS = 2000;
/** The caller, and the instant before which their access tokens no longer count (sign-out everywhere). */
export interface LoadedCaller {
  user: AuthUser;
  tokensValidAfterMs: number | null;
}

const cache = new Map<string, { caller: LoadedCaller | null; until: number }>();

/** Permission and identity changes call this so they take effect at once in this process (others: within 2 s). */
export function forgetCachedUser(userId: string) {
  cache.delete(userId);
}

export async function loadCaller(em: EntityManager, id: string): Promise<LoadedCaller | null> {
  const hit = cache.get(id);
  if (hit && hit.until > Date.now()) return hit.caller;
  const rows = await em.getConnection().execute<
    {
      id: string;
      display_name: string;
      identity_verification_status: IdentityVerificationStatus;
      permissions: SystemPermission[] | null;
      tokens_valid_after_utc: Date | string | null;
    }[]
  >(
    `select u.id, u.display_name, u.identity_verification_status, u.tokens_valid_after_utc,
            array_remove(array_agg(p.permission), null) as permissions
       from app_user u left join user_permission p on p.user_id = u.id
      where u.id = ? and u.deleted_at_utc is null
      group by u.id`,
    [id],
  );
  const row = rows[0];
  const caller = row
    ? {
        user: { id: row.id, displayName: row.display_name, identityVerificationStatus: row.identity_verification_status, permissions: row.permissions ?? [] },
        tokensValidAfterMs: row.tokens_valid_after_utc ? new Date(row.tokens_valid_after_utc).getTime() : null,
      }
    : null;
  if (cache.size > 50_000) cache.clear();
  cache.set(id, { caller, until: Date.now() + CACHE_MS });
  return caller;
}
