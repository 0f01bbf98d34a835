/**
 * The `seller-balance-release` job's work (spec "Seller balance": ready = past retention and minimum; Payout rules 2-3;
 * DESIGN section 13 "Payout jobs"). A seller transaction is due when its ready time has passed (its
 * `readyForPayoutAtUtc`, or its payment time plus the territory's current retention period when that is later; no
 * payout configuration: 0 days). Due money stays pending until the seller's releasable amount in that territory and
 * currency reaches the territory's current `minimumPayoutAmountInCents` (amounts accumulate until then): releasable =
 * the due pending transactions plus what is already ready and not in a live payout (money released before, or given
 * back by a failed payout). When it does, every due transaction of the seller there becomes READY and its net amount
 * moves seller_pending -> seller_ready in a ledger transaction keyed `seller-tx:{id}:ready`. A minimum lowered later
 * releases at the next run; money released under a lower minimum stays ready (money is never moved back) and the
 * payout run pays it only once the ready total reaches the current minimum (its own check, payouts-run.ts).
 *
 * Idempotent and safe to run concurrently: one database transaction per seller, territory and currency locks the due
 * rows (in id order), decides on the amounts read under those locks, and flips them from PENDING (a concurrent run
 * waits, then finds them READY and skips them); the ledger keys are unique.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, pgArray } from '../../db/sql.js';
import { postLedgerTransactions } from '../ledger/ledger.js';
import { liveLinesOf } from './payouts-run.js';
import { EFFECTIVE_READY_AT } from './seller-balance.queries.js';

/** Sellers (per territory and currency) examined per query; the job loops until none is left. */
const BATCH = 200;

/** SQL: the current minimum payout of the territory `territory` (an SQL expression); 0 without an active configuration. */
const minimumOf = (territory: string) =>
  `coalesce((select pc.minimum_payout_amount_in_cents from payout_config pc where pc.territory_id = ${territory} and pc.is_active), 0)`;

/** SQL: what the seller has ready and in no live payout in a territory and currency (SQL expressions), through `seller_transaction_seller_idx`. */
const unclaimedReadyOf = (seller: string, territory: string, currency: string) =>
  `(select coalesce(sum(r.net_amount_in_cents - ${liveLinesOf('r.id')}), 0) from seller_transaction r
     where r.seller_user_id = ${seller} and r.territory_id = ${territory} and r.currency = ${currency} and r.status = 'READY')`;

interface Group {
  territory_id: string;
  seller_user_id: string;
  currency: string;
}

/** Releases the due transactions of one seller in one territory and currency when they reach the minimum; how many it moved. */
async function releaseGroup(em: EntityManager, group: Group, now: Date): Promise<number> {
  return em.transactional(async (tx) => {
    const due = await execSql<{ id: string; net: string }>(
      tx,
      `select st.id, st.net_amount_in_cents::text as net from seller_transaction st
        where st.seller_user_id = ? and st.territory_id = ? and st.currency = ? and st.status = 'PENDING' and ${EFFECTIVE_READY_AT} <= ?
        order by st.id for update of st`,
      [group.seller_user_id, group.territory_id, group.currency, now],
    );
    if (due.length === 0) return 0;
    // Read after the locks, in a statement of its own: the current minimum and what is ready now.
    const [sums] = await execSql<{ minimum: string; ready: string }>(
      tx,
      `select ${minimumOf('?::uuid')}::text as minimum, ${unclaimedReadyOf('?::uuid', '?::uuid', '?')}::text as ready`,
      [group.territory_id, group.seller_user_id, group.territory_id, group.currency],
    );
    const releasable = due.reduce((sum, r) => sum + Number(r.net), 0) + Number(sums!.ready);
    if (releasable < Number(sums!.minimum)) return 0;
    const flipped = await execSql<{ id: string; net: string }>(
      tx,
      `update seller_transaction st set status = 'READY', ready_for_payout_at_utc = ${EFFECTIVE_READY_AT}, updated_at_utc = ?
        where st.id = any(?::uuid[]) and st.status = 'PENDING' returning st.id, st.net_amount_in_cents::text as net`,
      [now, pgArray(due.map((r) => r.id))],
    );
    await postLedgerTransactions(
      tx,
      flipped
        .filter((r) => Number(r.net) > 0)
        .map((r) => ({
          idempotencyKey: `seller-tx:${r.id}:ready`,
          territoryId: group.territory_id,
          currency: group.currency,
          entries: [
            { account: { kind: 'seller_pending' as const, ownerUserId: group.seller_user_id }, amountInCents: -Number(r.net) },
            { account: { kind: 'seller_ready' as const, ownerUserId: group.seller_user_id }, amountInCents: Number(r.net) },
          ],
        })),
    );
    return flipped.length;
  });
}

/** Releases every seller's due transactions that reach the minimum; returns how many transactions this run moved. */
export async function releaseSellerBalances(em: EntityManager, now: Date): Promise<number> {
  let moved = 0;
  let after: Group = { territory_id: '00000000-0000-0000-0000-000000000000', seller_user_id: '00000000-0000-0000-0000-000000000000', currency: '' };
  for (;;) {
    // A page of the sellers (per territory and currency) with due money, with what they have ready and their minimum:
    // the ones that cannot reach it yet are not opened (each opened one is decided again under its locks).
    const page = await execSql<Group & { due: string; ready: string; minimum: string }>(
      em,
      `select g.territory_id, g.seller_user_id, g.currency, g.due::text as due,
              ${unclaimedReadyOf('g.seller_user_id', 'g.territory_id', 'g.currency')}::text as ready, ${minimumOf('g.territory_id')}::text as minimum
         from (select st.territory_id, st.seller_user_id, st.currency, sum(st.net_amount_in_cents) as due
                 from seller_transaction st
                where st.status = 'PENDING' and ${EFFECTIVE_READY_AT} <= ? and (st.territory_id, st.seller_user_id, st.currency) > (?::uuid, ?::uuid, ?)
                group by st.territory_id, st.seller_user_id, st.currency
                order by st.territory_id, st.seller_user_id, st.currency limit ${BATCH}) g
        order by g.territory_id, g.seller_user_id, g.currency`,
      [now, after.territory_id, after.seller_user_id, after.currency],
    );
    for (const group of page) {
      if (Number(group.due) + Number(group.ready) >= Number(group.minimum)) moved += await releaseGroup(em, group, now);
    }
    if (page.length < BATCH) return moved;
    const last = page.at(-1)!;
    after = { territory_id: last.territory_id, seller_user_id: last.seller_user_id, currency: last.currency };
  }
}
