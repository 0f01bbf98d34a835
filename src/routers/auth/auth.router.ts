import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure, publicProcedure } from '../../trpc/procedures.js';
import {
  confirmInput,
  disableInput,
  loginOutput,
  recoverInput,
  recoveryCodesOutput,
  refreshInput,
  socialLoginInput,
  socialLoginOutput,
  twoFactorSetupOutput,
  twoFactorStatusOutput,
  verifyInput,
} from './auth.schemas.js';
import { socialLogin } from './auth.service.js';
import { logout, refreshSession, signOutEverywhere } from './sessions.service.js';
import * as twoFactor from './two-factor.service.js';

const TAGS = ['Authentication'];

export const authRouter = router({
  social: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/social',
        tags: TAGS,
        summary: 'Social login or sign-up',
        description: 'Returns tokens, or `{twoFactorRequired: true, challengeId, marker: "2FA_REQUIRED:<challengeId>"}` when 2FA is enabled.',
        protect: false,
      },
      rateLimit: 'auth',
    })
    .input(socialLoginInput)
    .output(socialLoginOutput)
    .mutation(({ ctx, input }) => socialLogin(ctx, input)),

  refresh: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/auth/refresh', tags: TAGS, summary: 'Rotate a refresh token (single use)', protect: false },
      rateLimit: 'auth',
    })
    .input(refreshInput)
    .output(loginOutput)
    .mutation(({ ctx, input }) => refreshSession(ctx, input)),

  logout: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/logout',
        tags: TAGS,
        summary: 'Log out one session: its refresh token (and the rest of its family) stops working',
        protect: false,
      },
      successStatus: 204,
      rateLimit: 'auth',
    })
    .input(refreshInput)
    .output(z.void())
    .mutation(({ ctx, input }) => logout(ctx, input)),

  signOutEverywhere: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/sign-out-everywhere',
        tags: TAGS,
        summary: 'Sign out every session of the caller: all refresh tokens and every access token issued so far stop working',
      },
      successStatus: 204,
      rateLimit: 'auth',
    })
    .output(z.void())
    .mutation(({ ctx }) => signOutEverywhere(ctx)),

  twoFactorSetup: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/auth/2fa/setup', tags: TAGS, summary: 'Generate a TOTP secret and QR code' } })
    .output(twoFactorSetupOutput)
    .mutation(({ ctx }) => twoFactor.setup(ctx)),

  twoFactorConfirm: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/auth/2fa/confirm', tags: TAGS, summary: 'Enable 2FA with a valid TOTP code' } })
    .input(confirmInput)
    .output(recoveryCodesOutput)
    .mutation(({ ctx, input }) => twoFactor.confirm(ctx, input)),

  twoFactorVerify: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/auth/2fa/verify', tags: TAGS, summary: 'Complete a login with a TOTP code', protect: false },
      rateLimit: 'auth',
    })
    .input(verifyInput)
    .output(loginOutput)
    .mutation(({ ctx, input }) => twoFactor.verifyChallenge(ctx, input)),

  twoFactorRecover: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/auth/2fa/recover', tags: TAGS, summary: 'Complete a login with a recovery code', protect: false },
      rateLimit: 'auth',
    })
    .input(recoverInput)
    .output(loginOutput)
    .mutation(({ ctx, input }) => twoFactor.recoverChallenge(ctx, input)),

  twoFactorDisable: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/auth/2fa/disable', tags: TAGS, summary: 'Disable 2FA with a TOTP code or a recovery code' } })
    .input(disableInput)
    .output(twoFactorStatusOutput)
    .mutation(({ ctx, input }) => twoFactor.disable(ctx, input)),
});
