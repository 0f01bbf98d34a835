import { z } from 'zod';
import { defineJob } from '../../platform/job.js';
import { payoutGatewayOf } from './payout-gateway.js';
import { payoutStatusSyncJob } from './payout-status-sync.job.js';
import { runPayouts } from './payouts-run.js';

/**
 * Payouts (see payouts-run.ts). Scheduled daily at 00:00 UTC with an empty payload: every territory whose active
 * configuration has automatic payouts on and whose frequency is due that day (Daily; Weekly on Mondays; Monthly on
 * the 1st; Manual never). Sent with a `territoryId` by `POST .../payouts/run`: that territory, whatever its frequency.
 * A status sync is sent right after, so with the fake gateway a run settles within seconds. A gateway that refused
 * a payout, or a territory whose run failed, fails the job once every territory was tried (visible in the operator
 * view; pg-boss retries it, and the retry resubmits the same payouts and claims only what is still unclaimed).
 */
export const payoutsRunJob = defineJob({
  queue: 'payouts-run',
  payload: z.object({ territoryId: z.uuid().optional() }).strict(),
  schedule: '0 0 * * *',
  pollingIntervalSeconds: 1,
  handle: async ({ em, clock, config, send }, payload) => {
    if (!config) throw new Error('payouts-run needs the process configuration');
    // Payouts off: nothing is claimed, ready money stays ready.
    const gateway = payoutGatewayOf(config);
    if (!gateway) return;
    const result = await runPayouts(em, gateway, clock.now(), payload.territoryId ?? null);
    if (result.submitted > 0 && send) await send(payoutStatusSyncJob, payload.territoryId ? { territoryId: payload.territoryId } : {});
    const failures = [
      ...result.failedTerritories.map((f) => `territory ${f.territoryId}: ${f.message}`),
      ...result.errors.map((e) => `payout ${e.payoutId} refused by the gateway: ${e.message}`),
    ];
    if (failures.length > 0) throw new Error(`payouts-run: ${failures.length} failure(s): ${failures.join('; ')}`);
  },
});
