import { z } from 'zod';
import { defineJob } from '../../platform/job.js';
import { payoutGatewayOf } from './payout-gateway.js';
import { syncPayoutStatuses } from './payout-status-sync.js';

/**
 * Every minute, and right after each `payouts-run`: submits PENDING payouts and settles PROCESSING ones with the
 * gateway's answer (idempotent; see payout-status-sync.ts). A gateway that does not answer fails the job (visible in
 * the operator view, retried by pg-boss); what was settled before stays settled.
 */
export const payoutStatusSyncJob = defineJob({
  queue: 'payout-status-sync',
  payload: z.object({ territoryId: z.uuid().optional() }).strict(),
  schedule: '* * * * *',
  pollingIntervalSeconds: 1,
  handle: async ({ em, clock, config }, payload) => {
    if (!config) throw new Error('payout-status-sync needs the process configuration');
    const gateway = payoutGatewayOf(config);
    if (!gateway) return;
    const result = await syncPayoutStatuses(em, gateway, clock.now(), payload.territoryId ?? null);
    if (result.errors.length > 0) {
      throw new Error(
        `The payout gateway did not answer for ${result.errors.length} payout(s): ${result.errors.map((e) => `${e.payoutId}: ${e.message}`).join('; ')}`,
      );
    }
  },
});
