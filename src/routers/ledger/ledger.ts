/**
 * The ledger (DESIGN section 13): the one writer of `ledger_account`, `ledger_transaction` and `ledger_entry`.
 * Append-only double entry in integer cents. PostgreSQL enforces the invariants (migration triggers): each ledger
 * transaction sums to zero per currency at commit, entries are in their account's currency and territory, entries
 * and transactions are never updated or deleted, and an idempotency key is recorded once. This module checks the
 * same before writing, so a bug fails here with a readable message rather than at commit.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, isoColumn, pgArray } from '../../db/sql.js';
import { type LedgerAccountKind, SELLER_ACCOUNT_KINDS } from '../../entities/ledger.entity.js';
import { newId } from '../../platform/ids.js';

/** An account named by what it is; resolved (created on first use) within the transaction's territory and currency. */
export interface LedgerAccountRef {
  kind: LedgerAccountKind;
  /** The seller, for the seller_* kinds; absent for platform accounts. */
  ownerUserId?: string | null;
}

export interface LedgerPosting {
  /** Unique per money movement, e.g. `checkout:{id}:paid`; a repeat returns the recorded transaction. */
  idempotencyKey: string;
  territoryId: string;
  currency: string;
  /** Signed integer cents; at least two, summing to zero. */
  entries: Array<{ account: LedgerAccountRef; amountInCents: number }>;
}

export interface LedgerTransactionRecord {
  id: string;
  idempotencyKey: string;
  territoryId: string;
  createdAtUtc: string;
  /** False when the key was already recorded: nothing was written. */
  created: boolean;
  entries: Array<{ accountId: string; kind: LedgerAccountKind; ownerUserId: string | null; amountInCents: number; currency: string }>;
}

/** A programming error of a caller (never a client's input): unbalanced, non-integer, or a key reused for other entries. */
export class LedgerError extends Error {}

const CURRENCY = /^[A-Z]{3}$/;

function isSellerKind(kind: LedgerAccountKind) {
  return (SELLER_ACCOUNT_KINDS as readonly string[]).includes(kind);
}

/** The account of (territory, currency, kind, owner), created on first use (see `ledgerAccountIds`). */
export async function ledgerAccountId(em: EntityManager, territoryId: string, currency: string, ref: LedgerAccountRef): Promise<string> {
  if (!CURRENCY.test(currency)) throw new LedgerError(`Invalid currency ${currency}.`);
  return (await ledgerAccountIds(em, [{ territoryId, currency, ref }])).get(accountKey(territoryId, currency, ref))!;
}

async function readTransaction(em: EntityManager, id: string, created: boolean): Promise<LedgerTransactionRecord> {
  const [tx] = await execSql<{ id: string; idempotency_key: string; territory_id: string; created_at_utc: string }>(
    em,
    `select id, idempotency_key, territory_id, ${isoColumn('created_at_utc')} as created_at_utc from ledger_transaction where id = ?`,
    [id],
  );
  const entries = await execSql<{ account_id: string; kind: LedgerAccountKind; owner_user_id: string | null; amount_in_cents: string; currency: string }>(
    em,
    `select e.account_id, a.kind, a.owner_user_id, e.amount_in_cents, e.currency
       from ledger_entry e join ledger_account a on a.id = e.account_id
      where e.transaction_id = ? order by e.id`,
    [id],
  );
  return {
    id: tx!.id,
    idempotencyKey: tx!.idempotency_key,
    territoryId: tx!.territory_id,
    createdAtUtc: tx!.created_at_utc,
    created,
    entries: entries.map((e) => ({
      accountId: e.account_id,
      kind: e.kind,
      ownerUserId: e.owner_user_id,
      amountInCents: Number(e.amount_in_cents),
      currency: e.currency,
    })),
  };
}

const refKey = (ref: LedgerAccountRef) => `${ref.kind}|${ref.ownerUserId ?? ''}`;

/** Whether recorded entries are the posting's (same accounts, amounts and currency, in any order). */
function sameEntries(recorded: LedgerTransactionRecord['entries'], posting: LedgerPosting) {
  const a = recorded.map((e) => `${refKey(e)}:${e.amountInCents}:${e.currency}`).sort();
  const b = posting.entries.map((e) => `${refKey(e.account)}:${e.amountInCents}:${posting.currency}`).sort();
  return JSON.stringify(a) === JSON.stringify(b);
}

function checkPosting(posting: LedgerPosting) {
  if (!posting.idempotencyKey || posting.idempotencyKey.length > 200) throw new LedgerError('An idempotency key of 1..200 characters is required.');
  if (!CURRENCY.test(posting.currency)) throw new LedgerError(`Invalid currency ${posting.currency}.`);
  if (posting.entries.length < 2) throw new LedgerError('A ledger transaction needs at least two entries.');
  for (const e of posting.entries) {
    if (!Number.isSafeInteger(e.amountInCents) || e.amountInCents === 0) throw new LedgerError(`Amounts are non-zero integer cents (got ${e.amountInCents}).`);
  }
  if (posting.entries.reduce((sum, e) => sum + e.amountInCents, 0) !== 0) throw new LedgerError('The entries of a ledger transaction must sum to zero.');
}

