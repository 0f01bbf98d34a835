import type { EntityManager } from '@mikro-orm/postgresql';
import type { PgBoss } from 'pg-boss';
import { z } from 'zod';
import { execSql } from '../../db/sql.js';
import { REPORT_TARGET_TYPES } from '../../entities/report.entity.js';
import { defineJob } from '../../platform/job.js';
import { readConfigNumber } from '../system-config/system-config.queries.js';
import { targetsOverThreshold } from './reports.queries.js';
import { applySanction, type SanctionTarget } from './reports.sanctions.js';

export const DEFAULT_THRESHOLD_REPORTERS = 3;
export const DEFAULT_THRESHOLD_WINDOW_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Sanctions every target (or the one given) whose distinct reporters within `Reports:ThresholdWindowDays` reached
 * `Reports:ThresholdReporters`, one transaction per target. Idempotent, also when runs overlap: a target is
 * sanctioned once (the insert into `report_sanction` is `on conflict do nothing` on its unique key, and only the run
 * whose insert went through applies the effect). Answers how many sanctions this run applied.
 */
export async function runReportThreshold(em: EntityManager, now: Date, target?: SanctionTarget): Promise<number> {
  const threshold = await readConfigNumber(em, 'Reports:ThresholdReporters', DEFAULT_THRESHOLD_REPORTERS);
  const windowDays = await readConfigNumber(em, 'Reports:ThresholdWindowDays', DEFAULT_THRESHOLD_WINDOW_DAYS);
  const due = await targetsOverThreshold(em, { since: new Date(now.getTime() - windowDays * DAY_MS), threshold, target });
  let applied = 0;
  for (const row of due) {
    const sanctioned = await em
      .fork()
      .transactional((tx) =>
        applySanction(
          tx,
          { territoryId: row.territory_id, targetType: row.target_type, targetId: row.target_id },
          { source: 'THRESHOLD', reporterCount: row.reporters, actorUserId: null, at: now },
        ),
      );
    if (sanctioned) applied++;
  }
  return applied;
}

/**
 * The automatic sanction of reported targets. A report that brings its target to the threshold sends the job for
 * that target in its own transaction (`sendThresholdJob`), so the sanction follows within the worker's polling
 * interval; the schedule (every minute, every target) is the safety net for a send that never ran (a process
 * without a job runner, a job that failed its retries).
 */
export const reportThresholdJob = defineJob({
  queue: 'report-threshold',
  payload: z
    .object({
      territoryId: z.uuid().optional(),
      targetType: z.enum(REPORT_TARGET_TYPES).optional(),
      targetId: z.uuid().optional(),
    })
    .strict(),
  schedule: '* * * * *',
  handle: async ({ em, clock }, payload) => {
    const target =
      payload.territoryId && payload.targetType && payload.targetId
        ? { territoryId: payload.territoryId, targetType: payload.targetType, targetId: payload.targetId }
        : undefined;
    await runReportThreshold(em, clock.now(), target);
  },
});

/** The process's job runner as far as sending goes: structurally src/jobs/boss.ts `JobRunner` (which lists this job). */
export interface JobSender {
  readonly boss: Pick<PgBoss, 'send'>;
  isRunning(): boolean;
}

/** Sends for one target within one slot of this many seconds make one job (pg-boss singleton key and slot). */
const SEND_SINGLETON_SECONDS = 60;

/**
 * Runs one of pg-boss's statements (`$n` parameters) on the caller's unit of work, so the job row is written in the
 * caller's transaction. MikroORM takes `?` placeholders: each `$n` becomes one, with its value in text order.
 */
function executeOnUnitOfWork(em: EntityManager) {
  return {
    async executeSql(text: string, values: unknown[] = []) {
      const params: unknown[] = [];
      const sql = text.replace(/\$(\d+)/g, (_, n: string) => {
        params.push(values[Number(n) - 1]);
        return '?';
      });
      return { rows: await execSql<Record<string, unknown>>(em, sql, params) };
    },
  };
}

/**
 * Sends the threshold job for one target inside the caller's transaction: the job row commits with the report that
 * crossed the threshold (a worker can only see it once that report is visible) and a rollback sends nothing. The
 * singleton key makes the sends of one target within a slot one job; the job itself is idempotent either way.
 * Without a started job runner in this process (JOBS__ENABLED=false) nothing is sent: the schedule of the worker
 * processes sanctions the target within a minute.
 */
export async function sendThresholdJob(tx: EntityManager, jobs: JobSender | null, target: SanctionTarget): Promise<boolean> {
  if (!jobs?.isRunning()) return false;
  const payload = reportThresholdJob.payload.parse(target);
  await jobs.boss.send(reportThresholdJob.queue, payload, {
    singletonKey: `${target.territoryId}:${target.targetType}:${target.targetId}`,
    singletonSeconds: SEND_SINGLETON_SECONDS,
    db: executeOnUnitOfWork(tx),
  });
  return true;
}
