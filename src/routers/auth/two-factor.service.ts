import { execSql } from '../../db/sql.js';
import type { PublicServiceContext, ServiceContext } from '../../platform/service-context.js';
import { guardedCheck, secondFactorSubject } from './credential-guard.js';
import { randomInt } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { audit } from '../../entities/audit.entity.js';
import { RecoveryCode } from '../../entities/auth.entity.js';
import { User } from '../../entities/user.entity.js';
import { clock } from '../../platform/clock.js';
import { badRequest, conflict, notFound, unauthorized } from '../../platform/problems.js';
import type { LoginOutput } from './auth.schemas.js';
import { forgetCachedUser } from '../../policy/caller.js';
import { issueSession, revokeAllSessions, sha256 } from './sessions.service.js';

const MAX_CHALLENGE_ATTEMPTS = 5;
const RECOVERY_CODE_COUNT = 10;
// One step either side absorbs clock drift between the server and the authenticator app.
const TOTP_TOLERANCE_SECONDS = 30;
// No 0/O or 1/I: recovery codes are read off paper.
const RECOVERY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);

/** The time step a code matches, or null. Steps at or before `lastStep` never match (replay). */
async function matchingStep(secret: string, code: string, lastStep: number | null | undefined): Promise<number | null> {
  try {
    const result = await verify({
      secret,
      token: code,
      epoch: nowSeconds(),
      epochTolerance: TOTP_TOLERANCE_SECONDS,
      ...(lastStep != null ? { afterTimeStep: lastStep } : {}),
    });
    return result.valid && 'timeStep' in result ? result.timeStep : null;
  } catch {
    return null;
  }
}

/** Records the accepted step; false when a concurrent request already accepted this or a later one. */
async function acceptStep(em: EntityManager, userId: string, step: number): Promise<boolean> {
  const rows = await execSql<{ id: string }>(
    em,
    `update app_user set two_factor_last_step = ?
      where id = ? and two_factor_enabled and (two_factor_last_step is null or two_factor_last_step < ?) returning id`,
    [step, userId, step],
  );
  return rows.length > 0;
}

/** Marks an unused recovery code of the user as used; false when none matches. */
async function consumeRecoveryCode(em: EntityManager, userId: string, code: string): Promise<boolean> {
  const hash = sha256(normalizeRecoveryCode(code));
  const rows = await execSql<{ id: string }>(
    em,
    'update recovery_code set used_at_utc = ? where id = (select id from recovery_code where user_id = ? and code_hash = ? and used_at_utc is null limit 1) and used_at_utc is null returning id',
    [clock.now(), userId, hash],
  );
  return rows.length > 0;
}

const normalizeRecoveryCode = (code: string) => code.toUpperCase().replace(/[^A-Z0-9]/g, '');

function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < 10; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

async function activeUser(em: EntityManager, userId: string) {
  const user = await em.findOne(User, { id: userId, deletedAtUtc: null });
  if (!user) throw notFound('User');
  return user;
}

/** Issues a new secret, kept pending server-side until a code from it is confirmed. */
export async function setup(ctx: ServiceContext) {
  const { em, config } = ctx;
  const userId = ctx.user.id;
  const user = await activeUser(em, userId);
  if (user.twoFactorEnabled) throw conflict('Two-factor authentication is already enabled.', 'TWO_FACTOR_ALREADY_ENABLED');
  const secret = generateSecret();
  user.twoFactorPendingSecret = secret;
  await em.flush();
  const qrCodeUri = generateURI({ issuer: config.jwt.issuer, label: user.email ?? user.displayName, secret });
  return {
    secret,
    qrCodeUri,
    qrCodeDataUrl: await QRCode.toDataURL(qrCodeUri),
    manualEntryKey: secret.match(/.{1,4}/g)?.join(' ') ?? secret,
  };
}

/** A valid code of the pending secret enables 2FA and issues 10 single-use recovery codes (stored hashed). */
export async function confirm(ctx: ServiceContext, input: { code: string }) {
  const { em } = ctx;
  const userId = ctx.user.id;
  const { code } = input;
  const user = await activeUser(em, userId);
  if (user.twoFactorEnabled) throw conflict('Two-factor authentication is already enabled.', 'TWO_FACTOR_ALREADY_ENABLED');
  const pending = user.twoFactorPendingSecret;
  if (!pending) throw badRequest('Call POST /api/v1/auth/2fa/setup first.', 'TWO_FACTOR_SETUP_REQUIRED');
  const step = await matchingStep(pending, code, null);
  if (step === null) throw badRequest('The code is not valid.', 'INVALID_TWO_FACTOR_CODE');

  const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const enabled = await em.transactional(async (tx) => {
    // Guarded so two concurrent confirmations cannot both hand out recovery codes.
    const rows = await execSql<{ id: string }>(
      tx,
      `update app_user set two_factor_enabled = true, two_factor_secret = two_factor_pending_secret,
              two_factor_pending_secret = null, two_factor_last_step = ?
        where id = ? and not two_factor_enabled and two_factor_pending_secret = ? returning id`,
      [step, userId, pending],
    );
    if (rows.length === 0) return false;
    await execSql(tx, 'delete from recovery_code where user_id = ?', [userId]);
    for (const c of recoveryCodes) tx.create(RecoveryCode, { userId, codeHash: sha256(normalizeRecoveryCode(c)) });
    audit(tx, { actorUserId: userId, action: 'auth.2fa_enabled', subjectType: 'User', subjectId: userId });
    // A session opened with one factor must not keep renewing itself once two are required.
    await revokeAllSessions(tx, userId, ctx.clock.now(), ctx.authSession?.id ?? null);
    return true;
  });
  if (!enabled) throw conflict('Two-factor authentication is already enabled.', 'TWO_FACTOR_ALREADY_ENABLED');
  forgetCachedUser(userId);
  return { recoveryCodes };
}

