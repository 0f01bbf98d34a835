import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { LedgerError, ledgerAccountId, ledgerBalance, postLedgerTransaction } from '../../src/routers/ledger/ledger.js';
import { platformFeeInCents, roundHalfEven } from '../../src/routers/platform-fees/platform-fee.js';
import { countRows, newTerritory, newUser, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let territory: TestTerritory;
let seller: TestUser;
/** Accounts made through the module, used by the raw SQL below. */
let clearing: string;
let pending: string;
let usdClearing: string;
const em = () => t.deps.orm.em.fork() as EntityManager;

beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  seller = await newUser(t);
  clearing = await ledgerAccountId(em(), territory.id, 'BRL', { kind: 'gateway_clearing' });
  pending = await ledgerAccountId(em(), territory.id, 'BRL', { kind: 'seller_pending', ownerUserId: seller.id });
  usdClearing = await ledgerAccountId(em(), territory.id, 'USD', { kind: 'gateway_clearing' });
});
afterAll(() => t.close());

/** One statement (its own transaction, committed at its end): a ledger transaction with the given entries. */
function rawPosting(key: string, entries: Array<{ account: string; amount: number; currency?: string }>) {
  const values = entries.map((_, i) => `(gen_random_uuid(), now(), (select id from tx), $${3 + i * 3}::uuid, $${4 + i * 3}::bigint, $${5 + i * 3})`).join(', ');
  return t.sql(
    `with tx as (insert into ledger_transaction (id, created_at_utc, idempotency_key, territory_id) values (gen_random_uuid(), now(), $1, $2) returning id)
     insert into ledger_entry (id, created_at_utc, transaction_id, account_id, amount_in_cents, currency) values ${values}`,
    [key, territory.id, ...entries.flatMap((e) => [e.account, e.amount, e.currency ?? 'BRL'])],
  );
}

const ledgerCounts = async () => ({ transactions: await countRows(t, 'ledger_transaction'), entries: await countRows(t, 'ledger_entry') });

