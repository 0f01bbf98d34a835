/**
 * The set-based payout run (issue 10, Performance): the bulk ledger posting keeps every rule of the single one, the
 * payout plan of a batch of sellers keeps the payout rules, and a run over more sellers than one claim batch (and more
 * payouts than one gateway chunk) pays each seller exactly once, alone or with a second run at once.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPayoutSellers } from '../../bench/payouts-run.js';
import { newId } from '../../src/platform/ids.js';
import { LedgerError, type LedgerPosting, postLedgerTransactions } from '../../src/routers/ledger/ledger.js';
import { FakePayoutGateway } from '../../src/routers/payouts/payout-gateway.js';
import { syncPayoutStatuses } from '../../src/routers/payouts/payout-status-sync.js';
import { CLAIM_BATCH_SELLERS, GATEWAY_BATCH, planPayouts, runPayouts } from '../../src/routers/payouts/payouts-run.js';
import { countRows, newAdmin, newTerritory, newUser, type TestTerritory, type TestUser } from '../factories/index.js';
import { expectLedgerBalanced } from '../marketplace/money-helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { configurePayouts } from './payout-helpers.js';

let t: TestApp;
let admin: TestUser;
const em = () => t.deps.orm.em.fork() as EntityManager;
beforeAll(async () => {
  // No job workers: nothing but the calls of this file moves money.
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const ledgerCounts = async () => ({ transactions: await countRows(t, 'ledger_transaction'), entries: await countRows(t, 'ledger_entry') });

describe('postLedgerTransactions (bulk)', () => {
  let territory: TestTerritory;
  let sellers: TestUser[];
  beforeAll(async () => {
    territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    sellers = [await newUser(t), await newUser(t), await newUser(t)];
  });
  const sale = (key: string, seller: TestUser, net: number, fee = 100): LedgerPosting => ({
    idempotencyKey: key,
    territoryId: territory.id,
    currency: 'BRL',
    entries: [
      { account: { kind: 'gateway_clearing' }, amountInCents: -(net + fee) },
      { account: { kind: 'seller_pending', ownerUserId: seller.id }, amountInCents: net },
      { account: { kind: 'platform_revenue' }, amountInCents: fee },
    ],
  });

  it('records each posting once, creating the accounts on first use; a repeat answers the same transactions, created: false', async () => {
    const postings = sellers.map((s, i) => sale(`bulk:${newId()}`, s, 1000 * (i + 1)));
    const before = await ledgerCounts();
    const first = await postLedgerTransactions(em(), postings);
    expect(first.map((r) => [r.idempotencyKey, r.created, r.entries.length])).toEqual(postings.map((p) => [p.idempotencyKey, true, 3]));
    expect(await ledgerCounts()).toEqual({ transactions: before.transactions + 3, entries: before.entries + 9 });
    // The three sellers' pending accounts, one clearing and one revenue account.
    const accounts = new Set(first.flatMap((r) => r.entries.map((e) => e.accountId)));
    expect(accounts.size).toBe(5);
    const [pending] = await t.sql<{ total: string }>(
      `select sum(e.amount_in_cents)::text as total from ledger_entry e join ledger_account a on a.id = e.account_id
        where a.kind = 'seller_pending' and a.owner_user_id = $1`,
      [sellers[1]!.id],
    );
    expect(pending!.total).toBe('2000');

    // The same batch again, plus a new posting: the repeats write nothing, the new one is recorded.
    const extra = sale(`bulk:${newId()}`, sellers[0]!, 500);
    const again = await postLedgerTransactions(em(), [...postings, extra]);
    expect(again.map((r) => r.created)).toEqual([false, false, false, true]);
    expect(again.slice(0, 3).map((r) => r.id)).toEqual(first.map((r) => r.id));
    expect(again[0]!.entries.map((e) => e.amountInCents).sort((a, b) => a - b)).toEqual([-1100, 100, 1000]);
    expect(await ledgerCounts()).toEqual({ transactions: before.transactions + 4, entries: before.entries + 12 });
    await expectLedgerBalanced(t);
  });

  it('concurrent batches of the same keys record them once', async () => {
    const postings = sellers.map((s) => sale(`bulk:${newId()}`, s, 700));
    const before = await ledgerCounts();
    const results = await Promise.all(Array.from({ length: 5 }, () => postLedgerTransactions(em(), postings)));
    expect(await ledgerCounts()).toEqual({ transactions: before.transactions + 3, entries: before.entries + 9 });
    for (const r of results) expect(r.map((x) => x.id)).toEqual(results[0]!.map((x) => x.id));
    expect(results.flat().filter((r) => r.created)).toHaveLength(3);
  });

  it('refuses, writing nothing of the batch: an unbalanced posting, a key reused for other entries, a key twice, an owner on a platform account', async () => {
    const recorded = sale(`bulk:${newId()}`, sellers[0]!, 900);
    await postLedgerTransactions(em(), [recorded]);
    const before = await ledgerCounts();
    const fresh = () => sale(`bulk:${newId()}`, sellers[1]!, 300);
    const unbalanced = { ...fresh(), entries: [...fresh().entries.slice(0, 2)] };
    await expect(postLedgerTransactions(em(), [fresh(), unbalanced])).rejects.toBeInstanceOf(LedgerError);
    await expect(postLedgerTransactions(em(), [fresh(), sale(recorded.idempotencyKey, sellers[0]!, 901)])).rejects.toThrow(/already used for other entries/);
    const twice = fresh();
    await expect(postLedgerTransactions(em(), [twice, twice])).rejects.toThrow(/distinct/);
    const ownedPlatform: LedgerPosting = {
      ...fresh(),
      entries: [
        { account: { kind: 'platform_revenue', ownerUserId: sellers[0]!.id }, amountInCents: -5 },
        { account: { kind: 'seller_ready', ownerUserId: sellers[0]!.id }, amountInCents: 5 },
      ],
    };
    await expect(postLedgerTransactions(em(), [fresh(), ownedPlatform])).rejects.toBeInstanceOf(LedgerError);
    expect(await ledgerCounts()).toEqual(before);
    expect(await postLedgerTransactions(em(), [])).toEqual([]);
  });
});

describe('planPayouts (a batch of sellers)', () => {
  const tx = (id: string, sellerUserId: string, amountInCents: number, currency = 'BRL') => ({ id, sellerUserId, currency, amountInCents });
  const shape = (planned: ReturnType<typeof planPayouts>) =>
    planned.map((p) => `${p.sellerUserId}/${p.currency}:${p.lines.map((l) => `${l.transactionId}${l.amountInCents}`).join('+')}=${p.amountInCents}`);

  it('per seller and currency: skipped below the minimum or at zero; every payout at most the maximum, only a transaction above it split', () => {
    const planned = planPayouts(
      [
        tx('a', 'S1', 3000),
        tx('b', 'S1', 3000),
        tx('c', 'S1', 5000),
        tx('d', 'S2', 900),
        tx('e', 'S3', 0),
        tx('f', 'S4', 7000),
        tx('g', 'S5', 600, 'USD'),
        tx('h', 'S5', 600, 'USD'),
        tx('i', 'S5', 1500),
      ],
      1000,
      6000,
    );
    expect(shape(planned)).toEqual([
      'S1/BRL:a3000+b3000=6000',
      'S1/BRL:c5000=5000',
      'S4/BRL:f6000=6000',
      'S4/BRL:f1000=1000',
      'S5/USD:g600+h600=1200',
      'S5/BRL:i1500=1500',
    ]);
    expect(planned.every((p) => p.amountInCents <= 6000)).toBe(true);
    expect(planned.map((p) => p.transactionIds.join(''))).toEqual(['ab', 'c', 'f', 'f', 'gh', 'i']);
    expect(new Set(planned.map((p) => p.id)).size).toBe(planned.length);
    expect(shape(planPayouts([tx('a', 'S1', 10), tx('b', 'S1', 20)], 0, null))).toEqual(['S1/BRL:a10+b20=30']);
    expect(planPayouts([], 0, null)).toEqual([]);
  });
});

describe('a run over more sellers than one claim batch', () => {
  const SELLERS = CLAIM_BATCH_SELLERS + 150;

  /**
   * A marketplace territory with SELLERS seeded sellers, each with one sale READY a day ago (and one paid out, sold two
   * days ago, its payout a day later): the sales of the last 36 hours are the READY ones, the payouts of the last hour
   * this test's.
   */
  async function seededTerritory(config: Record<string, unknown>) {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    await configurePayouts(t, admin, territory.id, config);
    const buyer = await newUser(t);
    await seedPayoutSellers(t.sql, { territoryId: territory.id, buyerUserId: buyer.id, sellers: SELLERS, historySalesPerSeller: 1 });
    return territory;
  }

  async function expectEachPaidOnce(territoryId: string, minimum: number) {
    const payouts = await t.sql<{ status: string; amount: string; transaction_ids: string[]; seller_user_id: string }>(
      `select status, amount_in_cents::text as amount, transaction_ids, seller_user_id from payout where territory_id = $1 and created_at_utc > now() - interval '1 hour'`,
      [territoryId],
    );
    const [eligible] = await t.sql<{ n: number; total: string }>(
      `select count(*)::int as n, coalesce(sum(net_amount_in_cents), 0)::text as total from seller_transaction
        where territory_id = $1 and created_at_utc > now() - interval '36 hours' and net_amount_in_cents >= $2`,
      [territoryId, minimum],
    );
    expect(payouts).toHaveLength(eligible!.n);
    expect(payouts.every((p) => p.status === 'COMPLETED')).toBe(true);
    expect(new Set(payouts.map((p) => p.seller_user_id)).size).toBe(eligible!.n);
    expect(payouts.reduce((sum, p) => sum + Number(p.amount), 0)).toBe(Number(eligible!.total));
    // Below the minimum: still READY, in no payout, and its money in seller_ready.
    const [left] = await t.sql<{ waiting: string; ready: string; transit: string }>(
      `select (select coalesce(sum(net_amount_in_cents), 0) from seller_transaction where territory_id = $1 and status = 'READY' and payout_id is null)::text as waiting,
              (select coalesce(sum(e.amount_in_cents), 0) from ledger_entry e join ledger_account a on a.id = e.account_id
                where a.territory_id = $1 and a.kind = 'seller_ready')::text as ready,
              (select coalesce(sum(e.amount_in_cents), 0) from ledger_entry e join ledger_account a on a.id = e.account_id
                where a.territory_id = $1 and a.kind = 'payouts_in_transit')::text as transit`,
      [territoryId],
    );
    expect(left).toEqual({ waiting: left!.ready, ready: left!.ready, transit: '0' });
    expect(await countRows(t, 'seller_transaction', `territory_id = $1 and status = 'READY' and net_amount_in_cents >= $2`, [territoryId, minimum])).toBe(0);
    await expectLedgerBalanced(t);
  }

  it(`pays each of ${CLAIM_BATCH_SELLERS + 150} sellers once (two claim batches, two gateway chunks); a re-run changes nothing`, async () => {
    expect(SELLERS).toBeGreaterThan(GATEWAY_BATCH);
    const territory = await seededTerritory({});
    const gateway = new FakePayoutGateway();
    const run = await runPayouts(em(), gateway, new Date(), territory.id);
    expect(run).toEqual({ territories: 1, created: SELLERS, submitted: SELLERS, errors: [], failedTerritories: [] });
    const sync = await syncPayoutStatuses(em(), gateway, new Date(), territory.id);
    expect(sync).toEqual({ submitted: 0, completed: SELLERS, failed: 0, errors: [] });
    await expectEachPaidOnce(territory.id, 0);
    const before = await ledgerCounts();
    expect(await runPayouts(em(), gateway, new Date(), territory.id)).toEqual({ territories: 1, created: 0, submitted: 0, errors: [], failedTerritories: [] });
    expect(await syncPayoutStatuses(em(), gateway, new Date(), territory.id)).toEqual({ submitted: 0, completed: 0, failed: 0, errors: [] });
    expect(await ledgerCounts()).toEqual(before);
  });

  it('two runs at once over the same sellers, with a minimum: each eligible seller paid once, the others wait in ready', async () => {
    const minimum = 5000;
    const territory = await seededTerritory({ minimumPayoutAmountInCents: minimum });
    const gateway = new FakePayoutGateway();
    const runs = await Promise.all([runPayouts(em(), gateway, new Date(), territory.id), runPayouts(em(), gateway, new Date(), territory.id)]);
    const [eligible] = await t.sql<{ n: number }>(
      `select count(*)::int as n from seller_transaction where territory_id = $1 and created_at_utc > now() - interval '36 hours' and net_amount_in_cents >= $2`,
      [territory.id, minimum],
    );
    expect(eligible!.n).toBeGreaterThan(0);
    expect(eligible!.n).toBeLessThan(SELLERS);
    expect(runs[0]!.created + runs[1]!.created).toBe(eligible!.n);
    await Promise.all([syncPayoutStatuses(em(), gateway, new Date(), territory.id), syncPayoutStatuses(em(), gateway, new Date(), territory.id)]);
    await expectEachPaidOnce(territory.id, minimum);
  });
});
