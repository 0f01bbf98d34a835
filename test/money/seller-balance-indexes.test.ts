/**
 * The seller-balance read and the seller transactions page stay index-backed however large the ledger grows
 * (issue 10, Performance): EXPLAIN of each statement exactly as the service sends it, over a ledger of a few thousand
 * entries seeded with set-based SQL (the seed of `npm run bench:payouts`, which shows the same plans with 1M). The
 * payout pages too, once other territories hold payouts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedPayoutSellers, SELLER_READ_TABLES, sellerBalanceReads } from '../../bench/payouts-run.js';
import type { SqlQuery } from '../../src/db/sql.js';
import { signUserToken } from '../../src/platform/jwt.js';
import { payoutsCountQuery, payoutsPageQuery, sellerPayouts, territoryPayouts } from '../../src/routers/payouts/payouts.queries.js';
import { sellerPendingAccountQuery } from '../../src/routers/payouts/seller-balance.queries.js';
import { newTerritory, newUser, type TestTerritory, testSession } from '../factories/index.js';
import { expectIndexedRead, planOf } from '../factories/query-plan.js';
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

describe('the payout reads use their indexes', () => {
  it('the seller_pending account by ledger_account_unique; payout pages by payout_territory_idx and payout_seller_idx, no sequential scan', async () => {
    // The seeded territory's payouts, copied into nine other territories: a territory holds a tenth of them.
    await t.sql(`
      insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
      select gen_random_uuid(), now(), 'Payouts ' || i, null, 'City', 'ST', -20 + i, -50, 5, 'ACTIVE', '{}', '{}' from generate_series(1, 9) as i`);
    await t.sql(
      `insert into payout (id, created_at_utc, territory_id, seller_user_id, amount_in_cents, currency, status, transaction_ids, provider,
                           gateway_reference, failure_reason, submitted_at_utc, completed_at_utc, failed_at_utc, updated_at_utc)
       select gen_random_uuid(), p.created_at_utc, o.id, p.seller_user_id, p.amount_in_cents, p.currency, p.status, p.transaction_ids, p.provider,
              p.gateway_reference || ':' || o.name, p.failure_reason, p.submitted_at_utc, p.completed_at_utc, p.failed_at_utc, p.updated_at_utc
         from payout p, territory o where p.territory_id = $1 and o.name like 'Payouts %'`,
      [territory.id],
    );
    await t.sql('vacuum analyze territory, payout');
    const page = { offset: 20, limit: 20 };
    const expectIndexed = (query: SqlQuery, index: RegExp) => expectIndexedRead(t, query, SELLER_READ_TABLES, index);
    await expectIndexed(sellerPendingAccountQuery(territory.id, 'BRL', sellerUserId), /^ledger_account_unique$/);
    for (const filter of [territoryPayouts(territory.id, undefined, undefined), territoryPayouts(territory.id, 'COMPLETED', undefined)]) {
      await expectIndexed(payoutsPageQuery(filter, page), /^payout_territory_idx$/);
    }
    await expectIndexed(payoutsCountQuery(territoryPayouts(territory.id, undefined, undefined)), /^payout_territory_idx$/);
    // Of one seller, the territory's list may as well start from the seller's index.
    await expectIndexed(payoutsPageQuery(territoryPayouts(territory.id, undefined, sellerUserId), page), /^payout_(territory|seller)_idx$/);
    await expectIndexed(payoutsPageQuery(sellerPayouts(sellerUserId, territory.id), page), /^payout_seller_idx$/);
    await expectIndexed(payoutsCountQuery(sellerPayouts(sellerUserId, territory.id)), /^payout_seller_idx$/);
  });
});
