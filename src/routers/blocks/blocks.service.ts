import type { EntityManager } from '@mikro-orm/postgresql';
import { AuditEntry } from '../../entities/audit.entity.js';
import { newId } from '../../platform/ids.js';
import { badRequest, notFound } from '../../platform/problems.js';

async function requireOtherUser(em: EntityManager, actorId: string, userId: string) {
  if (userId.toLowerCase() === actorId.toLowerCase()) throw badRequest('You cannot block yourself.', 'CANNOT_BLOCK_SELF');
  const rows = await em.execute('select 1 from app_user where id = ? and deleted_at_utc is null', [userId]);
  if (rows.length === 0) throw notFound('User');
}

/**
 * The caller blocks a user: their content disappears from the caller's feed, map and lists. Idempotent (blocking
 * again changes nothing); a new block is audited.
 */
export async function blockUser(em: EntityManager, actorId: string, userId: string): Promise<void> {
  await requireOtherUser(em, actorId, userId);
  await em.transactional(async (tx) => {
    // `on conflict do nothing`: concurrent blocks of the same pair write one row and one audit entry.
    const inserted = await tx.execute<{ id: string }[]>(
      `insert into user_block (id, created_at_utc, blocker_user_id, blocked_user_id) values (?, now(), ?, ?)
       on conflict (blocker_user_id, blocked_user_id) do nothing returning id`,
      [newId(), actorId, userId],
    );
    if (inserted.length === 0) return;
    tx.create(AuditEntry, { actorUserId: actorId, action: 'user.blocked', subjectType: 'User', subjectId: userId, data: {} });
  });
}

/** The caller unblocks a user. Idempotent (204 when there was no block); a removed block is audited. */
export async function unblockUser(em: EntityManager, actorId: string, userId: string): Promise<void> {
  await requireOtherUser(em, actorId, userId);
  await em.transactional(async (tx) => {
    const removed = await tx.execute<{ id: string }[]>('delete from user_block where blocker_user_id = ? and blocked_user_id = ? returning id', [
      actorId,
      userId,
    ]);
    if (removed.length === 0) return;
    tx.create(AuditEntry, { actorUserId: actorId, action: 'user.unblocked', subjectType: 'User', subjectId: userId, data: {} });
  });
}

/** Users the caller blocked: content by them is hidden from the caller. */
export async function blockedUserIdsOf(em: EntityManager, userId: string): Promise<string[]> {
  const rows = await em.execute<{ blocked_user_id: string }[]>('select blocked_user_id from user_block where blocker_user_id = ?', [userId]);
  return rows.map((r) => r.blocked_user_id);
}
