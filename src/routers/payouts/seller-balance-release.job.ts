import { z } from 'zod';
import { defineJob } from '../../platform/job.js';
import { releaseSellerBalances } from './seller-balance-release.js';

/** Every minute: seller transactions past their ready time move pending -> ready (idempotent; see seller-balance-release.ts). */
export const sellerBalanceReleaseJob = defineJob({
  queue: 'seller-balance-release',
  payload: z.object({}).strict(),
  schedule: '* * * * *',
  handle: async ({ em, clock }) => {
    await releaseSellerBalances(em, clock.now());
  },
});
