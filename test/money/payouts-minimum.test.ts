/**
 * The minimum payout (spec "Seller balance": readyForPayoutAmountInCents is "past retention and minimum";
 * configuration: "amounts accumulate until this is reached"; Payout rule 3; states: "pending, then readyForPayout
 * after retention and minimum"): money past retention stays pending until the seller's releasable amount in the
 * territory and currency (due pending + ready not in a live payout) reaches the territory's minimum, then all of it
 * moves to ready, with its ledger entries, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakePayoutGateway, type PayoutGateway, type PayoutGatewayStatus } from '../../src/routers/payouts/payout-gateway.js';
import { syncPayoutStatuses } from '../../src/routers/payouts/payout-status-sync.js';
import { runPayouts } from '../../src/routers/payouts/payouts-run.js';
import { releaseSellerBalances } from '../../src/routers/payouts/seller-balance-release.js';
import { newAdmin, type TestUser } from '../factories/index.js';
import { expectLedgerBalanced, listItem } from '../marketplace/money-helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { balanceOf, configurePayouts, paidSale, payoutsOf, release, runJob, type Shop, shop, syncJob } from './payout-helpers.js';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const DAY = 86_400_000;
const em = () => t.deps.orm.em.fork();
/** Sales of 30.00 without fee: 3,000 cents each. */
const minShop = (config: Record<string, unknown>) => shop(t, admin, { price: '30.00', feeBasisPoints: 0, config });
const statuses = async (s: Shop) =>
  (await t.sql<{ status: string }>('select status from seller_transaction where seller_user_id = $1 order by created_at_utc, id', [s.seller.id])).map(
    (r) => r.status,
  );
const readyKeys = (s: Shop) =>
  t.sql<{ n: number }>(
    `select count(*)::int as n from ledger_transaction x where x.idempotency_key in
       (select 'seller-tx:' || id || ':ready' from seller_transaction where seller_user_id = $1)`,
    [s.seller.id],
  );

