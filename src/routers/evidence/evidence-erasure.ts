import { execSql } from '../../db/sql.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

/**
 * Account deletion: identity and residency documents are the most sensitive data held; rows go in the deletion's
 * transaction, files once it has committed (a failed deletion keeps both).
 */
export const eraseEvidence: AccountEraser = async ({ em, userId, storage, afterCommit }) => {
  const removed = await execSql<{ storage_key: string }>(em, 'delete from evidence where user_id = ? returning storage_key', [userId]);
  afterCommit(async () => {
    for (const { storage_key } of removed) await storage.remove(storage_key).catch(() => undefined);
  });
};
