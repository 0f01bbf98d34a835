/**
 * Payout operations (DESIGN section 13 "Payout jobs"): run on demand, the territory's payouts (SYSTEM_ADMIN or
 * FINANCIAL_MANAGER), the seller's own. The payouts themselves are written by the jobs only (payouts-run.ts,
 * payout-status-sync.ts).
 */
import { runHotRead } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import type { JobRunner } from '../../jobs/boss.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { AppError, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { MARKETPLACE, requireFinance } from './payout-config.service.js';
import { payoutGatewayOf } from './payout-gateway.js';
import { payoutsRunJob } from './payouts-run.job.js';
import { type PayoutFilter, type PayoutRow, payoutsCountQuery, payoutsPageQuery, sellerPayouts, territoryPayouts } from './payouts.queries.js';
import type { MyPayoutsInput, PayoutListInput, PayoutOutput } from './payouts.schemas.js';
import { sellerBalanceOf } from './seller-balance.service.js';

/**
 * `POST .../payouts/run`: queues a `payouts-run` job for the territory (whatever its frequency) and answers its id
 * (202). 409 PAYOUTS_DISABLED without a payout gateway, 409 JOBS_DISABLED when this process runs no job queue.
 */
export async function requestPayoutRun(ctx: ServiceContext, jobs: JobRunner, input: { territoryId: string }): Promise<{ jobId: string }> {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  requireFinance(ctx, 'run payouts');
  if (!payoutGatewayOf(ctx.config)) throw new AppError('CONFLICT', 'PAYOUTS_DISABLED', 'Payouts are off in this deployment (PAYOUTS__PROVIDER=none).');
  if (!jobs.isRunning()) throw new AppError('CONFLICT', 'JOBS_DISABLED', 'The job runner is disabled in this process (JOBS__ENABLED=false).');
  const jobId = await jobs.send(payoutsRunJob, { territoryId: access.territoryId });
  if (!jobId) throw new Error('pg-boss accepted no payouts-run job');
  audit(ctx.em, {
    actorUserId: ctx.user.id,
    action: 'payouts.run-requested',
    subjectType: 'Territory',
    subjectId: access.territoryId,
    territoryId: access.territoryId,
    data: { jobId },
  });
  await ctx.em.flush();
  return { jobId };
}

const toOutput = (r: PayoutRow): PayoutOutput => ({
  id: r.id,
  territoryId: r.territory_id,
  sellerUserId: r.seller_user_id,
  amountInCents: Number(r.amount),
  currency: r.currency,
  status: r.status,
  transactionIds: r.transaction_ids,
  lines: r.lines,
  failureReason: r.failure_reason,
  createdAtUtc: r.created_at,
  completedAtUtc: r.completed_at,
});

/** One page of the payouts `filter` matches (newest first), with the total even past the last page; on the pool. */
async function page(ctx: ServiceContext, filter: PayoutFilter, pageNumber: number, pageSize: number) {
  const slice = pageOffset(pageNumber, pageSize);
  const rows = await runHotRead<PayoutRow>(ctx, payoutsPageQuery(filter, slice));
  let total = Number(rows[0]?.total ?? 0);
  if (rows.length === 0 && slice.offset > 0) {
    const [count] = await runHotRead<{ total: string }>(ctx, payoutsCountQuery(filter));
    total = Number(count?.total ?? 0);
  }
  return toPage(rows.map(toOutput), total, pageNumber, pageSize);
}

/** `GET .../payouts`: the territory's payouts, newest first, optionally of one status or seller. */
export async function listPayouts(ctx: ServiceContext, input: PayoutListInput) {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  requireFinance(ctx, "read the territory's payouts");
  return page(ctx, territoryPayouts(access.territoryId, input.status, input.sellerUserId), input.pageNumber, input.pageSize);
}

/** `GET .../seller-balance/me/payouts`: the caller's payouts in the territory, newest first; 404 NO_SELLER_BALANCE before the first paid sale. */
export async function listMyPayouts(ctx: ServiceContext, input: MyPayoutsInput) {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  const balance = await sellerBalanceOf(ctx, access.territoryId, ctx.user.id);
  if (!balance) throw notFound('Seller balance', 'NO_SELLER_BALANCE');
  return page(ctx, sellerPayouts(ctx.user.id, access.territoryId), input.pageNumber, input.pageSize);
}
