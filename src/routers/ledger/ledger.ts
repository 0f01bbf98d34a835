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

/**
 * The account of (territory, currency, kind, owner), created on first use. `on conflict do nothing` on the unique
 * index (NULL owners equal), then a read: concurrent first uses create one row.
 */
export async function ledgerAccountId(em: EntityManager, territoryId: string, currency: string, ref: LedgerAccountRef): Promise<string> {
  const owner = ref.ownerUserId ?? null;
  if (isSellerKind(ref.kind) !== (owner !== null)) throw new LedgerError(`Account kind ${ref.kind} ${owner ? 'takes no' : 'needs an'} owner.`);
  if (!CURRENCY.test(currency)) throw new LedgerError(`Invalid currency ${currency}.`);
  await execSql(
    em,
    `insert into ledger_account (id, created_at_utc, territory_id, currency, kind, owner_user_id) values (?, now(), ?, ?, ?, ?)
     on conflict do nothing`,
    [newId(), territoryId, currency, ref.kind, owner],
  );
  const [row] = await execSql<{ id: string }>(
    em,
    `select id from ledger_account where territory_id = ? and currency = ? and kind = ? and owner_user_id is not distinct from ?::uuid`,
    [territoryId, currency, ref.kind, owner],
  );
  return row!.id;
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
 * Records one balanced ledger transaction, at most once per idempotency key: the transaction row is inserted with
 * `on conflict do nothing`, so a concurrent or later repeat waits for the first and then returns it (`created:
 * false`) without writing. A repeat whose entries differ from the recorded ones is a LedgerError (a key names one
 * movement). Runs in the caller's transaction when there is one (the zero-sum check fires at its commit).
 */
export async function postLedgerTransaction(em: EntityManager, posting: LedgerPosting): Promise<LedgerTransactionRecord> {
  checkPosting(posting);
  return em.transactional(async (tx) => {
    // The key first: a concurrent repeat waits here on the unique index until this transaction ends.
    const id = newId();
    const inserted = await execSql<{ id: string }>(
      tx,
      `insert into ledger_transaction (id, created_at_utc, idempotency_key, territory_id) values (?, now(), ?, ?)
       on conflict (idempotency_key) do nothing returning id`,
      [id, posting.idempotencyKey, posting.territoryId],
    );
    if (inserted.length === 0) {
      const [existing] = await execSql<{ id: string }>(tx, 'select id from ledger_transaction where idempotency_key = ?', [posting.idempotencyKey]);
      const record = await readTransaction(tx, existing!.id, false);
      if (record.territoryId !== posting.territoryId || !sameEntries(record.entries, posting)) {
        throw new LedgerError(`Idempotency key ${posting.idempotencyKey} was already used for other entries.`);
      }
      return record;
    }
    // Accounts in a fixed order, so two postings creating the same accounts cannot deadlock.
    const refs = [...new Set(posting.entries.map((e) => refKey(e.account)))].sort();
    const accountIds = new Map<string, string>();
    for (const key of refs) {
      const [kind, owner] = key.split('|') as [LedgerAccountKind, string];
      accountIds.set(key, await ledgerAccountId(tx, posting.territoryId, posting.currency, { kind, ownerUserId: owner || null }));
    }
    const ids = posting.entries.map((e) => accountIds.get(refKey(e.account))!);
    await execSql(
      tx,
      `insert into ledger_entry (id, created_at_utc, transaction_id, account_id, amount_in_cents, currency)
       select e.id, now(), ?, e.account_id, e.amount, ? from unnest(?::uuid[], ?::uuid[], ?::bigint[]) as e(id, account_id, amount)`,
      [id, posting.currency, pgArray(ids.map(() => newId())), pgArray(ids), pgArray(posting.entries.map((e) => String(e.amountInCents)))],
    );
    return readTransaction(tx, id, true);
  });
}

/** The balance of an account (sum of its entries, integer cents): balances are projections, never stored. */
export async function ledgerBalance(em: EntityManager, accountId: string): Promise<number> {
  const [row] = await execSql<{ total: string }>(em, 'select coalesce(sum(amount_in_cents), 0)::text as total from ledger_entry where account_id = ?', [
    accountId,
  ]);
  return Number(row?.total ?? 0);
}