describe('money past retention waits in pending until the minimum', () => {
  it('below the minimum it stays pending (no ledger movement, no payout); reaching it, all of it becomes ready at once; then it is paid', async () => {
    const s = await minShop({ minimumPayoutAmountInCents: 8000 });
    await paidSale(t, s, 1);
    await paidSale(t, s, 1);
    await Promise.all([release(t), release(t), release(t)]);
    expect(await statuses(s)).toEqual(['PENDING', 'PENDING']);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 6000, readyForPayoutAmountInCents: 0, paidAmountInCents: 0 });
    expect(await readyKeys(s)).toEqual([{ n: 0 }]);
    await runJob(t, s.territory.id);
    expect(await payoutsOf(t, s.seller.id)).toEqual([]);

    await paidSale(t, s, 1);
    // Released concurrently and again: once.
    await Promise.all([release(t), release(t), release(t)]);
    await release(t);
    expect(await statuses(s)).toEqual(['READY', 'READY', 'READY']);
    expect(await readyKeys(s)).toEqual([{ n: 3 }]);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 9000, paidAmountInCents: 0 });

    await runJob(t, s.territory.id);
    await syncJob(t);
    expect((await payoutsOf(t, s.seller.id)).map((p) => [p.amount, p.status])).toEqual([['9000', 'COMPLETED']]);
    expect(await statuses(s)).toEqual(['PAID', 'PAID', 'PAID']);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 0, paidAmountInCents: 9000 });
    await expectLedgerBalanced(t);
  });

  it('exactly the minimum is enough', async () => {
    const s = await minShop({ minimumPayoutAmountInCents: 6000 });
    await paidSale(t, s, 2);
    await release(t);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 6000 });
  });

  it('only money past retention counts: a sale still retained neither releases nor is released', async () => {
    const s = await minShop({ minimumPayoutAmountInCents: 5000, retentionPeriodDays: 2 });
    const first = await paidSale(t, s, 1);
    await paidSale(t, s, 1);
    // The first sale was paid a day earlier.
    await t.sql(
      `update seller_transaction set paid_at_utc = paid_at_utc - interval '1 day', ready_for_payout_at_utc = ready_for_payout_at_utc - interval '1 day'
        where checkout_id = $1`,
      [first],
    );
    const now = Date.now();
    // A day later: the first is past retention, but 3,000 < 5,000; the second is not due yet.
    await release(t, new Date(now + DAY + 60_000));
    expect(await statuses(s)).toEqual(['PENDING', 'PENDING']);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 6000, readyForPayoutAmountInCents: 0 });
    expect(await readyKeys(s)).toEqual([{ n: 0 }]);
    // Both due: 6,000 reach it.
    await release(t, new Date(now + 2 * DAY + 60_000));
    expect(await statuses(s)).toEqual(['READY', 'READY']);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 6000 });
    await expectLedgerBalanced(t);
  });

  it('per currency: a seller reaching the minimum in one currency releases only that one', async () => {
    const s = await minShop({ minimumPayoutAmountInCents: 5000 });
    const usd = await listItem(t, s.seller, s.storeId, { priceAmount: '30.00', title: 'USD thing', currency: 'USD' });
    await paidSale(t, s, 2);
    await paidSale(t, { ...s, itemId: usd }, 1);
    await release(t);
    expect(await t.sql('select currency, status from seller_transaction where seller_user_id = $1 order by currency', [s.seller.id])).toEqual([
      { currency: 'BRL', status: 'READY' },
      { currency: 'USD', status: 'PENDING' },
    ]);
    await expectLedgerBalanced(t);
  });

  it('a minimum lowered later releases at the next run; raised later, money already ready waits there and counts towards it', async () => {
    const s = await minShop({ minimumPayoutAmountInCents: 5000 });
    await paidSale(t, s, 1);
    await release(t);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 3000, readyForPayoutAmountInCents: 0 });
    await configurePayouts(t, admin, s.territory.id, { minimumPayoutAmountInCents: 1000 });
    await release(t);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 3000 });

    // Raised to 10,000 before any payout: the 3,000 stay ready (never moved back), the run does not pay them.
    await configurePayouts(t, admin, s.territory.id, { minimumPayoutAmountInCents: 10_000 });
    await runJob(t, s.territory.id);
    expect(await payoutsOf(t, s.seller.id)).toEqual([]);
    await paidSale(t, s, 2);
    await release(t);
    // 3,000 ready + 6,000 due = 9,000 < 10,000: pending.
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 6000, readyForPayoutAmountInCents: 3000 });
    await paidSale(t, s, 1);
    await release(t);
    // 3,000 + 9,000 = 12,000: released, and paid in one payout.
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 12_000 });
    await runJob(t, s.territory.id);
    await syncJob(t);
    expect((await payoutsOf(t, s.seller.id)).map((p) => [p.amount, p.status])).toEqual([['12000', 'COMPLETED']]);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, paidAmountInCents: 12_000 });
    await expectLedgerBalanced(t);
  });

  it('money a failed payout gave back to ready counts towards the minimum of the next sales', async () => {
    const s = await minShop({ minimumPayoutAmountInCents: 5000 });
    await paidSale(t, s, 2);
    await release(t);
    const failing: PayoutGateway = {
      provider: 'fake',
      createPayout: (request) => new FakePayoutGateway().createPayout(request),
      getPayoutStatus: async (): Promise<PayoutGatewayStatus> => ({ status: 'FAILED', reason: 'scripted failure' }),
    };
    await runPayouts(em(), failing, new Date(), s.territory.id);
    await syncPayoutStatuses(em(), failing, new Date(), s.territory.id);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 6000, inTransitAmountInCents: 0 });
    await paidSale(t, s, 1);
    await releaseSellerBalances(em(), new Date(Date.now() + 60_000));
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 9000 });
    await runJob(t, s.territory.id);
    await syncJob(t);
    expect((await payoutsOf(t, s.seller.id)).map((p) => [p.amount, p.status])).toEqual([
      ['6000', 'FAILED'],
      ['9000', 'COMPLETED'],
    ]);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, paidAmountInCents: 9000 });
    await expectLedgerBalanced(t);
  });

  it('a refund of a pending sale below the minimum reverses seller_pending; nothing is released', async () => {
    const s = await minShop({ minimumPayoutAmountInCents: 5000 });
    const sale = await paidSale(t, s, 1);
    await release(t);
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/checkouts/${sale}/refund`, headers: s.seller.headers });
    expect(res.statusCode).toBe(200);
    await release(t);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 0, paidAmountInCents: 0 });
    expect(await readyKeys(s)).toEqual([{ n: 0 }]);
    await expectLedgerBalanced(t);
  });
});
