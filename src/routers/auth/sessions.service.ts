import { execSql } from '../../db/sql.js';
import type { PublicServiceContext, ServiceContext } from '../../platform/service-context.js';
import { announceCallerChange, forgetCachedUser } from '../../policy/caller.js';
import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager, InferEntity } from '@mikro-orm/postgresql';
import type { AppConfig } from '../../config.js';
import { audit } from '../../entities/audit.entity.js';
import { RefreshToken } from '../../entities/auth.entity.js';
import { User } from '../../entities/user.entity.js';
import { clock } from '../../platform/clock.js';
import { newId } from '../../platform/ids.js';
import { signUserToken } from '../../platform/jwt.js';
import { unauthorized } from '../../platform/problems.js';
import type { LoginOutput } from './auth.schemas.js';
import type { AccountEraser } from '../../platform/account-erasure.js';
import { secondFactorSubject } from './credential-guard.js';

type UserRow = InferEntity<typeof User>;

const REFRESH_TOKEN_DAYS = 30;

/** SHA-256 hex: refresh tokens and recovery codes are stored only as hashes. */
export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export function toAuthUser(user: UserRow) {
  return {
    id: user.id,
    displayName: user.displayName,
    email: user.email ?? null,
    identityVerificationStatus: user.identityVerificationStatus,
    twoFactorEnabled: user.twoFactorEnabled,
  };
}

/** Persists a new refresh token of the family (not flushed) and returns its clear text, shown once. */
function addRefreshToken(em: EntityManager, userId: string, familyId: string): string {
  const token = randomBytes(32).toString('base64url');
  em.create(RefreshToken, {
    userId,
    familyId,
    tokenHash: sha256(token),
    expiresAtUtc: new Date(clock.now().getTime() + REFRESH_TOKEN_DAYS * 86_400_000),
  });
  return token;
}

/** The refresh token and the access token of one session (`sid` = its refresh-token family). */
async function loginResult(config: AppConfig, user: UserRow, session: { refreshToken: string; id: string; authenticatedAt: Date }): Promise<LoginOutput> {
  const { token, expiresInSeconds } = await signUserToken(config.jwt, { userId: user.id, sessionId: session.id, authenticatedAt: session.authenticatedAt });
  return { twoFactorRequired: false, user: toAuthUser(user), token, refreshToken: session.refreshToken, expiresInSeconds };
}

/**
 * Ends the user's sessions, all of them or all but `except` (the one that just proved the new factors): they can
 * no longer be renewed, their access tokens stop working (the bearer check refuses an ended `sid`), and their open
 * sockets close, in every process, when `em`'s transaction commits.
 */
export async function revokeAllSessions(em: EntityManager, userId: string, at: Date, except: string | null = null) {
  const ended = await execSql<{ family_id: string }>(
    em,
    `with ended as (update refresh_token set revoked_at_utc = ?
                     where user_id = ? and revoked_at_utc is null and family_id is distinct from ?::uuid returning family_id)
     select distinct family_id from ended`,
    [at, userId, except],
  );
  for (const { family_id } of ended) await announceCallerChange(em, { userId, sessionId: family_id });
}

/** Every refresh-token family of the user ends (sign-out everywhere, account deletion). */
const endEveryFamily = (em: EntityManager, userId: string, at: Date) =>
  execSql(em, 'update refresh_token set revoked_at_utc = ? where user_id = ? and revoked_at_utc is null', [at, userId]);

/**
 * Sign-out everywhere: every refresh-token family ends and every access token issued so far stops working (the
 * bearer check compares its `iat` with the user's cutoff).
 */
export async function signOutEverywhere(ctx: ServiceContext): Promise<void> {
  const now = ctx.clock.now();
  await ctx.em.transactional(async (tx) => {
    await endEveryFamily(tx, ctx.user.id, now);
    await execSql(tx, 'update app_user set tokens_valid_after_utc = ? where id = ?', [now, ctx.user.id]);
    audit(tx, { actorUserId: ctx.user.id, action: 'auth.signed_out_everywhere', subjectType: 'User', subjectId: ctx.user.id });
    await announceCallerChange(tx, { userId: ctx.user.id });
  });
  forgetCachedUser(ctx.user.id);
}

/**
 * Logout of one session: the refresh-token family of the presented token ends, with its access tokens and open
 * sockets. Unknown tokens change nothing.
 */
