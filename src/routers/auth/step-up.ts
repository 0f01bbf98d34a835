/**
 * Step-up: a bearer token alone does not delete an account or hand out a system permission, because a token can
 * be stolen. The caller proves themselves again: with 2FA on, a fresh second factor (through the credential guard,
 * so it cannot be guessed); without it, a sign-in within the last STEP_UP_WINDOW_MS (the session's `auth_time`,
 * kept across refreshes, so refreshing a stolen token does not renew it).
 */
import { execSql } from '../../db/sql.js';
import { AppError } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { proveSecondFactor, type SecondFactorProof } from './two-factor.service.js';

export const STEP_UP_WINDOW_MS = 10 * 60_000;

/**
 * 403 STEP_UP_REQUIRED rather than 401: the token is valid, and a client that refreshes on 401 would only get
 * another token of the same sign-in.
 */
const stepUpRequired = (detail: string) => new AppError('FORBIDDEN', 'STEP_UP_REQUIRED', detail);

export async function requireStepUp(ctx: ServiceContext, proof: SecondFactorProof): Promise<void> {
  const [row] = await execSql<{ two_factor_enabled: boolean }>(ctx.em, 'select two_factor_enabled from app_user where id = ?', [ctx.user.id]);
  if (row?.two_factor_enabled) {
    if (!proof.code && !proof.recoveryCode) {
      throw stepUpRequired('This action needs a current code of your authenticator app (code) or a recovery code (recoveryCode).');
    }
    await proveSecondFactor(ctx, proof);
    return;
  }
  const signedInAt = ctx.authSession?.authenticatedAtMs;
  if (signedInAt === undefined || ctx.clock.now().getTime() - signedInAt > STEP_UP_WINDOW_MS) {
    throw stepUpRequired(`This action needs a recent sign-in: sign in again, then retry within ${STEP_UP_WINDOW_MS / 60_000} minutes.`);
  }
}
