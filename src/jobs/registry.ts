/**
 * Every job of the service, in one table: `boss.ts` creates a queue for each, runs its handler (workers only) and
 * its schedule. A domain adds its job by exporting a `defineJob(...)` from `<domain>/<name>.job.ts` and listing it
 * here.
 */
import { authCleanupJob } from '../routers/auth/auth-cleanup.job.js';
import { mediaCleanupJob } from '../routers/media/media-cleanup.job.js';
import { outboxDispatchJob } from '../routers/notifications/outbox-dispatch.job.js';
import { deletedAccountsJob } from '../routers/users/deleted-accounts.job.js';
import { reportThresholdJob } from '../routers/reports/report-threshold.job.js';
import { votingsScheduleJob } from '../routers/votings/votings-schedule.job.js';
import { sellerBalanceReleaseJob } from '../routers/payouts/seller-balance-release.job.js';
import { payoutsRunJob } from '../routers/payouts/payouts-run.job.js';
import { payoutStatusSyncJob } from '../routers/payouts/payout-status-sync.job.js';
import type { JobDefinition } from '../platform/job.js';

export const JOBS: readonly JobDefinition[] = [
  authCleanupJob,
  outboxDispatchJob,
  mediaCleanupJob,
  deletedAccountsJob,
  reportThresholdJob,
  votingsScheduleJob,
  sellerBalanceReleaseJob,
  payoutsRunJob,
  payoutStatusSyncJob,
];

export const QUEUE_NAMES: readonly string[] = JOBS.map((job) => job.queue);
