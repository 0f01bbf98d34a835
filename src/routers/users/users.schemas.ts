import { z } from 'zod';
import { IDENTITY_STATUSES, SYSTEM_PERMISSIONS } from '../../entities/user.entity.js';

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
