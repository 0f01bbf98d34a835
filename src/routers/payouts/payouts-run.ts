/**
 * The `payouts-run` job's work (DESIGN section 13 "Payout jobs", spec Payout rules 3-6). A run over a territory:
 *
 * 1. Claim, in batches of CLAIM_BATCH_SELLERS sellers, one database transaction per batch, set-based: the batch's
 *    READY seller transactions that are in no payout are locked at once (`for update skip locked`, in seller order);
 *    the payouts are planned in code (`planPayouts`: below the territory's minimum a seller is skipped and the money
 *    waits in ready; above the maximum the total is cut into payouts of at most the maximum, a transaction is never
 *    split, one larger than the maximum is paid alone, the parts need not each reach the minimum, the total does);
 *    then one statement inserts the batch's payouts PENDING, one points their transactions at them (a compare-and-set
 *    on `payout_id is null`), and one bulk ledger posting moves each payout's amount seller_ready ->
 *    payouts_in_transit under `payout:{id}:sent`.
 * 2. Submit, outside any database transaction: every PENDING payout of the territory (this run's, and any a crashed
 *    run left behind) goes to the gateway with its id as the idempotency key; each chunk of answers is recorded in
 *    one statement (PROCESSING with the gateway's reference). A crash between the gateway calls and that update leaves
 *    the payouts PENDING; the next run (or status sync) asks the gateway again with the same ids and gets the same
 *    transfers back, so each transaction is paid exactly once.
 *
 * Two runs at once: rows one run has locked are skipped by the other (`skip locked`), which claims nothing of them;
 * rows it reads after the first committed fail `payout_id is null`. A refund of the same sale either locks the row
 * first (the run skips it; the refund goes through) or waits for the run and then answers 409 (the sale is in a
 * payout).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, pgArray } from '../../db/sql.js';
import type { PayoutFrequency } from '../../entities/payout-config.entity.js';
import { newId } from '../../platform/ids.js';
import { postLedgerTransactions } from '../ledger/ledger.js';
import type { PayoutGateway } from './payout-gateway.js';
import { activePayoutConfig } from './payout-config.service.js';

/**
 * Sellers claimed per database transaction: enough for the set-based statements to pay off (a 10,000-seller run is
 * 20 transactions), few enough that each transaction's row locks and trigger work stay short.
 */
export const CLAIM_BATCH_SELLERS = 500;
/** Payouts whose gateway answers are recorded per statement (submit and status sync). */
export const GATEWAY_BATCH = 500;
/** Gateway calls in flight at once: a real gateway is a remote API, asked in parallel but not flooded. */
export const GATEWAY_CONCURRENCY = 8;

/** `fn` over `items` with at most `limit` calls in flight; answers in the items' order. */
export async function mapConcurrently<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Consecutive slices of at most `size`. */
export function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/** Whether an automatic run is due on the UTC day of `now`: Daily every day, Weekly on Mondays, Monthly on the 1st, Manual never. */
export function isPayoutDue(frequency: PayoutFrequency, now: Date): boolean {
  switch (frequency) {
    case 'Daily':
      return true;
    case 'Weekly':
      return now.getUTCDay() === 1;
    case 'Monthly':
      return now.getUTCDate() === 1;
    case 'Manual':
      return false;
  }
}

export interface ReadyTransaction {
  id: string;
  netAmountInCents: number;
}

/**
 * Cuts a seller's ready transactions (in order) into payouts of at most `maximum` cents: a transaction is never
 * split, one larger than the maximum goes alone, and zero-amount transactions ride along with the others.
 */
