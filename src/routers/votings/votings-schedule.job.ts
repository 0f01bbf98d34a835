import { z } from 'zod';
import { defineJob } from '../../platform/job.js';
import { runVotingsSchedule } from './votings.service.js';

/** Opens Drafts at their `startsAtUtc` and closes Open votings at their `endsAtUtc` (results applied on close). */
export const votingsScheduleJob = defineJob({
  queue: 'votings-schedule',
  payload: z.object({}).strict(),
  schedule: '* * * * *',
  handle: async ({ em, clock }) => {
    await runVotingsSchedule(em, clock.now());
  },
});
