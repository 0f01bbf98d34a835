/**
 * The `payouts-run` job's work (DESIGN section 13 "Payout jobs", spec Payout rules 3-6). A run over a territory:
 *
 * 1. Claim, in batches of CLAIM_BATCH_SELLERS sellers, one database transaction per batch, set-based: the batch's
 *    READY seller transactions with an unpaid amount (their net minus their lines in live, not FAILED, payouts) are
 *    locked at once (`for update skip locked`, in seller order) and their unpaid amounts read again under the locks;
 *    the payouts are planned in code (`planPayouts`: below the territory's minimum a seller is skipped and the money
 *    waits in ready; every payout is at most the maximum: a transaction that fits is never split, one larger than the
 *    maximum is paid in several payouts, see `splitIntoPayouts`; the parts need not each reach the minimum, the total
 *    does); then one statement inserts the batch's payouts PENDING, one their lines (`payout_line`: the amount of each
 *    transaction each payout carries), one points each transaction at the last payout that took some of it, and one
 *    bulk ledger posting moves each payout's amount seller_ready -> payouts_in_transit under `payout:{id}:sent`.
 * 2. Submit, outside any database transaction: every PENDING payout of the territory (this run's, and any a crashed
 *    run left behind) goes to the gateway with its id as the idempotency key; each chunk of answers is recorded in
 *    one statement (PROCESSING with the gateway's reference). A crash between the gateway calls and that update leaves
 *    the payouts PENDING; the next run (or status sync) asks the gateway again with the same ids and gets the same
 *    transfers back, so each part of a transaction is paid exactly once.
 *
 * Two runs at once: rows one run has locked are skipped by the other (`skip locked`), which claims nothing of them;
 * a row it locks after the first committed shows the first's lines to the re-read, so only what is still unpaid is
 * claimed. PostgreSQL refuses at commit any line that would take more of a transaction than its net
 * (`payout_line_check`). A refund of the same sale either locks the row first (the run skips it; the refund goes
 * through) or waits for the run and then answers 409 (the sale is in a payout: its `payout_id` is set).
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
  /** What is still to pay of it: its net minus its lines in live payouts. */
  amountInCents: number;
}

/** What one payout carries of one seller transaction. */
export interface PayoutLineAmount {
  transactionId: string;
  amountInCents: number;
}

/** One payout of a split: its amount (the sum of its lines) and its lines. */
export interface PayoutPart {
  amountInCents: number;
  lines: PayoutLineAmount[];
}

/**
 * Cuts a seller's ready transactions (in order) into payouts of at most `maximum` cents (spec Payout rule 4), greedily
 * in order: a transaction that fits in a payout is never split (it joins the open payout when it fits there, else
 * opens the next one); a transaction larger than the maximum is paid in payouts of exactly the maximum and its rest
 * (below the maximum) goes on like a smaller transaction. A zero amount (a sale whose whole price went to fees) rides
 * along with the open payout, or the next, or the last one. No maximum: one payout.
 */
export function splitIntoPayouts(transactions: readonly ReadyTransaction[], maximum: number | null): PayoutPart[] {
  if (maximum !== null && maximum <= 0) throw new Error(`The maximum payout must be positive (got ${maximum}).`);
  const parts: PayoutPart[] = [];
  let open: PayoutPart | null = null;
  let riders: PayoutLineAmount[] = [];
  const start = (): PayoutPart => {
    const part: PayoutPart = { amountInCents: 0, lines: riders };
    riders = [];
    parts.push(part);
    return part;
  };
  for (const tx of transactions) {
    let rest = tx.amountInCents;
    if (!Number.isSafeInteger(rest) || rest < 0) throw new Error(`Payout amounts are non-negative integer cents (got ${rest}).`);
    if (rest === 0) {
      (open?.lines ?? riders).push({ transactionId: tx.id, amountInCents: 0 });
      continue;
    }
    if (maximum !== null) {
      while (rest > maximum) {
        const whole = start();
        whole.lines.push({ transactionId: tx.id, amountInCents: maximum });
        whole.amountInCents = maximum;
        rest -= maximum;
      }
      if (open && open.amountInCents + rest > maximum) open = null;
    }
    open ??= start();
    open.lines.push({ transactionId: tx.id, amountInCents: rest });
    open.amountInCents += rest;
  }
  if (riders.length > 0 && parts.length > 0) parts.at(-1)!.lines.push(...riders);
  return parts;
}

/** A seller's ready transaction as the claim reads it (in the seller's payout order), with its unpaid amount. */
export interface ClaimableTransaction extends ReadyTransaction {
  sellerUserId: string;
  currency: string;
}

export interface PlannedPayout {
  id: string;
  sellerUserId: string;
  currency: string;
  amountInCents: number;
  lines: PayoutLineAmount[];
  /** The transactions of its lines, in order, once each. */
  transactionIds: string[];
}

/**
 * The payouts of a batch of sellers (pure): the transactions of each (seller, currency), in the order given, are
 * skipped when their unpaid total is zero or below `minimum` (spec Payout rule 3), else cut by `splitIntoPayouts` at
 * `maximum`.
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
    const total = group.reduce((s, t) => s + t.amountInCents, 0);
    if (total <= 0 || total < minimum) continue;
    const { sellerUserId, currency } = group[0]!;
    for (const part of splitIntoPayouts(group, maximum)) {
      planned.push({
        id: newId(),
        sellerUserId,
        currency,
        amountInCents: part.amountInCents,
        lines: part.lines,
        transactionIds: [...new Set(part.lines.map((l) => l.transactionId))],
      });
    }
  }
  return planned;
}

/**
 * SQL: the cents of the seller transaction whose id is the SQL expression `id` that live (not FAILED) payouts carry.
 * Through `payout_line`'s index on the transaction and the payouts' primary key.
 */
