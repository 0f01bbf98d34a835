import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { adminProcedure, authedProcedure } from '../../trpc/procedures.js';
import { capabilityInput, membershipOutput, permissionInput, userPermissionsOutput } from './access.schemas.js';
import * as access from './access.service.js';

const PERMISSION_PATH = '/api/v1/admin/users/{userId}/permissions/{permission}';
const CAPABILITY_PATH = '/api/v1/territories/{territoryId}/capabilities/{userId}/{capability}';

export const accessRouter = router({
  grantPermission: adminProcedure
    .meta({ openapi: { method: 'PUT', path: PERMISSION_PATH, tags: ['Administration'], summary: 'Grant a system permission (idempotent)' } })
    .input(permissionInput)
    .output(userPermissionsOutput)
    .mutation(({ ctx, input }) => access.grantPermission(ctx, input)),

  revokePermission: adminProcedure
    .meta({
      openapi: { method: 'DELETE', path: PERMISSION_PATH, tags: ['Administration'], summary: 'Revoke a system permission (idempotent)' },
      successStatus: 204,
    })
    .input(permissionInput)
    .output(z.void())
    .mutation(({ ctx, input }) => access.revokePermission(ctx, input)),

  // Who may change which capability depends on the capability itself, so the service authorizes.
  grantCapability: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: CAPABILITY_PATH,
        tags: ['Territories'],
        summary: 'Grant CURATOR (SYSTEM_ADMIN) or MODERATOR (CURATOR or SYSTEM_ADMIN) in a territory',
      },
    })
    .input(capabilityInput)
    .output(membershipOutput)
    .mutation(({ ctx, input }) => access.grantCapability(ctx, input)),

  revokeCapability: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: CAPABILITY_PATH, tags: ['Territories'], summary: 'Revoke a territory capability (idempotent)' },
      successStatus: 204,
    })
    .input(capabilityInput)
    .output(z.void())
    .mutation(({ ctx, input }) => access.revokeCapability(ctx, input)),
});