export function splitIntoPayouts(transactions: ReadyTransaction[], maximum: number | null): ReadyTransaction[][] {
  const parts: ReadyTransaction[][] = [];
  let current: ReadyTransaction[] = [];
  let sum = 0;
  for (const tx of transactions) {
    if (maximum !== null && sum > 0 && tx.netAmountInCents > 0 && sum + tx.netAmountInCents > maximum) {
      parts.push(current);
      current = [];
      sum = 0;
    }
    current.push(tx);
    sum += tx.netAmountInCents;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

const sumOf = (part: ReadyTransaction[]) => part.reduce((s, t) => s + t.netAmountInCents, 0);

/** A seller's ready transaction as the claim reads it (in the seller's payout order). */
export interface ClaimableTransaction extends ReadyTransaction {
  sellerUserId: string;
  currency: string;
}

export interface PlannedPayout {
  id: string;
  sellerUserId: string;
  currency: string;
  amountInCents: number;
  transactionIds: string[];
}

/**
 * The payouts of a batch of sellers (pure): the transactions of each (seller, currency), in the order given, are
 * skipped when their total is zero or below `minimum`, else cut by `splitIntoPayouts` at `maximum`.
 */
export function planPayouts(transactions: readonly ClaimableTransaction[], minimum: number, maximum: number | null): PlannedPayout[] {
  const groups = new Map<string, ClaimableTransaction[]>();
  for (const tx of transactions) {
    const key = `${tx.sellerUserId}|${tx.currency}`;
    const group = groups.get(key);
    if (group) group.push(tx);
    else groups.set(key, [tx]);
  }
  const planned: PlannedPayout[] = [];
  for (const group of groups.values()) {
    const total = sumOf(group);
    if (total <= 0 || total < minimum) continue;
    const { sellerUserId, currency } = group[0]!;
    for (const part of splitIntoPayouts(group, maximum)) {
      planned.push({ id: newId(), sellerUserId, currency, amountInCents: sumOf(part), transactionIds: part.map((t) => t.id) });
    }
  }
  return planned;
}

/** Claims the payouts of one batch of sellers (one database transaction); the number of payouts created. */
async function claimBatch(
  em: EntityManager,
  territoryId: string,
  sellerUserIds: string[],
  minimum: number,
  maximum: number | null,
  now: Date,
): Promise<number> {
  return em.transactional(async (tx) => {
    const rows = await execSql<{ id: string; seller_user_id: string; currency: string; net: string }>(
      tx,
      `select id, seller_user_id, currency, net_amount_in_cents::text as net from seller_transaction
        where territory_id = ? and seller_user_id = any(?::uuid[]) and status = 'READY' and payout_id is null
        order by seller_user_id, currency, ready_for_payout_at_utc, id
        for update skip locked`,
      [territoryId, pgArray(sellerUserIds)],
    );
    const planned = planPayouts(
      rows.map((r) => ({ id: r.id, sellerUserId: r.seller_user_id, currency: r.currency, netAmountInCents: Number(r.net) })),
      minimum,
      maximum,
    );
    if (planned.length === 0) return 0;
    await execSql(
      tx,
      `insert into payout (id, created_at_utc, territory_id, seller_user_id, amount_in_cents, currency, status, transaction_ids, updated_at_utc)
       select p.id, ?, ?, p.seller_user_id, p.amount_in_cents, p.currency, 'PENDING', array(select jsonb_array_elements_text(p.transaction_ids)), ?
         from jsonb_to_recordset(?::jsonb) as p(id uuid, seller_user_id uuid, amount_in_cents bigint, currency text, transaction_ids jsonb)`,
      [
        now,
        territoryId,
        now,
        JSON.stringify(
          planned.map((p) => ({
            id: p.id,
            seller_user_id: p.sellerUserId,
            amount_in_cents: p.amountInCents,
            currency: p.currency,
            transaction_ids: p.transactionIds,
          })),
        ),
      ],
    );
    const links = planned.flatMap((p) => p.transactionIds.map((transactionId) => ({ transactionId, payoutId: p.id })));
    const linked = await execSql<{ id: string }>(
      tx,
      `update seller_transaction st set payout_id = l.payout_id, updated_at_utc = ?
         from unnest(?::uuid[], ?::uuid[]) as l(id, payout_id)
        where st.id = l.id and st.status = 'READY' and st.payout_id is null returning st.id`,
      [now, pgArray(links.map((l) => l.transactionId)), pgArray(links.map((l) => l.payoutId))],
    );
    // The rows are locked by this transaction, so this holds; if it ever did not, nothing of the batch is kept.
    if (linked.length !== links.length) throw new Error(`Payout claim: ${links.length - linked.length} transactions were claimed meanwhile.`);
    await postLedgerTransactions(
      tx,
      planned.map((p) => ({
        idempotencyKey: `payout:${p.id}:sent`,
        territoryId,
        currency: p.currency,
        entries: [
          { account: { kind: 'seller_ready' as const, ownerUserId: p.sellerUserId }, amountInCents: -p.amountInCents },
          { account: { kind: 'payouts_in_transit' as const }, amountInCents: p.amountInCents },
        ],
      })),
    );
    return planned.length;
  });
}

/** Claims the payouts of every seller of the territory with unclaimed ready money; the number of payouts created. */
export async function claimPayouts(em: EntityManager, territoryId: string, now: Date): Promise<number> {
  const config = await activePayoutConfig(em, territoryId);
  const minimum = config?.minimumPayoutAmountInCents ?? 0;
  const maximum = config?.maximumPayoutAmountInCents ?? null;
  const sellers = await execSql<{ seller_user_id: string }>(
    em,
    `select distinct seller_user_id from seller_transaction
      where territory_id = ? and status = 'READY' and payout_id is null order by seller_user_id`,
    [territoryId],
  );
  const sellerIds = sellers.map((s) => s.seller_user_id);
  let created = 0;
  for (const batch of chunksOf(sellerIds, CLAIM_BATCH_SELLERS)) created += await claimBatch(em, territoryId, batch, minimum, maximum, now);
  return created;
}

export interface SubmitOutcome {
  submitted: number;
  /** Payouts the gateway could not take now; they stay PENDING for the next attempt. */
  errors: Array<{ payoutId: string; message: string }>;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Sends every PENDING payout (of the territory, or of all territories) to the gateway and records the references,
 * one statement per chunk. Idempotent: the gateway answers a repeated payout id with the same transfer, and only a
 * PENDING row is updated.
 */
export async function submitPendingPayouts(em: EntityManager, gateway: PayoutGateway, now: Date, territoryId: string | null): Promise<SubmitOutcome> {
  const pending = await execSql<{ id: string; territory_id: string; seller_user_id: string; amount: string; currency: string }>(
    em,
    `select id, territory_id, seller_user_id, amount_in_cents::text as amount, currency from payout
      where status = 'PENDING' and (?::uuid is null or territory_id = ?::uuid) order by created_at_utc, id`,
    [territoryId, territoryId],
  );
  const outcome: SubmitOutcome = { submitted: 0, errors: [] };
  for (const chunk of chunksOf(pending, GATEWAY_BATCH)) {
    const answers = await mapConcurrently(chunk, GATEWAY_CONCURRENCY, async (p) => {
      try {
        const { reference } = await gateway.createPayout({
          payoutId: p.id,
          territoryId: p.territory_id,
          sellerUserId: p.seller_user_id,
          amountInCents: Number(p.amount),
          currency: p.currency,
        });
        return { payoutId: p.id, reference };
      } catch (error) {
        outcome.errors.push({ payoutId: p.id, message: messageOf(error) });
        return null;
      }
    });
    const accepted = answers.filter((a): a is { payoutId: string; reference: string } => a !== null);
    if (accepted.length === 0) continue;
    // The rows are locked in id order, skipping any a concurrent submit holds (it records the same references):
    // two submits of the same payouts neither deadlock nor write twice.
    const ids = pgArray(accepted.map((a) => a.payoutId));
    await execSql(
      em,
      `update payout p set status = 'PROCESSING', provider = ?, gateway_reference = s.reference, submitted_at_utc = ?, updated_at_utc = ?
         from unnest(?::uuid[], ?::text[]) as s(id, reference)
        where p.id = s.id and p.status = 'PENDING'
          and p.id in (select id from payout where id = any(?::uuid[]) and status = 'PENDING' order by id for update skip locked)`,
      [gateway.provider, now, now, ids, pgArray(accepted.map((a) => a.reference)), ids],
    );
    outcome.submitted += accepted.length;
  }
  return outcome;
}

/** The territories whose automatic run is due on the day of `now` (active configuration, auto payouts on, frequency due). */
export async function territoriesDueForPayout(em: EntityManager, now: Date): Promise<string[]> {
  const configs = await execSql<{ territory_id: string; frequency: PayoutFrequency }>(
    em,
    `select territory_id, frequency from payout_config where is_active and auto_payout_enabled and frequency <> 'Manual' order by territory_id`,
  );
  return configs.filter((c) => isPayoutDue(c.frequency, now)).map((c) => c.territory_id);
}

export interface PayoutRunResult {
  territories: number;
  created: number;
  submitted: number;
  errors: SubmitOutcome['errors'];
}

/**
 * One run: the given territory (on demand: whatever its frequency), or every territory due today (the schedule).
 * Gateway errors do not stop the run; they are returned so the job can fail visibly and be retried.
 */
export async function runPayouts(em: EntityManager, gateway: PayoutGateway, now: Date, territoryId: string | null): Promise<PayoutRunResult> {
  const territories = territoryId ? [territoryId] : await territoriesDueForPayout(em, now);
  const result: PayoutRunResult = { territories: territories.length, created: 0, submitted: 0, errors: [] };
  for (const id of territories) {
    result.created += await claimPayouts(em, id, now);
    const outcome = await submitPendingPayouts(em, gateway, now, id);
    result.submitted += outcome.submitted;
    result.errors.push(...outcome.errors);
  }
  return result;
}