/**
 * Records one balanced ledger transaction, at most once per idempotency key (`postLedgerTransactions` with one
 * posting): a concurrent or later repeat waits for the first and then returns it (`created: false`) without writing;
 * a repeat whose entries differ from the recorded ones is a LedgerError (a key names one movement). Runs in the
 * caller's transaction when there is one (the zero-sum check fires at its commit).
 */
export async function postLedgerTransaction(em: EntityManager, posting: LedgerPosting): Promise<LedgerTransactionRecord> {
  const [record] = await postLedgerTransactions(em, [posting]);
  return record!;
}

/** The balance of an account (sum of its entries, integer cents): balances are projections, never stored. */
export async function ledgerBalance(em: EntityManager, accountId: string): Promise<number> {
  const [row] = await execSql<{ total: string }>(em, 'select coalesce(sum(amount_in_cents), 0)::text as total from ledger_entry where account_id = ?', [
    accountId,
  ]);
  return Number(row?.total ?? 0);
}

/** Whose account: the resolution key of (territory, currency, kind, owner). */
const accountKey = (territoryId: string, currency: string, ref: LedgerAccountRef) => `${territoryId}|${currency}|${refKey(ref)}`;

/**
 * The accounts of many (territory, currency, kind, owner), created on first use: one `insert ... on conflict do
 * nothing` in a fixed order (so two batches creating the same accounts cannot deadlock), then one read per owner
 * shape, each an index lookup on `ledger_account_unique` (platform accounts by `owner_user_id is null`, seller accounts
 * by equality). Answers a map from `accountKey` to id.
 */
async function ledgerAccountIds(
  em: EntityManager,
  wanted: Array<{ territoryId: string; currency: string; ref: LedgerAccountRef }>,
): Promise<Map<string, string>> {
  const unique = new Map<string, { territoryId: string; currency: string; ref: LedgerAccountRef }>();
  for (const w of wanted) {
    const owner = w.ref.ownerUserId ?? null;
    if (isSellerKind(w.ref.kind) !== (owner !== null)) throw new LedgerError(`Account kind ${w.ref.kind} ${owner ? 'takes no' : 'needs an'} owner.`);
    unique.set(accountKey(w.territoryId, w.currency, w.ref), w);
  }
  const all = [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, w]) => w);
  await execSql(
    em,
    `insert into ledger_account (id, created_at_utc, territory_id, currency, kind, owner_user_id)
     select k.id, now(), k.territory_id, k.currency, k.kind, nullif(k.owner, '')::uuid
       from unnest(?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::text[]) with ordinality as k(id, territory_id, currency, kind, owner, ord)
      order by k.ord
     on conflict do nothing`,
    [
      pgArray(all.map(() => newId())),
      pgArray(all.map((w) => w.territoryId)),
      pgArray(all.map((w) => w.currency)),
      pgArray(all.map((w) => w.ref.kind)),
      pgArray(all.map((w) => w.ref.ownerUserId ?? '')),
    ],
  );
  const platform = all.filter((w) => !w.ref.ownerUserId);
  const sellers = all.filter((w) => w.ref.ownerUserId);
  const rows = await execSql<{ id: string; territory_id: string; currency: string; kind: LedgerAccountKind; owner_user_id: string | null }>(
    em,
    `select a.id, a.territory_id, a.currency, a.kind, a.owner_user_id
       from unnest(?::uuid[], ?::text[], ?::text[]) as k(territory_id, currency, kind)
       join ledger_account a on a.territory_id = k.territory_id and a.currency = k.currency and a.kind = k.kind and a.owner_user_id is null
     union all
     select a.id, a.territory_id, a.currency, a.kind, a.owner_user_id
       from unnest(?::uuid[], ?::text[], ?::text[], ?::uuid[]) as k(territory_id, currency, kind, owner_user_id)
       join ledger_account a on a.territory_id = k.territory_id and a.currency = k.currency and a.kind = k.kind and a.owner_user_id = k.owner_user_id`,
    [
      pgArray(platform.map((w) => w.territoryId)),
      pgArray(platform.map((w) => w.currency)),
      pgArray(platform.map((w) => w.ref.kind)),
      pgArray(sellers.map((w) => w.territoryId)),
      pgArray(sellers.map((w) => w.currency)),
      pgArray(sellers.map((w) => w.ref.kind)),
      pgArray(sellers.map((w) => w.ref.ownerUserId!)),
    ],
  );
  const ids = new Map(rows.map((r) => [accountKey(r.territory_id, r.currency, { kind: r.kind, ownerUserId: r.owner_user_id }), r.id]));
  for (const key of unique.keys()) if (!ids.has(key)) throw new Error(`Ledger account ${key} was neither created nor found.`);
  return ids;
}

