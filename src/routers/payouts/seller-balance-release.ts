/**
 * The `seller-balance-release` job's work (DESIGN section 13 "Payout jobs"): each PENDING seller transaction whose
 * ready time has passed (its `readyForPayoutAtUtc`, or its payment time plus the territory's current retention period
 * when that is later; no payout configuration: 0 days) becomes READY, and its net amount moves seller_pending ->
 * seller_ready in a ledger transaction keyed `seller-tx:{id}:ready`. Whatever the minimum payout: ready money waits
 * in seller_ready until a payout takes it.
 *
 * Idempotent and safe to run concurrently: each move is its own database transaction that flips the row from PENDING
 * under its row lock (a concurrent run waits, then finds it READY and skips it), and the ledger key is unique.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import { postLedgerTransaction } from '../ledger/ledger.js';
import { EFFECTIVE_READY_AT } from './seller-balance.queries.js';

/** Transactions released per batch; the job loops until none are due. */
const BATCH = 200;

interface DueRow {
  id: string;
  territory_id: string;
  seller_user_id: string;
  currency: string;
  net: string;
}

/** Releases every due seller transaction; returns how many this run moved. */
export async function releaseSellerBalances(em: EntityManager, now: Date): Promise<number> {
  let moved = 0;
  let afterId = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const due = await execSql<DueRow>(
      em,
      `select st.id, st.territory_id, st.seller_user_id, st.currency, st.net_amount_in_cents::text as net
         from seller_transaction st
        where st.status = 'PENDING' and st.id > ? and ${EFFECTIVE_READY_AT} <= ?
        order by st.id limit ${BATCH}`,
      [afterId, now],
    );
    for (const row of due) {
      const released = await em.transactional(async (tx) => {
        const flipped = await execSql<{ id: string }>(
          tx,
          `update seller_transaction st set status = 'READY', ready_for_payout_at_utc = ${EFFECTIVE_READY_AT}, updated_at_utc = ?
            where st.id = ? and st.status = 'PENDING' returning st.id`,
          [now, row.id],
        );
        if (flipped.length === 0) return false;
        const net = Number(row.net);
        if (net > 0) {
          await postLedgerTransaction(tx, {
            idempotencyKey: `seller-tx:${row.id}:ready`,
            territoryId: row.territory_id,
            currency: row.currency,
            entries: [
              { account: { kind: 'seller_pending', ownerUserId: row.seller_user_id }, amountInCents: -net },
              { account: { kind: 'seller_ready', ownerUserId: row.seller_user_id }, amountInCents: net },
            ],
          });
        }
        return true;
      });
      if (released) moved += 1;
    }
    if (due.length < BATCH) return moved;
    afterId = due.at(-1)!.id;
  }
}
