/**
 * The seller-balance read and the seller transactions page stay index-backed however large the ledger grows
 * (issue 10, Performance): EXPLAIN of each statement exactly as the service sends it, over a ledger of a few thousand
 * entries seeded with set-based SQL (the seed of `npm run bench:payouts`, which shows the same plans with 1M).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPayoutSellers, SELLER_READ_TABLES, sellerBalanceReads } from '../../bench/payouts-run.js';
import { signUserToken } from '../../src/platform/jwt.js';
import { newTerritory, newUser, type TestTerritory, testSession } from '../factories/index.js';
import { planOf } from '../factories/query-plan.js';
import { expectLedgerBalanced } from '../marketplace/money-helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let territory: TestTerritory;
let sellerUserId: string;

beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  const buyer = await newUser(t);
  // 400 sellers, each with 2 sales paid out and 1 ready: 400 * (2 * 9 + 5) = 9,200 ledger entries, 1,203 accounts.
  const seeded = await seedPayoutSellers(t.sql, { territoryId: territory.id, buyerUserId: buyer.id, sellers: 400, historySalesPerSeller: 2 });
  expect(seeded.ledgerEntries).toBe(9200);
  await t.sql('vacuum analyze');
  const [row] = await t.sql<{ seller_user_id: string }>(
    'select seller_user_id from seller_transaction where territory_id = $1 order by seller_user_id offset 200 limit 1',
    [territory.id],
  );
  sellerUserId = row!.seller_user_id;
});
afterAll(() => t.close());

describe('seller-balance reads use their indexes (EXPLAIN on a few thousand ledger entries)', () => {
  it('the seed is a balanced ledger the balance projects: 2 sales paid out, 1 ready', async () => {
    expect(await t.sql<{ n: number }>('select count(*)::int as n from ledger_entry')).toEqual([{ n: 9200 }]);
    await expectLedgerBalanced(t);
    const [sales] = await t.sql<{ paid: string; ready: string }>(
      `select sum(net_amount_in_cents) filter (where status = 'PAID')::text as paid, sum(net_amount_in_cents) filter (where status = 'READY')::text as ready
         from seller_transaction where seller_user_id = $1`,
      [sellerUserId],
    );
    const [sums] = await t.sql<{ pending: string; ready: string; paid: string }>(
      `select coalesce(sum(e.amount_in_cents) filter (where a.kind = 'seller_pending'), 0)::text as pending,
              coalesce(sum(e.amount_in_cents) filter (where a.kind = 'seller_ready'), 0)::text as ready,
              coalesce(sum(e.amount_in_cents) filter (where a.kind = 'seller_paid'), 0)::text as paid
         from ledger_account a join ledger_entry e on e.account_id = a.id where a.owner_user_id = $1`,
      [sellerUserId],
    );
    expect(sums).toEqual({ pending: '0', ready: sales!.ready, paid: sales!.paid });
  });

  it.each(sellerBalanceReads('00000000-0000-0000-0000-000000000000', '00000000-0000-0000-0000-000000000000').map((r) => r.name))(
    '%s: index scans only, no sequential scan of the ledger, the seller transactions or the payouts',
    async (name) => {
      const { query } = sellerBalanceReads(territory.id, sellerUserId).find((r) => r.name === name)!;
      const nodes = await planOf(t, query);
      const seqScans = nodes.filter((n) => n['Node Type'] === 'Seq Scan' && SELLER_READ_TABLES.includes(n['Relation Name'] ?? ''));
      expect(seqScans).toEqual([]);
      const indexes = nodes.map((n) => n['Index Name']).filter(Boolean);
      expect(indexes.length).toBeGreaterThan(0);
    },
  );

  it('the balance sums reach the entries through ledger_entry_account_id_index, the page through seller_transaction_seller_idx', async () => {
    const reads = sellerBalanceReads(territory.id, sellerUserId);
    const indexesOf = async (name: string) => (await planOf(t, reads.find((r) => r.name === name)!.query)).map((n) => n['Index Name']);
    expect(await indexesOf('balance sums (pending, ready, paid)')).toContain('ledger_entry_account_id_index');
    expect(await indexesOf('seller transactions page')).toContain('seller_transaction_seller_idx');
    expect(await indexesOf('latest sale currency')).toContain('seller_transaction_seller_idx');
  });

  it('GET .../seller-balance/me answers the seeded seller its projection', async () => {
    const { token } = await signUserToken(t.deps.config.jwt, testSession(sellerUserId));
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/territories/${territory.id}/seller-balance/me`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ pendingAmountInCents: 0, inTransitAmountInCents: 0, readyForPayoutAmountInCents: expect.any(Number) });
    expect(res.json().readyForPayoutAmountInCents).toBeGreaterThan(0);
  });
});