export const liveLinesOf = (id: string) => `(select coalesce(sum(l.amount_in_cents), 0) from payout_line l join payout p on p.id = l.payout_id
  where l.seller_transaction_id = ${id} and p.status <> 'FAILED')`;

const LIVE_LINES_OF_ST = liveLinesOf('st.id');

/**
 * SQL: the latest live payout carrying some of seller transaction `id` (the greatest created_at_utc, then id), or
 * null: what its `payout_id` points at (a refund is refused while it points at one), after a claim and after a failure.
 */
export const latestLivePayoutOf = (id: string) => `(select l.payout_id from payout_line l join payout p on p.id = l.payout_id
  where l.seller_transaction_id = ${id} and p.status <> 'FAILED' order by p.created_at_utc desc, p.id desc limit 1)`;

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
    // A READY transaction with a payout_id has lines in live payouts: only its unpaid rest (after a failed part) is claimable.
    const locked = await execSql<{ id: string; seller_user_id: string; currency: string; net: string }>(
      tx,
      `select st.id, st.seller_user_id, st.currency, st.net_amount_in_cents::text as net from seller_transaction st
        where st.territory_id = ? and st.seller_user_id = any(?::uuid[]) and st.status = 'READY'
          and (st.payout_id is null or st.net_amount_in_cents > ${LIVE_LINES_OF_ST})
        order by st.seller_user_id, st.currency, st.ready_for_payout_at_utc, st.id
        for update of st skip locked`,
      [territoryId, pgArray(sellerUserIds)],
    );
    if (locked.length === 0) return 0;
    // Read again under the row locks, in a statement of its own: every line of these transactions another claim
    // committed is visible now (lines are only written under these locks), so nothing is claimed twice.
    const live = await execSql<{ id: string; carried: string }>(
      tx,
      `select l.seller_transaction_id as id, sum(l.amount_in_cents)::text as carried
         from payout_line l join payout p on p.id = l.payout_id
        where l.seller_transaction_id = any(?::uuid[]) and p.status <> 'FAILED' group by l.seller_transaction_id`,
      [pgArray(locked.map((r) => r.id))],
    );
    // Cents in live payouts, by transaction (absent: in none).
    const carried = new Map(live.map((l) => [l.id, Number(l.carried)]));
    const claimable: ClaimableTransaction[] = [];
    for (const r of locked) {
      const net = Number(r.net);
      const inPayouts = carried.get(r.id);
      const unpaid = net - (inPayouts ?? 0);
      // A zero-net transaction rides along once; another one only for what is still unpaid.
      if (unpaid > 0 || (net === 0 && inPayouts === undefined))
        claimable.push({ id: r.id, sellerUserId: r.seller_user_id, currency: r.currency, amountInCents: unpaid });
    }
    const planned = planPayouts(claimable, minimum, maximum);
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
    const lines = planned.flatMap((p) => p.lines.map((l) => ({ ...l, payoutId: p.id })));
    await execSql(
      tx,
      `insert into payout_line (id, created_at_utc, payout_id, seller_transaction_id, amount_in_cents)
       select l.id, ?, l.payout_id, l.seller_transaction_id, l.amount_in_cents
         from unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::bigint[]) as l(id, payout_id, seller_transaction_id, amount_in_cents)`,
      [
        now,
        pgArray(lines.map(() => newId())),
        pgArray(lines.map((l) => l.payoutId)),
        pgArray(lines.map((l) => l.transactionId)),
        `{${lines.map((l) => l.amountInCents).join(',')}}`,
      ],
    );
    // Each transaction points at its latest live payout (a refund is refused while it points at one).
    const carriedIds = [...new Set(lines.map((l) => l.transactionId))];
    const linked = await execSql<{ id: string }>(
      tx,
      `update seller_transaction st set payout_id = ${latestLivePayoutOf('st.id')}, updated_at_utc = ?
        where st.id = any(?::uuid[]) and st.status = 'READY' returning st.id`,
      [now, pgArray(carriedIds)],
    );
    // The rows are locked by this transaction, so this holds; if it ever did not, nothing of the batch is kept.
    if (linked.length !== carriedIds.length) throw new Error(`Payout claim: ${carriedIds.length - linked.length} transactions changed meanwhile.`);
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
    `select distinct st.seller_user_id from seller_transaction st
      where st.territory_id = ? and st.status = 'READY' and (st.payout_id is null or st.net_amount_in_cents > ${LIVE_LINES_OF_ST})
      order by st.seller_user_id`,
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
  /** Territories whose run failed before or while submitting (the others were still paid). */
  failedTerritories: Array<{ territoryId: string; message: string }>;
}

/**
 * One run: the given territory (on demand: whatever its frequency), or every territory due today (the schedule).
 * Gateway errors do not stop the run, nor does a territory whose run fails (each claim batch is its own transaction,
 * so what it claimed before failing stays claimed and is submitted by the next run); both are returned so the job can
 * fail visibly and be retried.
 */
export async function runPayouts(em: EntityManager, gateway: PayoutGateway, now: Date, territoryId: string | null): Promise<PayoutRunResult> {
  const territories = territoryId ? [territoryId] : await territoriesDueForPayout(em, now);
  const result: PayoutRunResult = { territories: territories.length, created: 0, submitted: 0, errors: [], failedTerritories: [] };
  for (const id of territories) {
    try {
      result.created += await claimPayouts(em, id, now);
      const outcome = await submitPendingPayouts(em, gateway, now, id);
      result.submitted += outcome.submitted;
      result.errors.push(...outcome.errors);
    } catch (error) {
      result.failedTerritories.push({ territoryId: id, message: messageOf(error) });
    }
  }
  return result;
}
