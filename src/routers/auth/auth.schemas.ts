import { z } from 'zod';
import { IDENTITY_STATUSES } from '../../entities/user.entity.js';
import { zId } from '../../platform/ids.js';
import { withOutputLimits, zOptionalText, zText } from '../../platform/text.js';
import { cpfDigits, isValidCpf } from './cpf.js';

// ---- inputs

/** CPF with or without punctuation; stored as its 11 digits. */
const zCpf = z
  .string()
  .transform((value, ctx) => {
    const digits = cpfDigits(value);
    if (!digits || !isValidCpf(digits)) {
      ctx.addIssue({ code: 'custom', message: 'must be a valid CPF (11 digits with valid check digits)' });
      return z.NEVER;
    }
    return digits;
  })
  .meta({ description: 'Brazilian CPF, 11 digits, punctuation allowed', example: '529.982.247-25' });

export const socialLoginInput = z.object({
  authProvider: withOutputLimits(
    z
      .string()
      .trim()
      .toLowerCase()
      .pipe(
        z
          .string()
          .min(1)
          .max(50)
          .regex(/^[a-z0-9._-]+$/, 'must be a provider name (letters, digits, . _ -)'),
      ),
  ),
  externalId: zText({ max: 255 }),
  displayName: zText({ max: 200 }),
  email: z.email({ error: 'must be an email address' }).max(320).nullish(),
  cpf: zCpf.nullish(),
  foreignDocument: zOptionalText(100),
  phoneNumber: z
    .string()
    .trim()
    .regex(/^\+?[0-9 ()-]{6,30}$/, 'must be a phone number')
    .nullish(),
  idToken: z.string().min(1).max(16_384).nullish(),
});
export type SocialLoginInput = z.infer<typeof socialLoginInput>;

export const refreshInput = z.object({ refreshToken: z.string().min(1).max(200) });

export const totpCode = z
  .string()
  .trim()
  .regex(/^\d{6}$/, 'must be a 6-digit code');
export const recoveryCode = z.string().trim().min(1).max(64);

export const confirmInput = z.object({ code: totpCode });
export const verifyInput = z.object({ challengeId: zId, code: totpCode });
export const recoverInput = z.object({ challengeId: zId, recoveryCode });
export const disableInput = z
  .object({ code: totpCode.nullish(), recoveryCode: recoveryCode.nullish() })
  .refine((v) => (v.code == null) !== (v.recoveryCode == null), {
    message: 'give exactly one of code or recoveryCode',
    path: ['code'],
  });

// ---- outputs

export const authUserOutput = z
  .object({
    id: z.uuid(),
    displayName: z.string(),
    email: z.string().nullable(),
    identityVerificationStatus: z.enum(IDENTITY_STATUSES),
    twoFactorEnabled: z.boolean(),
  })
  .meta({ id: 'AuthUser' });

/** A completed login: social login without 2FA, 2FA verify/recover, refresh. */
export const loginOutput = z
  .object({
    twoFactorRequired: z.literal(false),
    user: authUserOutput,
    token: z.string().meta({ description: 'Access token (JWT, HS256) for Authorization: Bearer' }),
    refreshToken: z.string().meta({ description: 'Single-use; POST /api/v1/auth/refresh rotates it' }),
    expiresInSeconds: z.number().int(),
  })
  .meta({ id: 'LoginResult' });
export type LoginOutput = z.infer<typeof loginOutput>;

/** Social login of a user with 2FA: no token yet; verify or recover with the challenge. */
export const twoFactorRequiredOutput = z
  .object({
    twoFactorRequired: z.literal(true),
    challengeId: z.uuid(),
    marker: z.string().meta({ description: '2FA_REQUIRED:<challengeId>', example: '2FA_REQUIRED:0190a4f6-0000-7000-8000-000000000000' }),
  })
  .meta({ id: 'TwoFactorRequired' });
export type TwoFactorRequiredOutput = z.infer<typeof twoFactorRequiredOutput>;

// A plain union: a boolean discriminator becomes string mapping keys ("true"/"false") in generated REST clients.
export const socialLoginOutput = z.union([loginOutput, twoFactorRequiredOutput]).meta({ id: 'SocialLoginResult' });

export const twoFactorSetupOutput = z
  .object({
    secret: z.string(),
    qrCodeUri: z.string().meta({ description: 'otpauth://totp/... URI' }),
    qrCodeDataUrl: z.string().meta({ description: 'PNG image of the QR code as a data: URL' }),
    manualEntryKey: z.string().meta({ description: 'The secret in groups of four characters, for typing into an app' }),
  })
  .meta({ id: 'TwoFactorSetup' });

export const recoveryCodesOutput = z
  .object({ recoveryCodes: z.array(z.string()).meta({ description: '10 single-use codes; shown only once' }) })
  .meta({ id: 'TwoFactorRecoveryCodes' });

export const twoFactorStatusOutput = z.object({ twoFactorEnabled: z.boolean() }).meta({ id: 'TwoFactorStatus' });
