import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import { defineJob } from '../../platform/job.js';
import { readConfigNumber } from '../system-config/system-config.queries.js';

export const RETENTION_KEY = 'Users:DeletedAccountRetentionDays';
const RETENTION_DEFAULT_DAYS = 180;

/**
 * Ends the legal retention of deleted accounts: past `Users:DeletedAccountRetentionDays`, the national id, foreign
 * document and provider identity kept on a deleted account are cleared, so the same person may sign up again.
 * Idempotent: a cleared account no longer matches.
 */
export async function releaseDeletedAccounts(em: EntityManager, now: Date): Promise<number> {
  const days = await readConfigNumber(em, RETENTION_KEY, RETENTION_DEFAULT_DAYS);
  const released = await execSql<{ id: string }>(
    em,
    `update app_user set cpf = null, foreign_document = null, external_id = 'erased:' || id::text
      where deleted_at_utc is not null and deleted_at_utc <= ?::timestamptz - make_interval(days => ?)
        and (cpf is not null or foreign_document is not null or external_id not like 'erased:%')
      returning id`,
    [now, days],
  );
  return released.length;
}

export const deletedAccountsJob = defineJob({
  queue: 'deleted-accounts',
  payload: z.object({}).strict(),
  schedule: '17 3 * * *',
  handle: ({ em, clock }) => releaseDeletedAccounts(em, clock.now()).then(() => undefined),
});
