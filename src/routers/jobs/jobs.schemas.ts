import { z } from 'zod';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput } from '../../platform/pagination.js';

export const queueStatsOutput = z
  .object({
    queue: z.string(),
    queued: z.number().int(),
    active: z.number().int(),
    failed: z.number().int(),
    deferred: z.number().int(),
    total: z.number().int(),
  })
  .meta({ id: 'QueueStats' });

export const failedJobOutput = z
  .object({
    id: z.uuid(),
    queue: z.string(),
    data: z.unknown(),
    output: z.unknown(),
    retryCount: z.number().int(),
    createdAtUtc: z.iso.datetime(),
    failedAtUtc: z.iso.datetime().nullable(),
  })
  .meta({ id: 'FailedJob' });

export const failedJobPage = pagedOutput(failedJobOutput).meta({ id: 'FailedJobPage' });

const queueName = z.string().min(1).max(100);

export const failedInput = z.object({ queue: queueName, ...pageInput });

export const retryInput = z.object({ queue: queueName, jobId: zId });

export const retryOutput = z.object({ queue: z.string(), jobId: z.uuid(), state: z.literal('retry') }).meta({ id: 'JobRetry' });
