/**
 * The seller's transactions page and the reads behind a balance in a chosen currency stay index-backed however many
 * sellers and sales the territory has: EXPLAIN of each statement exactly as the service sends it, over the seed of
 * `npm run bench:payouts` (sellers with a paid-out history and one READY sale each).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPayoutSellers, SELLER_READ_TABLES } from '../../bench/payouts-run.js';
import {
  latestSellerCurrencyQuery,
  sellerCurrenciesQuery,
  sellerSaleInCurrencyQuery,
  sellerTransactionsQuery,
} from '../../src/routers/payouts/seller-balance.queries.js';
import { newTerritory, newUser, type TestTerritory } from '../factories/index.js';
import { expectIndexedRead, planOf, planSummary } from '../factories/query-plan.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let territory: TestTerritory;
let sellerUserId: string;
let bigSellerUserId: string;

beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  const buyer = await newUser(t);
  // 200 sellers with 15 sales paid out and 1 ready each (16 per seller), and one seller with 1,501 sales.
  await seedPayoutSellers(t.sql, { territoryId: territory.id, buyerUserId: buyer.id, sellers: 200, historySalesPerSeller: 15 });
  await seedPayoutSellers(t.sql, { territoryId: territory.id, buyerUserId: buyer.id, sellers: 1, historySalesPerSeller: 1500 });
  await t.sql('vacuum analyze');
  const sellers = await t.sql<{ seller_user_id: string; n: number }>(
    'select seller_user_id, count(*)::int as n from seller_transaction where territory_id = $1 group by seller_user_id order by n desc, seller_user_id',
    [territory.id],
  );
  expect(sellers).toHaveLength(201);
  bigSellerUserId = sellers[0]!.seller_user_id;
  expect(sellers[0]!.n).toBe(1501);
  sellerUserId = sellers[100]!.seller_user_id;
});
afterAll(() => t.close());

describe('seller transactions page (skip/take)', () => {
  it.each([
    ['the first page', { offset: 0, limit: 20 }],
    ['the second page', { offset: 20, limit: 20 }],
    ['the largest page', { offset: 0, limit: 100 }],
    ['a page deep in the history', { offset: 500, limit: 100 }],
  ])(
    '%s of a seller with 1,501 sales: an index scan of seller_transaction_seller_idx in list order, no sequential scan, no sort of the list',
    async (_name, page) => {
      const query = sellerTransactionsQuery(territory.id, bigSellerUserId, page);
      await expectIndexedRead(t, query, SELLER_READ_TABLES, /^seller_transaction_seller_idx$/);
      // The index hands the rows over newest first; only rows of one creation time are put in id order (an
      // incremental sort, row groups of one in practice), so the page stops reading after skip + take rows.
      const nodes = await planOf(t, query);
      expect(
        nodes.filter((n) => n['Node Type'] === 'Sort'),
        planSummary(nodes),
      ).toEqual([]);
      expect(
        nodes.some((n) => n['Node Type'] === 'Index Scan' && n['Index Name'] === 'seller_transaction_seller_idx'),
        planSummary(nodes),
      ).toBe(true);
    },
  );

  it('a seller with a few sales: any page reads them through seller_transaction_seller_idx, never the whole table', async () => {
    for (const page of [
      { offset: 0, limit: 20 },
      { offset: 20, limit: 20 },
      { offset: 0, limit: 100 },
    ]) {
      await expectIndexedRead(t, sellerTransactionsQuery(territory.id, sellerUserId, page), SELLER_READ_TABLES, /^seller_transaction_seller_idx$/);
    }
  });

  it('the page is the slice of the whole list in (created_at_utc desc, id desc) order', async () => {
    const all = await t.sql<{ id: string }>(
      'select id from seller_transaction where territory_id = $1 and seller_user_id = $2 order by created_at_utc desc, id desc',
      [territory.id, sellerUserId],
    );
    expect(all).toHaveLength(16);
    const em = t.deps.orm.em.fork();
    const page = async (offset: number, limit: number) => {
      const { sql, params } = sellerTransactionsQuery(territory.id, sellerUserId, { offset, limit });
      return (await em.getConnection().execute<{ id: string }[]>(sql, params)).map((r) => r.id);
    };
    expect([...(await page(0, 10)), ...(await page(10, 10))]).toEqual(all.map((r) => r.id));
    expect(await page(14, 5)).toEqual(all.slice(14).map((r) => r.id));
  });
});

describe('a balance in a chosen currency', () => {
  it("the seller's currencies by ledger_account_owner_user_id_index; a sale in a currency and the latest sale by seller_transaction_seller_idx", async () => {
    await expectIndexedRead(t, sellerCurrenciesQuery(territory.id, sellerUserId), SELLER_READ_TABLES, /^ledger_account_(owner_user_id_index|unique)$/);
    await expectIndexedRead(t, sellerSaleInCurrencyQuery(territory.id, sellerUserId, 'USD'), SELLER_READ_TABLES, /^seller_transaction_seller_idx$/);
    await expectIndexedRead(t, latestSellerCurrencyQuery(territory.id, sellerUserId), SELLER_READ_TABLES, /^seller_transaction_seller_idx$/);
  });
});
