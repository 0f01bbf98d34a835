import type { JobRunner } from '../../jobs/boss.js';
import { QUEUE_NAMES } from '../../jobs/registry.js';
import { AppError, notFound } from '../../platform/problems.js';
import { toPage } from '../../platform/pagination.js';

/** With JOBS__ENABLED=false this process has no pg-boss connection to read from. */
function requireRunner(jobs: JobRunner) {
  if (!jobs.isRunning()) throw new AppError('CONFLICT', 'JOBS_DISABLED', 'The job runner is disabled in this process (JOBS__ENABLED=false).');
}

function requireQueue(queue: string) {
  if (!QUEUE_NAMES.includes(queue)) throw notFound(`Queue "${queue}"`);
}

export async function queueStats(jobs: JobRunner) {
  requireRunner(jobs);
  return jobs.stats();
}

export async function failedJobs(jobs: JobRunner, queue: string, pageNumber: number, pageSize: number) {
  requireQueue(queue);
  requireRunner(jobs);
  const { items, total } = await jobs.failed(queue, (pageNumber - 1) * pageSize, pageSize);
  return toPage(items, total, pageNumber, pageSize);
}

export async function retryJob(jobs: JobRunner, queue: string, jobId: string) {
  requireQueue(queue);
  requireRunner(jobs);
  if (!(await jobs.retry(queue, jobId))) throw notFound('Failed job');
  return { queue, jobId, state: 'retry' as const };
}
