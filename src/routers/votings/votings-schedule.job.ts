import { z } from 'zod';
import { defineJob } from '../../platform/job.js';
import { runVotingsSchedule } from './votings.service.js';

/**
 * Opens Drafts at their `startsAtUtc` and closes Open votings at their `endsAtUtc` (results applied on close). A
 * voting that could not be moved is logged with its id and fails the run after all the others were handled, so it
 * shows among the queue's failed jobs (`GET /api/v1/admin/jobs`); it is still due, so every later run tries it again
 * until its cause is gone, without holding back the others.
 */
export const votingsScheduleJob = defineJob({
  queue: 'votings-schedule',
  payload: z.object({}).strict(),
  schedule: '* * * * *',
  handle: async ({ em, clock }) => {
    const { failed } = await runVotingsSchedule(em, clock.now());
    if (failed.length === 0) return;
    for (const f of failed) console.error(`[jobs] votings-schedule: voting ${f.votingId} (territory ${f.territoryId}) was not moved: ${f.error}`);
    throw new Error(`votings-schedule: ${failed.length} voting(s) not moved: ${failed.map((f) => `${f.votingId}: ${f.error}`).join('; ')}`);
  },
});
