import { execSql, runHotRead } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { UserInterest } from '../../entities/preferences.entity.js';
import { badRequest } from '../../platform/problems.js';
import { interestsOfQuery } from './interests.queries.js';
import { isStorableTag, MAX_INTERESTS_PER_USER } from './interests.schemas.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

/** The user's tags, oldest first. */
export async function listInterests(ctx: ServiceContext): Promise<string[]> {
  const rows = await runHotRead<{ tag: string }>(ctx, interestsOfQuery(ctx.user.id));
  return rows.map((row) => row.tag);
}

/**
 * Adds a normalized tag unless the user already has it. The 11th distinct tag is a 400. Additions by one user
 * are serialized by a transaction-scoped advisory lock, so concurrent requests cannot pass the limit together.
 */
export async function addInterest(ctx: ServiceContext, input: { interestTag: string }) {
  const { em } = ctx;
  const userId = ctx.user.id;
  const tag = input.interestTag;
  const added = await em.transactional(async (tx) => {
    await execSql(tx, 'select pg_advisory_xact_lock(hashtextextended(?, 0))', [`user-interests:${userId}`]);
    const existing = await execSql<{ tag: string }>(tx, 'select tag from user_interest where user_id = ?', [userId]);
    if (existing.some((row) => row.tag === tag)) return false;
    if (existing.length >= MAX_INTERESTS_PER_USER) {
      const message = `at most ${MAX_INTERESTS_PER_USER} interests per user`;
      throw badRequest(`interestTag: ${message}.`, 'INTEREST_LIMIT_REACHED', [{ field: 'interestTag', message }]);
    }
    tx.create(UserInterest, { userId, tag });
    await tx.flush();
    return true;
  });
  return { added, interests: await listInterests(ctx) };
}

/** Removes the tag; absent is fine (idempotent). */
export async function removeInterest(ctx: ServiceContext, input: { tag: string }) {
  // A tag that could never be stored (control characters, NUL...) is absent: nothing to delete, nothing sent to SQL.
  if (!isStorableTag(input.tag)) return;
  await ctx.em.nativeDelete(UserInterest, { userId: ctx.user.id, tag: input.tag });
}

/** Account deletion: the interests go. */
export const eraseInterests: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from user_interest where user_id = ?', [userId]);
};
