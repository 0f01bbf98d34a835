import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { adminProcedure } from '../../trpc/procedures.js';
import { failedInput, failedJobPage, queueStatsOutput, retryInput, retryOutput } from './jobs.schemas.js';
import * as jobs from './jobs.service.js';

const TAGS = ['Jobs'];

/** Operator views of the pg-boss queues (SYSTEM_ADMIN). */
export const jobsRouter = router({
  stats: adminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/admin/jobs', tags: TAGS, summary: 'Live counts per queue (queued, active, failed, deferred)' } })
    .output(z.array(queueStatsOutput))
    .query(({ ctx }) => jobs.queueStats(ctx.deps.jobs)),

  failed: adminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/admin/jobs/{queue}/failed', tags: TAGS, summary: 'Failed jobs of a queue, most recent first (paged)' } })
    .input(failedInput)
    .output(failedJobPage)
    .query(({ ctx, input }) => jobs.failedJobs(ctx.deps.jobs, input.queue, input.pageNumber, input.pageSize)),

  retry: adminProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/admin/jobs/{queue}/{jobId}/retry', tags: TAGS, summary: 'Put a failed job back in its queue' } })
    .input(retryInput)
    .output(retryOutput)
    .mutation(({ ctx, input }) => jobs.retryJob(ctx.deps.jobs, input.queue, input.jobId)),
});
