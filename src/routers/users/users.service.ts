import type { ServiceContext } from '../../platform/service-context.js';
import { User, UserPermission } from '../../entities/user.entity.js';
import { unauthorized } from '../../platform/problems.js';
import type { MeOutput } from './users.schemas.js';

/** The caller's profile, read fresh (not from the bearer cache) so a just-changed permission shows at once. */
export async function me(ctx: ServiceContext): Promise<MeOutput> {
  const { em } = ctx;
  const userId = ctx.user.id;
  const user = await em.findOne(User, { id: userId, deletedAtUtc: null });
  // Deleted between the bearer check and now.
  if (!user) throw unauthorized('The token belongs to no active user.');
  const permissions = await em.find(UserPermission, { userId }, { orderBy: { permission: 'asc' } });
  return {
    id: user.id,
    displayName: user.displayName,
    email: user.email ?? null,
    identityVerificationStatus: user.identityVerificationStatus,
    twoFactorEnabled: user.twoFactorEnabled,
    permissions: permissions.map((p) => p.permission),
  };
}
