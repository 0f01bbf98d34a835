/**
 * The `payout-status-sync` job's work (DESIGN section 13 "Payout jobs"): first any PENDING payout is (re)submitted
 * (a run that crashed after claiming is finished here, idempotently by payout id), then the gateway is asked where
 * each PROCESSING payout stands, and the final answers are settled a chunk at a time, one database transaction per
 * chunk, under the payouts' row locks and then the row locks of the seller transactions they carry (in id order, so
 * two settles of parts of one transaction run one after the other and the second sees the first):
 * - COMPLETED: the ledger moves payouts_in_transit -> seller_paid under `payout:{id}:paid` (the platform's expense),
 *   the payout records its completion time, and each transaction it carries becomes PAID once its lines in
 *   COMPLETED payouts add up to its net (a transaction split over several payouts is PAID with its last part);
 * - FAILED: the ledger moves payouts_in_transit -> seller_ready under `payout:{id}:failed`, the payout records the
 *   reason, and its lines stop counting: each transaction it carried stays READY with that amount unpaid again, its
 *   `payout_id` moved to its latest live payout (cleared when none), so the next run pays that amount again; the
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
import { chunksOf, GATEWAY_BATCH, GATEWAY_CONCURRENCY, latestLivePayoutOf, mapConcurrently, submitPendingPayouts, type SubmitOutcome } from './payouts-run.js';

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
    // The transactions these payouts carry, locked in id order (a claim skips them meanwhile; a refund waits).
    await execSql(
      tx,
      `select st.id from seller_transaction st
        where st.id in (select l.seller_transaction_id from payout_line l where l.payout_id = any(?::uuid[])) order by st.id for update of st`,
      [pgArray(open.map((p) => p.id))],
    );
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
    // A payout's transactions are found through its lines (`payout_line_payout_transaction_unique`).
    const theirTransactions = `select l.seller_transaction_id from payout_line l where l.payout_id = any(?::uuid[])`;
    if (completed.length > 0) {
      const ids = pgArray(completed.map((p) => p.id));
      await execSql(tx, `update payout set status = 'COMPLETED', completed_at_utc = ?, updated_at_utc = ? where id = any(?::uuid[])`, [now, now, ids]);
      await execSql(
        tx,
        `update seller_transaction st set status = 'PAID', updated_at_utc = ?
          where st.id in (${theirTransactions}) and st.status = 'READY'
            and st.net_amount_in_cents = (select coalesce(sum(l.amount_in_cents), 0) from payout_line l join payout p on p.id = l.payout_id
                                           where l.seller_transaction_id = st.id and p.status = 'COMPLETED')`,
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
        `update seller_transaction st set updated_at_utc = ?,
                payout_id = ${latestLivePayoutOf('st.id')}
          where st.id in (${theirTransactions}) and st.status = 'READY'`,
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