describe('PostgreSQL enforces the ledger invariants (raw SQL as the superuser, bypassing the app)', () => {
  it('accepts a balanced transaction', async () => {
    await rawPosting(`raw:${newId()}`, [
      { account: clearing, amount: -1000 },
      { account: pending, amount: 1000 },
    ]);
  });

  it('refuses an unbalanced transaction at commit, writing nothing', async () => {
    const before = await ledgerCounts();
    await expect(
      rawPosting(`raw:${newId()}`, [
        { account: clearing, amount: -1000 },
        { account: pending, amount: 900 },
      ]),
    ).rejects.toThrow(/does not balance/);
    expect(await ledgerCounts()).toEqual(before);
  });

  it('checks at commit, not per statement: entries inserted one by one balance by the end (deferred)', async () => {
    const key = `raw:${newId()}`;
    await t.sql(
      `begin;
       insert into ledger_transaction (id, created_at_utc, idempotency_key, territory_id) values (gen_random_uuid(), now(), '${key}', '${territory.id}');
       insert into ledger_entry (id, created_at_utc, transaction_id, account_id, amount_in_cents, currency)
         select gen_random_uuid(), now(), id, '${clearing}', -250, 'BRL' from ledger_transaction where idempotency_key = '${key}';
       insert into ledger_entry (id, created_at_utc, transaction_id, account_id, amount_in_cents, currency)
         select gen_random_uuid(), now(), id, '${pending}', 250, 'BRL' from ledger_transaction where idempotency_key = '${key}';
       commit;`,
    );
    expect(await countRows(t, 'ledger_entry e join ledger_transaction x on x.id = e.transaction_id', 'x.idempotency_key = $1', [key])).toBe(2);
  });

  it('refuses a transaction without entries, and sums per currency (USD does not offset BRL)', async () => {
    const before = await ledgerCounts();
    await expect(
      t.sql(`insert into ledger_transaction (id, created_at_utc, idempotency_key, territory_id) values (gen_random_uuid(), now(), $1, $2)`, [
        `raw:${newId()}`,
        territory.id,
      ]),
    ).rejects.toThrow(/has no entries/);
    await expect(
      rawPosting(`raw:${newId()}`, [
        { account: clearing, amount: -500 },
        { account: usdClearing, amount: 500, currency: 'USD' },
      ]),
    ).rejects.toThrow(/does not balance/);
    expect(await ledgerCounts()).toEqual(before);
  });

  it("refuses an entry in another currency than its account's", async () => {
    await expect(
      rawPosting(`raw:${newId()}`, [
        { account: clearing, amount: -500, currency: 'USD' },
        { account: usdClearing, amount: 500, currency: 'USD' },
      ]),
    ).rejects.toThrow(/currency and territory/);
  });

  it('refuses UPDATE and DELETE of entries and transactions, leaving them as they were', async () => {
    const [entry] = await t.sql<{ id: string; amount_in_cents: string }>('select id, amount_in_cents::text from ledger_entry limit 1');
    await expect(t.sql('update ledger_entry set amount_in_cents = amount_in_cents + 1 where id = $1', [entry!.id])).rejects.toThrow(/append-only: UPDATE/);
    await expect(t.sql('delete from ledger_entry where id = $1', [entry!.id])).rejects.toThrow(/append-only: DELETE/);
    await expect(t.sql(`update ledger_transaction set idempotency_key = 'changed'`)).rejects.toThrow(/append-only: UPDATE/);
    await expect(t.sql('delete from ledger_transaction')).rejects.toThrow(/append-only: DELETE/);
    const [after] = await t.sql<{ amount_in_cents: string }>('select amount_in_cents::text from ledger_entry where id = $1', [entry!.id]);
    expect(after!.amount_in_cents).toBe(entry!.amount_in_cents);
  });

  it('refuses a second transaction under the same idempotency key (unique constraint)', async () => {
    const key = `raw:${newId()}`;
    const entries = [
      { account: clearing, amount: -100 },
      { account: pending, amount: 100 },
    ];
    await rawPosting(key, entries);
    await expect(rawPosting(key, entries)).rejects.toThrow(/ledger_transaction_idempotency_key_unique/);
    expect(await countRows(t, 'ledger_transaction', 'idempotency_key = $1', [key])).toBe(1);
  });

  it('gives the app role INSERT and SELECT only on the ledger (no UPDATE, DELETE or TRUNCATE privilege)', async () => {
    const rows = await t.sql<{ table_name: string; privilege_type: string }>(
      `select table_name, privilege_type from information_schema.role_table_grants
        where grantee = $1 and table_name in ('ledger_entry', 'ledger_transaction') order by 1, 2`,
      [inject('pgAppRole')],
    );
    const privileges = (table: string) => rows.filter((r) => r.table_name === table).map((r) => r.privilege_type);
    expect(privileges('ledger_entry')).toEqual(['INSERT', 'SELECT']);
    expect(privileges('ledger_transaction')).toEqual(['INSERT', 'SELECT']);
    await expect(em().execute(`delete from ledger_entry where id = '${newId()}'`)).rejects.toThrow(/permission denied/);
  });
});

