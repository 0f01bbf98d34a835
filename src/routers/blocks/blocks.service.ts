import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { newId } from '../../platform/ids.js';
import { badRequest, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

async function requireOtherUser(em: EntityManager, actorId: string, userId: string) {
  if (userId.toLowerCase() === actorId.toLowerCase()) throw badRequest('You cannot block yourself.', 'CANNOT_BLOCK_SELF');
  const rows = await execSql(em, 'select 1 from app_user where id = ? and deleted_at_utc is null', [userId]);
  if (rows.length === 0) throw notFound('User');
}

/**
 * The caller blocks a user: their content disappears from the caller's feed, map and lists. Idempotent (blocking
 * again changes nothing); a new block is audited.
 */
export async function blockUser(ctx: ServiceContext, input: { userId: string }): Promise<void> {
  const { em, user } = ctx;
  await requireOtherUser(em, user.id, input.userId);
  await em.transactional(async (tx) => {
    // `on conflict do nothing`: concurrent blocks of the same pair write one row and one audit entry.
    const inserted = await execSql<{ id: string }>(
      tx,
      `insert into user_block (id, created_at_utc, blocker_user_id, blocked_user_id) values (?, now(), ?, ?)
       on conflict (blocker_user_id, blocked_user_id) do nothing returning id`,
      [newId(), user.id, input.userId],
    );
    if (inserted.length === 0) return;
    audit(tx, { actorUserId: user.id, action: 'user.blocked', subjectType: 'User', subjectId: input.userId });
  });
}

/** The caller unblocks a user. Idempotent (204 when there was no block); a removed block is audited. */
export async function unblockUser(ctx: ServiceContext, input: { userId: string }): Promise<void> {
  const { em, user } = ctx;
  await requireOtherUser(em, user.id, input.userId);
  await em.transactional(async (tx) => {
    const removed = await execSql<{ id: string }>(tx, 'delete from user_block where blocker_user_id = ? and blocked_user_id = ? returning id', [
      user.id,
      input.userId,
    ]);
    if (removed.length === 0) return;
    audit(tx, { actorUserId: user.id, action: 'user.unblocked', subjectType: 'User', subjectId: input.userId });
  });
}

/** Account deletion: the user's blocks, and other people's blocks of them (nobody is left to block), go. */
export const eraseBlocks: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from user_block where blocker_user_id = ? or blocked_user_id = ?', [userId, userId]);
};