/**
 * Counts one attempt on a live challenge and returns its user; dead challenges (unknown, expired, used, or out of
 * attempts) are 401. The attempt is committed even when the code turns out wrong.
 */
async function attemptChallenge(em: EntityManager, challengeId: string) {
  const rows = await execSql<{ user_id: string }>(
    em,
    `update two_factor_challenge set attempts = attempts + 1
      where id = ? and consumed_at_utc is null and expires_at_utc > ? and attempts < ? returning user_id`,
    [challengeId, clock.now(), MAX_CHALLENGE_ATTEMPTS],
  );
  const userId = rows[0]?.user_id;
  if (!userId) throw unauthorized('The two-factor challenge is invalid, expired or used up. Sign in again.');
  const user = await em.findOne(User, { id: userId, deletedAtUtc: null, twoFactorEnabled: true });
  if (!user) throw unauthorized('The two-factor challenge is no longer valid. Sign in again.');
  return user;
}

/** Single use: only one request completes a challenge. */
async function consumeChallenge(em: EntityManager, challengeId: string) {
  const rows = await execSql<{ id: string }>(em, 'update two_factor_challenge set consumed_at_utc = ? where id = ? and consumed_at_utc is null returning id', [
    clock.now(),
    challengeId,
  ]);
  if (rows.length === 0) throw unauthorized('The two-factor challenge was already used. Sign in again.');
}

/** Second step of a login with a TOTP code. */
export async function verifyChallenge(ctx: PublicServiceContext, input: { challengeId: string; code: string }): Promise<LoginOutput> {
  const { em, config } = ctx;
  const { challengeId, code } = input;
  const user = await attemptChallenge(em, challengeId);
  const valid = await guardedCheck(em, secondFactorSubject(user.id), ctx.clock.now(), async () => {
    const step = user.twoFactorSecret ? await matchingStep(user.twoFactorSecret, code, user.twoFactorLastStep) : null;
    return step !== null && acceptStep(em, user.id, step);
  });
  if (!valid) throw unauthorized('The two-factor code is not valid.');
  await consumeChallenge(em, challengeId);
  return issueSession(em, config, user);
}

/** Second step of a login with a recovery code, which is used up. */
export async function recoverChallenge(ctx: PublicServiceContext, input: { challengeId: string; recoveryCode: string }): Promise<LoginOutput> {
  const { em, config } = ctx;
  const { challengeId, recoveryCode } = input;
  const user = await attemptChallenge(em, challengeId);
  const valid = await guardedCheck(em, secondFactorSubject(user.id), ctx.clock.now(), () => consumeRecoveryCode(em, user.id, recoveryCode));
  if (!valid) throw unauthorized('The recovery code is not valid.');
  await consumeChallenge(em, challengeId);
  audit(em, { actorUserId: user.id, action: 'auth.2fa_recovery_code_used', subjectType: 'User', subjectId: user.id });
  return issueSession(em, config, user);
}

/** A second factor presented with a sensitive request: a current TOTP code or an unused recovery code. */
export interface SecondFactorProof {
  code?: string | null;
  recoveryCode?: string | null;
}

/**
 * Checks a fresh second factor of a user with 2FA (400 when wrong, 429 past the attempt limit): the TOTP code is
 * accepted once (its step is recorded), a recovery code is used up.
 */
export async function proveSecondFactor(ctx: ServiceContext, proof: SecondFactorProof): Promise<void> {
  const { em } = ctx;
  const userId = ctx.user.id;
  const user = await activeUser(em, userId);
  const secret = user.twoFactorSecret;
  if (!user.twoFactorEnabled || !secret) throw conflict('Two-factor authentication is not enabled.', 'TWO_FACTOR_NOT_ENABLED');
  const proven = await guardedCheck(em, secondFactorSubject(userId), ctx.clock.now(), async () => {
    if (!proof.code) return Boolean(proof.recoveryCode) && consumeRecoveryCode(em, userId, proof.recoveryCode!);
    const step = await matchingStep(secret, proof.code, user.twoFactorLastStep);
    return step !== null && acceptStep(em, userId, step);
  });
  if (!proven) {
    throw proof.code ? badRequest('The code is not valid.', 'INVALID_TWO_FACTOR_CODE') : badRequest('The recovery code is not valid.', 'INVALID_RECOVERY_CODE');
  }
}

/** Turns 2FA off given a valid TOTP code or recovery code; the secret and all recovery codes are discarded. */
export async function disable(ctx: ServiceContext, input: SecondFactorProof) {
  const { em } = ctx;
  const userId = ctx.user.id;
  const proof = input;
  await proveSecondFactor(ctx, proof);
  await em.transactional(async (tx) => {
    await execSql(
      tx,
      `update app_user set two_factor_enabled = false, two_factor_secret = null, two_factor_pending_secret = null,
              two_factor_last_step = null where id = ?`,
      [userId],
    );
    await execSql(tx, 'delete from recovery_code where user_id = ?', [userId]);
    await execSql(tx, 'delete from two_factor_challenge where user_id = ? and consumed_at_utc is null', [userId]);
    await revokeAllSessions(tx, userId, ctx.clock.now(), ctx.authSession?.id ?? null);
    audit(tx, {
      actorUserId: userId,
      action: 'auth.2fa_disabled',
      subjectType: 'User',
      subjectId: userId,
      data: { proof: proof.code ? 'totp' : 'recoveryCode' },
    });
  });
  forgetCachedUser(userId);
  return { twoFactorEnabled: false };
}
