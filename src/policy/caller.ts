/**
 * Who the caller is, read per call from the database (roles are never taken from a token), behind a short
 * in-process cache: a granted or revoked permission takes effect within CACHE_MS, at once in the process that
 * changed it (`forgetCachedUser`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { execSql, runHotRead } from '../db/sql.js';
import type { IdentityVerificationStatus, SystemPermission } from '../entities/user.entity.js';
import type { AuthUser } from '../platform/service-context.js';

const CACHE_MS = 2000;
/** The caller, and what ends their access tokens before they expire. */
export interface LoadedCaller {
  user: AuthUser;
  /** Sign-out everywhere: tokens issued before this instant no longer count. */
  tokensValidAfterMs: number | null;
  /** Sessions (refresh-token families) ended recently enough for one of their access tokens to be still unexpired. */
  endedSessionIds: ReadonlySet<string>;
}

const cache = new Map<string, { caller: LoadedCaller | null; until: number }>();

/** Permission and identity changes call this so they take effect at once in this process (others: within 2 s). */
export function forgetCachedUser(userId: string) {
  cache.delete(userId);
}

/** The LISTEN/NOTIFY channel on which every process learns that a caller's standing changed. */
export const CALLER_CHANGED_CHANNEL = 'caller_changed';

/**
 * What changed about a caller: every process forgets the cached caller and, for a revocation (`closeSockets`),
 * closes the WebSockets it holds for them (of one session when `sessionId` is set, else all), so it reaches open
 * sockets at once, not at their next message; the clients reconnect with a token that is checked afresh.
 */
export const callerChange = z.object({ userId: z.uuid(), sessionId: z.uuid().nullable().default(null), closeSockets: z.boolean().default(true) });
export type CallerChange = z.input<typeof callerChange>;

/** A NOTIFY payload as a change, or null when it is not one (nothing else writes the channel, but never trust it). */
export function parseCallerChange(payload: string): z.output<typeof callerChange> | null {
  try {
    const parsed = callerChange.safeParse(JSON.parse(payload));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * Announces a change in `em`'s transaction: PostgreSQL delivers it to every process (this one included) only if
 * and when that transaction commits.
 */
export async function announceCallerChange(em: EntityManager, change: CallerChange) {
  await execSql(em, 'select pg_notify(?, ?)', [CALLER_CHANGED_CHANNEL, JSON.stringify(change)]);
}

/**
 * `sessionWindowSeconds`: how long an access token lives (with tolerance). A session ended before that cannot have an
 * unexpired token left (no token is issued once its family is revoked), so older endings need not be loaded.
 */
export async function loadCaller(em: EntityManager, id: string, sessionWindowSeconds: number): Promise<LoadedCaller | null> {
  const hit = cache.get(id);
  if (hit && hit.until > Date.now()) return hit.caller;
  // Every signed-in request of a user past the cache's two seconds: a named statement (a key lookup, one plan).
  const rows = await runHotRead<{
    id: string;
    display_name: string;
    identity_verification_status: IdentityVerificationStatus;
    permissions: SystemPermission[] | null;
    tokens_valid_after_utc: Date | string | null;
    ended_sessions: string[] | null;
  }>(
    em,
    {
      sql: `select u.id, u.display_name, u.identity_verification_status, u.tokens_valid_after_utc,
            array_remove(array_agg(p.permission), null) as permissions,
            array(select distinct r.family_id from refresh_token r
                   where r.user_id = u.id and r.revoked_at_utc > now() - make_interval(secs => ?)) as ended_sessions
       from app_user u left join user_permission p on p.user_id = u.id
      where u.id = ?::uuid and u.deleted_at_utc is null
      group by u.id`,
      params: [sessionWindowSeconds, id],
    },
    { prepared: true },
  );
  const row = rows[0];
  const caller = row
    ? {
        user: { id: row.id, displayName: row.display_name, identityVerificationStatus: row.identity_verification_status, permissions: row.permissions ?? [] },
        tokensValidAfterMs: row.tokens_valid_after_utc ? new Date(row.tokens_valid_after_utc).getTime() : null,
        endedSessionIds: new Set(row.ended_sessions ?? []),
      }
    : null;
  if (cache.size > 50_000) cache.clear();
  cache.set(id, { caller, until: Date.now() + CACHE_MS });
  return caller;
}
