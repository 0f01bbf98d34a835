import { z } from 'zod';
import { TERRITORY_CAPABILITIES, type TerritoryCapability } from '../../entities/membership.entity.js';
import { SYSTEM_PERMISSIONS, type SystemPermission } from '../../entities/user.entity.js';
import { zId } from '../../platform/ids.js';

/** Case-insensitive, underscores optional: SYSTEM_ADMIN, SystemAdmin, system_admin... all name SYSTEM_ADMIN. */
const lenientName = <T extends string>(canonical: readonly T[], label: string) => {
  const byKey = new Map(canonical.map((name) => [name.replace(/_/g, ''), name]));
  return z
    .string()
    .transform((value, ctx) => {
      const name = byKey.get(
        value
          .trim()
          .toUpperCase()
          .replace(/[_\s-]/g, ''),
      );
      if (!name) {
        ctx.addIssue({ code: 'custom', message: `must be ${label}` });
        return z.NEVER;
      }
      return name;
    })
    .meta({ description: `One of ${canonical.join(', ')} (case-insensitive; SystemAdmin-style spellings accepted)` });
};

export const zPermission = lenientName<SystemPermission>(SYSTEM_PERMISSIONS, SYSTEM_PERMISSIONS.join(' or '));
export const zCapability = lenientName<TerritoryCapability>(TERRITORY_CAPABILITIES, TERRITORY_CAPABILITIES.join(' or '));

export const permissionInput = z.object({ userId: zId, permission: zPermission });
export const capabilityInput = z.object({ territoryId: zId, userId: zId, capability: zCapability });

export const userPermissionsOutput = z.object({ userId: z.uuid(), permissions: z.array(z.enum(SYSTEM_PERMISSIONS)) }).meta({ id: 'UserPermissions' });

/** The membership response is the memberships domain's (one `Membership` component in the document). */
export { membershipOutput } from '../memberships/memberships.schemas.js';
