import { execSql, runHotRead } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { unauthorized } from '../../platform/problems.js';
import { announceCallerChange, forgetCachedUser } from '../../policy/caller.js';
import { requireStepUp } from '../auth/step-up.js';
import type { SecondFactorProof } from '../auth/two-factor.service.js';
import { accountErasers } from '../../platform/account-erasure.js';
import { meQuery, type MeRow } from './users.queries.js';
import type { MeOutput } from './users.schemas.js';

/** The name other people see on what a deleted account left (posts, comments, events). */
export const DELETED_USER_NAME = 'Deleted user';

/** The caller's profile, read fresh (not from the bearer cache) so a just-changed permission shows at once. */
export async function me(ctx: ServiceContext): Promise<MeOutput> {
  // Given the context, a hot read: on the pool, the request's manager left unforked.
  const [user] = await runHotRead<MeRow>(ctx, meQuery(ctx.user.id), { prepared: true });
  // Deleted between the bearer check and now.
  if (!user) throw unauthorized('The token belongs to no active user.');
  return {
    id: user.id,
    displayName: user.display_name,
    email: user.email,
    identityVerificationStatus: user.identity_verification_status,
    twoFactorEnabled: user.two_factor_enabled,
    permissions: user.permissions,
  };
}

/**
 * Deletes the caller's account (after a step-up): in one transaction every domain erases its data of the user
 * (registered erasers: sessions, permissions, preferences, blocks, memberships, notifications, requests, evidence,
 * media...), and the account row is anonymised and marked deleted, which ends every token and, through the
 * announced change, every open socket in every process. The national id and the provider identity stay on the
 * deleted row (a new sign-up with them is refused) until the retention period of
 * `Users:DeletedAccountRetentionDays` ends and the deleted-accounts job clears them. Stored files go after commit.
 */
export async function deleteAccount(ctx: ServiceContext, input: SecondFactorProof): Promise<void> {
  await requireStepUp(ctx, input);
  const userId = ctx.user.id;
  const at = ctx.clock.now();
  const afterCommit: (() => Promise<void>)[] = [];
  await ctx.em.transactional(async (tx) => {
    const locked = await execSql<{ id: string }>(tx, 'select id from app_user where id = ? and deleted_at_utc is null for update', [userId]);
    if (locked.length === 0) throw unauthorized('The token belongs to no active user.');
    for (const erase of accountErasers().values()) {
      await erase({ em: tx, userId, at, storage: ctx.storage, afterCommit: (work) => afterCommit.push(work) });
    }
    await execSql(
      tx,
      `update app_user set display_name = ?, email = null, phone_number = null, identity_verification_status = 'Unverified',
              two_factor_enabled = false, two_factor_secret = null, two_factor_pending_secret = null, two_factor_last_step = null,
              deleted_at_utc = ?, tokens_valid_after_utc = ?
        where id = ?`,
      [DELETED_USER_NAME, at, at, userId],
    );
    audit(tx, { actorUserId: userId, action: 'user.deleted', subjectType: 'User', subjectId: userId, data: { erased: [...accountErasers().keys()] } });
    await announceCallerChange(tx, { userId });
  });
  forgetCachedUser(userId);
  // Files of a committed deletion; a failure here leaves an orphan file, never a half-deleted account.
  for (const work of afterCommit) await work().catch(() => undefined);
}