describe('postLedgerTransaction', () => {
  const posting = (key: string, amount = 1500) => ({
    idempotencyKey: key,
    territoryId: territory.id,
    currency: 'BRL',
    entries: [
      { account: { kind: 'gateway_clearing' as const }, amountInCents: -amount },
      { account: { kind: 'seller_pending' as const, ownerUserId: seller.id }, amountInCents: amount - 150 },
      { account: { kind: 'platform_revenue' as const }, amountInCents: 150 },
    ],
  });

  it('records a balanced transaction once; the same key again returns it without writing', async () => {
    const key = `checkout:${newId()}:paid`;
    const first = await postLedgerTransaction(em(), posting(key));
    expect(first).toMatchObject({ idempotencyKey: key, territoryId: territory.id, created: true });
    expect(first.entries.map((e) => [e.kind, e.amountInCents]).sort()).toEqual([
      ['gateway_clearing', -1500],
      ['platform_revenue', 150],
      ['seller_pending', 1350],
    ]);
    const before = await ledgerCounts();
    const again = await postLedgerTransaction(em(), posting(key));
    expect(again).toMatchObject({ id: first.id, created: false });
    expect(await ledgerCounts()).toEqual(before);
  });

  it('writes once when 20 calls with the same key run concurrently', async () => {
    const key = `checkout:${newId()}:paid`;
    const before = await ledgerCounts();
    const results = await Promise.all(Array.from({ length: 20 }, () => postLedgerTransaction(em(), posting(key))));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await ledgerCounts()).toEqual({ transactions: before.transactions + 1, entries: before.entries + 3 });
  });

  it('refuses unbalanced or non-integer entries, and a key reused for other entries, writing nothing', async () => {
    const before = await ledgerCounts();
    const unbalanced = posting(`k:${newId()}`);
    unbalanced.entries[0]!.amountInCents = -1;
    await expect(postLedgerTransaction(em(), unbalanced)).rejects.toBeInstanceOf(LedgerError);
    const fractional = posting(`k:${newId()}`);
    fractional.entries[1]!.amountInCents = 1349.5;
    fractional.entries[2]!.amountInCents = 150.5;
    await expect(postLedgerTransaction(em(), fractional)).rejects.toBeInstanceOf(LedgerError);
    const key = `k:${newId()}`;
    await postLedgerTransaction(em(), posting(key));
    await expect(postLedgerTransaction(em(), posting(key, 2000))).rejects.toThrow(/already used for other entries/);
    expect(await ledgerCounts()).toEqual({ transactions: before.transactions + 1, entries: before.entries + 3 });
  });

  it('rolls back with the caller: a posting inside a failed transaction leaves nothing', async () => {
    const before = await ledgerCounts();
    await expect(
      em().transactional(async (tx) => {
        await postLedgerTransaction(tx as EntityManager, posting(`k:${newId()}`));
        throw new Error('later step failed');
      }),
    ).rejects.toThrow('later step failed');
    expect(await ledgerCounts()).toEqual(before);
  });

  it('creates one account per (territory, currency, kind, owner) and projects balances from the entries', async () => {
    const other = await newUser(t);
    const ids = await Promise.all(Array.from({ length: 5 }, () => ledgerAccountId(em(), territory.id, 'BRL', { kind: 'seller_ready', ownerUserId: other.id })));
    expect(new Set(ids).size).toBe(1);
    expect(await ledgerAccountId(em(), territory.id, 'BRL', { kind: 'gateway_clearing' })).toBe(clearing);
    await expect(ledgerAccountId(em(), territory.id, 'BRL', { kind: 'seller_ready' })).rejects.toBeInstanceOf(LedgerError);
    const balance = await ledgerBalance(em(), ids[0]!);
    expect(balance).toBe(0);
    await postLedgerTransaction(em(), {
      idempotencyKey: `k:${newId()}`,
      territoryId: territory.id,
      currency: 'BRL',
      entries: [
        { account: { kind: 'seller_pending', ownerUserId: other.id }, amountInCents: -700 },
        { account: { kind: 'seller_ready', ownerUserId: other.id }, amountInCents: 700 },
      ],
    });
    expect(await ledgerBalance(em(), ids[0]!)).toBe(700);
  });
});

describe('platform fee arithmetic', () => {
  it('rounds half to even and never exceeds the line subtotal', () => {
    expect(roundHalfEven(25n, 10n)).toBe(2n);
    expect(roundHalfEven(35n, 10n)).toBe(4n);
    expect(roundHalfEven(26n, 10n)).toBe(3n);
    // 1050 cents at 5% = 52.5 -> 52; 1150 at 5% = 57.5 -> 58.
    expect(platformFeeInCents({ feeMode: 'PERCENTAGE', feeBasisPoints: 500, feeFixedInCents: null }, 1050, 1)).toBe(52);
    expect(platformFeeInCents({ feeMode: 'PERCENTAGE', feeBasisPoints: 500, feeFixedInCents: null }, 1150, 1)).toBe(58);
    expect(platformFeeInCents({ feeMode: 'FIXED', feeBasisPoints: null, feeFixedInCents: 300 }, 2000, 3)).toBe(900);
    expect(platformFeeInCents({ feeMode: 'FIXED', feeBasisPoints: null, feeFixedInCents: 300 }, 500, 3)).toBe(500);
    expect(platformFeeInCents(null, 500, 3)).toBe(0);
  });
});
