import { z } from 'zod';
import { IDENTITY_STATUSES, SYSTEM_PERMISSIONS } from '../../entities/user.entity.js';
import { recoveryCode, totpCode } from '../auth/auth.schemas.js';

export const meOutput = z
  .object({
    id: z.uuid(),
    displayName: z.string(),
    email: z.string().nullable(),
    identityVerificationStatus: z.enum(IDENTITY_STATUSES),
    twoFactorEnabled: z.boolean(),
    permissions: z.array(z.enum(SYSTEM_PERMISSIONS)),
  })
  .meta({ id: 'CurrentUser' });
export type MeOutput = z.infer<typeof meOutput>;

/** The step-up proof of an account deletion: with 2FA on, a current code or a recovery code (at most one). */
export const deleteAccountInput = z
  .object({ code: totpCode.nullish(), recoveryCode: recoveryCode.nullish() })
  .refine((v) => v.code == null || v.recoveryCode == null, { message: 'give at most one of code or recoveryCode', path: ['code'] });