export async function logout(ctx: PublicServiceContext, input: { refreshToken: string }): Promise<void> {
  const ended = await ctx.em.transactional(async (tx) => {
    const sessions = await execSql<{ user_id: string; family_id: string }>(
      tx,
      `with ended as (update refresh_token set revoked_at_utc = ?
                       where revoked_at_utc is null and family_id = (select family_id from refresh_token where token_hash = ?)
                       returning user_id, family_id)
       select distinct user_id, family_id from ended`,
      [ctx.clock.now(), sha256(input.refreshToken)],
    );
    for (const session of sessions) await announceCallerChange(tx, { userId: session.user_id, sessionId: session.family_id });
    return sessions;
  });
  // Other processes learn it from the announcement; this one at once, before it answers.
  for (const session of ended) forgetCachedUser(session.user_id);
}

/** A completed login: a new session, with the first refresh token of its family and an access token. */
export async function issueSession(em: EntityManager, config: AppConfig, user: UserRow): Promise<LoginOutput> {
  const id = newId();
  const refreshToken = addRefreshToken(em, user.id, id);
  await em.flush();
  return loginResult(config, user, { refreshToken, id, authenticatedAt: clock.now() });
}

/** Reuse of a consumed token means it leaked: every token of its family stops working, access tokens included. */
async function revokeFamily(em: EntityManager, token: InferEntity<typeof RefreshToken>) {
  await em.transactional(async (tx) => {
    await execSql(tx, 'update refresh_token set revoked_at_utc = ? where family_id = ? and revoked_at_utc is null', [clock.now(), token.familyId]);
    await announceCallerChange(tx, { userId: token.userId, sessionId: token.familyId });
    audit(tx, {
      actorUserId: null,
      action: 'auth.refresh_token_reused',
      subjectType: 'User',
      subjectId: token.userId,
      data: { familyId: token.familyId },
    });
  });
  forgetCachedUser(token.userId);
}

/** When the session's login happened: its family's first token was issued then. */
async function sessionStart(em: EntityManager, familyId: string): Promise<Date> {
  const [row] = await execSql<{ started: Date | string }>(em, 'select min(created_at_utc) as started from refresh_token where family_id = ?', [familyId]);
  return row ? new Date(row.started) : clock.now();
}

/**
 * Rotation: the presented token is consumed (single use, atomically) and the next one of the same family is issued.
 * A consumed or revoked token presented again revokes the whole family (401).
 */
export async function refreshSession(ctx: PublicServiceContext, input: { refreshToken: string }): Promise<LoginOutput> {
  const { em, config } = ctx;
  const presented = input.refreshToken;
  const token = await em.findOne(RefreshToken, { tokenHash: sha256(presented) });
  if (!token) throw unauthorized('The refresh token is invalid.');
  if (token.consumedAtUtc || token.revokedAtUtc) {
    await revokeFamily(em, token);
    throw unauthorized('The refresh token was already used; the session has been revoked.');
  }
  if (token.expiresAtUtc.getTime() <= clock.now().getTime()) throw unauthorized('The refresh token has expired.');
  const user = await em.findOne(User, { id: token.userId, deletedAtUtc: null });
  if (!user) throw unauthorized('The refresh token belongs to no active user.');

  const next = await em.transactional(async (tx) => {
    const consumed = await execSql<{ id: string }>(
      tx,
      'update refresh_token set consumed_at_utc = ? where id = ? and consumed_at_utc is null and revoked_at_utc is null returning id',
      [clock.now(), token.id],
    );
    // Lost a race with another use of the same token: that is a reuse too.
    if (consumed.length === 0) return null;
    const fresh = addRefreshToken(tx, user.id, token.familyId);
    await tx.flush();
    return fresh;
  });
  if (!next) {
    await revokeFamily(em, token);
    throw unauthorized('The refresh token was already used; the session has been revoked.');
  }
  return loginResult(config, user, { refreshToken: next, id: token.familyId, authenticatedAt: await sessionStart(em, token.familyId) });
}

/** Account deletion: every session ends, and the second-factor material goes. */
export const eraseSessionsAndFactors: AccountEraser = async ({ em, userId, at }) => {
  await endEveryFamily(em, userId, at);
  await execSql(em, 'delete from recovery_code where user_id = ?', [userId]);
  await execSql(em, 'delete from two_factor_challenge where user_id = ?', [userId]);
  await execSql(em, 'delete from credential_attempt where subject_key = ?', [secondFactorSubject(userId).key]);
};