/**
 * Records many balanced ledger transactions with a handful of statements whatever their number (a payout run over
 * thousands of sellers), under exactly the rules of `postLedgerTransaction`: each posting is checked the same way,
 * each key is recorded at most once (a key already recorded, earlier or by a concurrent caller, answers its
 * transaction with `created: false` once its entries are found to be the posting's; otherwise a LedgerError), the
 * accounts are created on first use, and PostgreSQL checks every transaction's zero sum at commit. Keys must be
 * distinct within one call. Runs in the caller's transaction when there is one; answers in the postings' order.
 */
export async function postLedgerTransactions(em: EntityManager, postings: LedgerPosting[]): Promise<LedgerTransactionRecord[]> {
  if (postings.length === 0) return [];
  postings.forEach(checkPosting);
  const keys = new Set(postings.map((p) => p.idempotencyKey));
  if (keys.size !== postings.length) throw new LedgerError('The idempotency keys of one batch of postings must be distinct.');
  return em.transactional(async (tx) => {
    // The keys first, in key order: a concurrent batch holding one of them is waited for on the unique index, then
    // that key is found recorded; the same order in every batch means two batches cannot deadlock on their keys.
    const ordered = postings.map((posting) => ({ posting, id: newId() })).sort((a, b) => (a.posting.idempotencyKey < b.posting.idempotencyKey ? -1 : 1));
    const inserted = await execSql<{ id: string; idempotency_key: string; created_at_utc: string }>(
      tx,
      `insert into ledger_transaction (id, created_at_utc, idempotency_key, territory_id)
       select t.id, now(), t.idempotency_key, t.territory_id
         from unnest(?::uuid[], ?::text[], ?::uuid[]) with ordinality as t(id, idempotency_key, territory_id, ord)
        order by t.ord
       on conflict (idempotency_key) do nothing returning id, idempotency_key, ${isoColumn('created_at_utc')} as created_at_utc`,
      [pgArray(ordered.map((o) => o.id)), pgArray(ordered.map((o) => o.posting.idempotencyKey)), pgArray(ordered.map((o) => o.posting.territoryId))],
    );
    const created = new Map(inserted.map((r) => [r.idempotency_key, r]));
    const records = new Map<string, LedgerTransactionRecord>();

    // Keys recorded before: the recorded transaction, if it is this posting's.
    const repeats = postings.filter((p) => !created.has(p.idempotencyKey));
    if (repeats.length > 0) {
      const existing = await execSql<{ id: string; idempotency_key: string }>(
        tx,
        'select id, idempotency_key from ledger_transaction where idempotency_key = any(?::text[])',
        [pgArray(repeats.map((p) => p.idempotencyKey))],
      );
      const idOf = new Map(existing.map((r) => [r.idempotency_key, r.id]));
      for (const posting of repeats) {
        const record = await readTransaction(tx, idOf.get(posting.idempotencyKey)!, false);
        if (record.territoryId !== posting.territoryId || !sameEntries(record.entries, posting)) {
          throw new LedgerError(`Idempotency key ${posting.idempotencyKey} was already used for other entries.`);
        }
        records.set(posting.idempotencyKey, record);
      }
    }

    const fresh = postings.filter((p) => created.has(p.idempotencyKey));
    if (fresh.length > 0) {
      const accounts = await ledgerAccountIds(
        tx,
        fresh.flatMap((p) => p.entries.map((e) => ({ territoryId: p.territoryId, currency: p.currency, ref: e.account }))),
      );
      const rows = fresh.flatMap((p) =>
        p.entries.map((e) => ({
          id: newId(),
          transactionId: created.get(p.idempotencyKey)!.id,
          accountId: accounts.get(accountKey(p.territoryId, p.currency, e.account))!,
          amountInCents: e.amountInCents,
          currency: p.currency,
        })),
      );
      await execSql(
        tx,
        `insert into ledger_entry (id, created_at_utc, transaction_id, account_id, amount_in_cents, currency)
         select e.id, now(), e.transaction_id, e.account_id, e.amount, e.currency
           from unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::bigint[], ?::text[]) as e(id, transaction_id, account_id, amount, currency)`,
        [
          pgArray(rows.map((r) => r.id)),
          pgArray(rows.map((r) => r.transactionId)),
          pgArray(rows.map((r) => r.accountId)),
          pgArray(rows.map((r) => String(r.amountInCents))),
          pgArray(rows.map((r) => r.currency)),
        ],
      );
      for (const p of fresh) {
        const row = created.get(p.idempotencyKey)!;
        records.set(p.idempotencyKey, {
          id: row.id,
          idempotencyKey: p.idempotencyKey,
          territoryId: p.territoryId,
          createdAtUtc: row.created_at_utc,
          created: true,
          entries: p.entries.map((e) => ({
            accountId: accounts.get(accountKey(p.territoryId, p.currency, e.account))!,
            kind: e.account.kind,
            ownerUserId: e.account.ownerUserId ?? null,
            amountInCents: e.amountInCents,
            currency: p.currency,
          })),
        });
      }
    }
    return postings.map((p) => records.get(p.idempotencyKey)!);
  });
}
