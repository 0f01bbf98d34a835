import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
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

/** The automatic sanction of reported targets: every minute, or for one target when sent with it. */
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
