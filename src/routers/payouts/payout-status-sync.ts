/**
 * The `payout-status-sync` job's work (DESIGN section 13 "Payout jobs"): first any PENDING payout is (re)submitted
 * (a run that crashed after claiming is finished here, idempotently by payout id), then the gateway is asked where
 * each PROCESSING payout stands, and the final answers are settled a chunk at a time, one database transaction per
 * chunk, under the payouts' row locks:
 * - COMPLETED: the ledger moves payouts_in_transit -> seller_paid under `payout:{id}:paid` (the platform's expense),
 *   the payout records its completion time and its seller transactions become PAID;
 * - FAILED: the ledger moves payouts_in_transit -> seller_ready under `payout:{id}:failed`, the payout records the
 *   reason, and its transactions leave it (`payout_id` cleared, still READY), so the next run pays them again; the
 *   failure is audited.
 * Each chunk is a few set-based statements whatever its size (one bulk ledger posting, one update per table and
 * outcome). A concurrent or repeated sync skips the payouts another one holds (`skip locked`) and finds settled ones
 * no longer PROCESSING, so it does nothing to them.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, pgArray } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { type LedgerPosting, postLedgerTransactions } from '../ledger/ledger.js';
import type { PayoutGateway, PayoutGatewayStatus } from './payout-gateway.js';
import { chunksOf, GATEWAY_BATCH, GATEWAY_CONCURRENCY, mapConcurrently, submitPendingPayouts, type SubmitOutcome } from './payouts-run.js';

type FinalAnswer = Exclude<PayoutGatewayStatus, { status: 'PROCESSING' }>;

interface OpenPayout {
  id: string;
  territory_id: string;
  seller_user_id: string;
  amount: string;
  currency: string;
  gateway_reference: string;
}

/** Settles payouts with the gateway's final answers; answers how many completed and failed (those no longer PROCESSING are left alone). */
async function settle(em: EntityManager, answers: Map<string, FinalAnswer>, now: Date): Promise<{ completed: number; failed: number }> {
  return em.transactional(async (tx) => {
    const open = await execSql<OpenPayout>(
      tx,
      `select id, territory_id, seller_user_id, amount_in_cents::text as amount, currency, gateway_reference from payout
        where id = any(?::uuid[]) and status = 'PROCESSING' order by id for update skip locked`,
      [pgArray([...answers.keys()])],
    );
    if (open.length === 0) return { completed: 0, failed: 0 };
    const completed = open.filter((p) => answers.get(p.id)!.status === 'COMPLETED');
    const failed = open.filter((p) => answers.get(p.id)!.status === 'FAILED');
    await postLedgerTransactions(
      tx,
      open.map((p): LedgerPosting => {
        const ok = answers.get(p.id)!.status === 'COMPLETED';
        const amount = Number(p.amount);
        return {
          idempotencyKey: `payout:${p.id}:${ok ? 'paid' : 'failed'}`,
          territoryId: p.territory_id,
          currency: p.currency,
          entries: [
            { account: { kind: 'payouts_in_transit' }, amountInCents: -amount },
            { account: { kind: ok ? 'seller_paid' : 'seller_ready', ownerUserId: p.seller_user_id }, amountInCents: amount },
          ],
        };
      }),
    );
    // A payout's transactions are found through its `transaction_ids` (primary-key lookups), checked against `payout_id`.
    const theirTransactions = `select unnest(transaction_ids)::uuid as id, id as payout_id from payout where id = any(?::uuid[])`;
    if (completed.length > 0) {
      const ids = pgArray(completed.map((p) => p.id));
      await execSql(tx, `update payout set status = 'COMPLETED', completed_at_utc = ?, updated_at_utc = ? where id = any(?::uuid[])`, [now, now, ids]);
      await execSql(
        tx,
        `update seller_transaction st set status = 'PAID', updated_at_utc = ? from (${theirTransactions}) x
          where st.id = x.id and st.payout_id = x.payout_id and st.status = 'READY'`,
        [now, ids],
      );
    }
    if (failed.length > 0) {
      const reasons = failed.map((p) => {
        const answer = answers.get(p.id)!;
        return answer.status === 'FAILED' ? answer.reason.slice(0, 500) : '';
      });
      const ids = pgArray(failed.map((p) => p.id));
      await execSql(
        tx,
        `update payout p set status = 'FAILED', failed_at_utc = ?, failure_reason = f.reason, updated_at_utc = ?
           from unnest(?::uuid[], ?::text[]) as f(id, reason) where p.id = f.id`,
        [now, now, ids, pgArray(reasons)],
      );
      await execSql(
        tx,
        `update seller_transaction st set payout_id = null, updated_at_utc = ? from (${theirTransactions}) x
          where st.id = x.id and st.payout_id = x.payout_id and st.status = 'READY'`,
        [now, ids],
      );
      failed.forEach((p, i) =>
        audit(tx, {
          actorUserId: null,
          action: 'payout.failed',
          subjectType: 'Payout',
          subjectId: p.id,
          territoryId: p.territory_id,
          data: {
            sellerUserId: p.seller_user_id,
            amountInCents: Number(p.amount),
            currency: p.currency,
            gatewayReference: p.gateway_reference,
            reason: reasons[i],
          },
        }),
      );
      await tx.flush();
    }
    return { completed: completed.length, failed: failed.length };
  });
}

export interface SyncResult {
  submitted: number;
  completed: number;
  failed: number;
  /** Gateway calls that did not answer; the payouts stay as they were for the next sync. */
  errors: SubmitOutcome['errors'];
}

/** Submits PENDING payouts and settles PROCESSING ones (of the territory, or all); idempotent and safe concurrently. */
export async function syncPayoutStatuses(em: EntityManager, gateway: PayoutGateway, now: Date, territoryId: string | null = null): Promise<SyncResult> {
  const submit = await submitPendingPayouts(em, gateway, now, territoryId);
  const result: SyncResult = { submitted: submit.submitted, completed: 0, failed: 0, errors: [...submit.errors] };
  const open = await execSql<{ id: string; gateway_reference: string }>(
    em,
    `select id, gateway_reference from payout where status = 'PROCESSING' and (?::uuid is null or territory_id = ?::uuid) order by created_at_utc, id`,
    [territoryId, territoryId],
  );
  for (const chunk of chunksOf(open, GATEWAY_BATCH)) {
    const answers = new Map<string, FinalAnswer>();
    await mapConcurrently(chunk, GATEWAY_CONCURRENCY, async (p) => {
      try {
        const answer = await gateway.getPayoutStatus({ payoutId: p.id, reference: p.gateway_reference });
        if (answer.status !== 'PROCESSING') answers.set(p.id, answer);
      } catch (error) {
        result.errors.push({ payoutId: p.id, message: error instanceof Error ? error.message : String(error) });
      }
    });
    if (answers.size === 0) continue;
    const settled = await settle(em, answers, now);
    result.completed += settled.completed;
    result.failed += settled.failed;
  }
  return result;
}
