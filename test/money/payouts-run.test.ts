import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { JOBS } from '../../src/jobs/registry.js';
import { FakePayoutGateway, type PayoutGateway } from '../../src/routers/payouts/payout-gateway.js';
import { syncPayoutStatuses } from '../../src/routers/payouts/payout-status-sync.js';
import { isPayoutDue, runPayouts, splitIntoPayouts, territoriesDueForPayout } from '../../src/routers/payouts/payouts-run.js';
import { countRows, newAdmin, newTerritory, newUser, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { expectLedgerBalanced } from '../marketplace/money-helpers.js';
import { countForks } from '../setup/forks.js';
import { createSecondInstance, createTestApp, type TestApp } from '../setup/test-app.js';
import { PRODUCTION_ENV } from '../platform/support.js';
import { balanceOf, get, jobContext, paidSale, payoutsOf, release, runJob, shop, syncJob } from './payout-helpers.js';

let t: TestApp;
let admin: TestUser;
let financeManager: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
  financeManager = await newUser(t, { permissions: ['FINANCIAL_MANAGER'] });
});
afterAll(() => t.close());

const post = (url: string, user: TestUser | null) => t.app.inject({ method: 'POST', url, headers: user?.headers ?? {} });
const runUrl = (territoryId: string) => `/api/v1/territories/${territoryId}/payouts/run`;
const ledgerKeys = (payoutId: string) =>
  t.sql<{ idempotency_key: string }>(`select idempotency_key from ledger_transaction where idempotency_key like $1 order by idempotency_key`, [
    `payout:${payoutId}:%`,
  ]);

/** The fake gateway, counting the transfers asked for; `crashAfterCreate` throws after the gateway accepted (a worker killed before its commit). */
class CountingGateway implements PayoutGateway {
  readonly provider = 'fake' as const;
  readonly created: string[] = [];
  private readonly fake = new FakePayoutGateway();
  constructor(private readonly opts: { crashAfterCreate?: boolean; neverSettles?: boolean; unreachable?: boolean } = {}) {}
  async createPayout(request: Parameters<PayoutGateway['createPayout']>[0]) {
    if (this.opts.unreachable) throw new Error('connect ECONNREFUSED');
    const answer = await this.fake.createPayout(request);
    this.created.push(request.payoutId);
    if (this.opts.crashAfterCreate) throw new Error('worker killed after the gateway call');
    return answer;
  }
  async getPayoutStatus(request: Parameters<PayoutGateway['getPayoutStatus']>[0]) {
    return this.opts.neverSettles ? { status: 'PROCESSING' as const } : this.fake.getPayoutStatus(request);
  }
}

describe('a manual run', () => {
  it('settles end to end: 202, the job pays, the seller sees paid, the platform sees the expense, a refund is refused', async () => {
    const s = await shop(t, admin, { config: {} });
    const first = await paidSale(t, s, 2);
    await paidSale(t, s, 1);
    await release(t);
    expect(await balanceOf(t, s)).toMatchObject({
      pendingAmountInCents: 0,
      readyForPayoutAmountInCents: 4590 + 2295,
      inTransitAmountInCents: 0,
      paidAmountInCents: 0,
    });

    const accepted = await post(runUrl(s.territory.id), financeManager);
    expect(accepted.statusCode).toBe(202);
    expect(accepted.json()).toEqual({ jobId: expect.any(String) });
    expect(await countRows(t, 'audit_entry', `action = 'payouts.run-requested' and territory_id = $1`, [s.territory.id])).toBe(1);

    // The worker runs the job and the status sync it sends; bounded wait for the money to arrive.
    let balance = await balanceOf(t, s);
    for (let i = 0; i < 200 && balance.paidAmountInCents === 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      balance = await balanceOf(t, s);
    }
    expect(balance).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 0, inTransitAmountInCents: 0, paidAmountInCents: 6885 });

    const list = await get(t, `/api/v1/territories/${s.territory.id}/payouts`, admin);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ totalCount: 1, pageNumber: 1, pageSize: 20, totalPages: 1, hasNextPage: false, hasPreviousPage: false });
    const payout = list.json().items[0];
    const txs = (await get(t, `/api/v1/territories/${s.territory.id}/seller-balance/me/transactions`, s.seller)).json();
    expect(payout).toEqual({
      id: expect.any(String),
      territoryId: s.territory.id,
      sellerUserId: s.seller.id,
      amountInCents: 6885,
      currency: 'BRL',
      status: 'COMPLETED',
      transactionIds: expect.arrayContaining(txs.map((x: { id: string }) => x.id)),
      lines: expect.arrayContaining(txs.map((x: { id: string; netAmountInCents: number }) => ({ transactionId: x.id, amountInCents: x.netAmountInCents }))),
      failureReason: null,
      createdAtUtc: expect.any(String),
      completedAtUtc: expect.any(String),
    });
    expect(payout.transactionIds).toHaveLength(2);
    expect(payout.lines).toHaveLength(2);
    for (const tx of txs) expect(tx).toMatchObject({ status: 'PAID', payoutId: payout.id });

    const mine = await get(t, `/api/v1/territories/${s.territory.id}/seller-balance/me/payouts`, s.seller);
    expect(mine.statusCode).toBe(200);
    expect(mine.json().items).toEqual([payout]);

    const base = `/api/v1/territories/${s.territory.id}/platform-financial`;
    expect((await get(t, `${base}/balance`, admin)).json()).toEqual({
      territoryId: s.territory.id,
      totalRevenueInCents: 765,
      totalExpensesInCents: 6885,
      netBalanceInCents: 765 - 6885,
      currency: 'BRL',
    });
    expect((await get(t, `${base}/expenses`, financeManager)).json().items).toEqual([
      { id: expect.any(String), payoutId: payout.id, amountInCents: 6885, currency: 'BRL', createdAtUtc: expect.any(String) },
    ]);
    expect((await ledgerKeys(payout.id)).map((k) => k.idempotency_key)).toEqual([`payout:${payout.id}:paid`, `payout:${payout.id}:sent`]);

    const refund = await post(`/api/v1/checkouts/${first}/refund`, s.seller);
    expect(refund.statusCode).toBe(409);
    expect(refund.json().code).toBe('CHECKOUT_NOT_REFUNDABLE');
    await expectLedgerBalanced(t);
  });

  it('the wallet excludes money in transit and paid', async () => {
    const s = await shop(t, admin, { config: {} });
    await paidSale(t, s, 1);
    await release(t);
    await runPayouts(t.deps.orm.em.fork(), new CountingGateway({ neverSettles: true }), new Date(), s.territory.id);
    await syncPayoutStatuses(t.deps.orm.em.fork(), new CountingGateway({ neverSettles: true }), new Date());
    const balance = (await get(t, `/api/v1/territories/${s.territory.id}/seller-balance/me`, s.seller)).json();
    expect(balance).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 2295, paidAmountInCents: 0 });
    expect((await get(t, `/api/v1/wallets/${balance.id}`, s.seller)).json().balance).toBe(0);
    await syncJob(t);
  });
});

describe('payout rules', () => {
  it('below the minimum the money stays pending; once the releasable amount reaches it, it becomes ready and is paid', async () => {
    const s = await shop(t, admin, { config: { minimumPayoutAmountInCents: 5000 } });
    await paidSale(t, s, 1);
    await release(t);
    await runJob(t, s.territory.id);
    expect(await payoutsOf(t, s.seller.id)).toEqual([]);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 2295, readyForPayoutAmountInCents: 0, inTransitAmountInCents: 0 });

    await paidSale(t, s, 2);
    await release(t);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 6885 });
    await runJob(t, s.territory.id);
    await syncJob(t);
    const payouts = await payoutsOf(t, s.seller.id);
    expect(payouts.map((p) => [p.amount, p.status, p.transaction_ids.length])).toEqual([['6885', 'COMPLETED', 2]]);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, paidAmountInCents: 6885 });
  });

  it('every payout is at most the maximum: a transaction that fits is not split, a larger one is paid in several payouts', async () => {
    const s = await shop(t, admin, { config: { minimumPayoutAmountInCents: 3000, maximumPayoutAmountInCents: 5000 } });
    for (const quantity of [1, 1, 1, 3]) await paidSale(t, s, quantity);
    await release(t);
    await runJob(t, s.territory.id);
    await syncJob(t);
    const payouts = await payoutsOf(t, s.seller.id);
    // 2295 + 2295 | 2295 + the rest 1885 of the 6885 sale | 5000 of the 6885 sale. Parts below the minimum are fine: the total reached it.
    expect(payouts.map((p) => Number(p.amount)).sort((a, b) => a - b)).toEqual([4180, 4590, 5000]);
    expect(payouts.every((p) => Number(p.amount) <= 5000 && p.status === 'COMPLETED')).toBe(true);
    const lines = await t.sql<{ payout_id: string; seller_transaction_id: string; amount: string; net: string }>(
      `select l.payout_id, l.seller_transaction_id, l.amount_in_cents::text as amount, st.net_amount_in_cents::text as net
         from payout_line l join seller_transaction st on st.id = l.seller_transaction_id where st.seller_user_id = $1`,
      [s.seller.id],
    );
    for (const p of payouts) {
      expect(lines.filter((l) => l.payout_id === p.id).reduce((sum, l) => sum + Number(l.amount), 0)).toBe(Number(p.amount));
    }
    const split = lines.filter((l) => l.net === '6885');
    expect(split.map((l) => Number(l.amount)).sort((a, b) => a - b)).toEqual([1885, 5000]);
    expect(lines.filter((l) => l.net !== '6885').every((l) => l.amount === l.net)).toBe(true);
    expect(
      (await t.sql<{ status: string }>('select distinct status from seller_transaction where seller_user_id = $1', [s.seller.id])).map((r) => r.status),
    ).toEqual(['PAID']);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, paidAmountInCents: 13770 });
    await expectLedgerBalanced(t);
  });

  it('splitIntoPayouts: greedy in order, at most the maximum, splitting only what is larger than it, zero amounts ride along', () => {
    const tx = (id: string, amountInCents: number) => ({ id, amountInCents });
    const shape = (parts: ReturnType<typeof splitIntoPayouts>) => parts.map((p) => p.lines.map((l) => `${l.transactionId}${l.amountInCents}`).join('+'));
    expect(shape(splitIntoPayouts([tx('a', 30), tx('b', 30), tx('c', 50)], 60))).toEqual(['a30+b30', 'c50']);
    expect(shape(splitIntoPayouts([tx('a', 30), tx('b', 100), tx('c', 10)], 60))).toEqual(['a30', 'b60', 'b40+c10']);
    expect(shape(splitIntoPayouts([tx('a', 30), tx('b', 130)], 60))).toEqual(['a30+b10', 'b60', 'b60']);
    expect(shape(splitIntoPayouts([tx('a', 50), tx('b', 130)], 60))).toEqual(['a50+b10', 'b60', 'b60']);
    expect(shape(splitIntoPayouts([tx('a', 0), tx('b', 100), tx('c', 0)], 60))).toEqual(['a0+b60', 'b40+c0']);
    expect(shape(splitIntoPayouts([tx('a', 100), tx('b', 0), tx('c', 30)], 60))).toEqual(['a60', 'a40+b0', 'c30']);
    expect(shape(splitIntoPayouts([tx('a', 120)], 60))).toEqual(['a60', 'a60']);
    expect(shape(splitIntoPayouts([tx('a', 10), tx('b', 20)], null))).toEqual(['a10+b20']);
    expect(splitIntoPayouts([], 60)).toEqual([]);
    for (const parts of [splitIntoPayouts([tx('a', 7), tx('b', 999), tx('c', 61), tx('d', 1)], 60)]) {
      expect(parts.every((p) => p.amountInCents <= 60 && p.amountInCents === p.lines.reduce((s, l) => s + l.amountInCents, 0))).toBe(true);
      expect(parts.reduce((s, p) => s + p.amountInCents, 0)).toBe(7 + 999 + 61 + 1);
    }
  });

  it('a failed transfer becomes FAILED, its money returns to ready and the next run retries it', async () => {
    // 6.66 BRL without fee: the fake gateway declines amounts ending in 666 cents.
    const s = await shop(t, admin, { price: '6.66', feeBasisPoints: 0, config: {} });
    const sale = await paidSale(t, s, 1);
    await release(t);
    await runJob(t, s.territory.id);
    await syncJob(t);
    const [failed] = await payoutsOf(t, s.seller.id);
    expect(failed).toMatchObject({ amount: '666', status: 'FAILED', failure_reason: expect.stringContaining('666') });
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 666, inTransitAmountInCents: 0, paidAmountInCents: 0 });
    expect((await ledgerKeys(failed!.id)).map((k) => k.idempotency_key)).toEqual([`payout:${failed!.id}:failed`, `payout:${failed!.id}:sent`]);
    expect(await t.sql('select status, payout_id from seller_transaction where checkout_id = $1', [sale])).toEqual([{ status: 'READY', payout_id: null }]);
    expect(await countRows(t, 'audit_entry', `action = 'payout.failed' and subject_id = $1`, [failed!.id])).toBe(1);
    const listed = (await get(t, `/api/v1/territories/${s.territory.id}/payouts?status=FAILED`, admin)).json();
    expect(listed.items.map((p: { id: string }) => p.id)).toEqual([failed!.id]);

    // The next run takes the same transaction again; with a second sale the amount (1332) goes through.
    await paidSale(t, s, 1);
    await release(t);
    await runJob(t, s.territory.id);
    await syncJob(t);
    const payouts = await payoutsOf(t, s.seller.id);
    expect(payouts.map((p) => [p.amount, p.status])).toEqual([
      ['666', 'FAILED'],
      ['1332', 'COMPLETED'],
    ]);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 0, paidAmountInCents: 1332 });
    await expectLedgerBalanced(t);
  });

  it('a gateway that does not answer leaves the payout PENDING and reports it; the sync submits it later', async () => {
    const s = await shop(t, admin, { config: {} });
    await paidSale(t, s, 1);
    await release(t);
    const result = await runPayouts(t.deps.orm.em.fork(), new CountingGateway({ unreachable: true }), new Date(), s.territory.id);
    expect(result).toMatchObject({ created: 1, submitted: 0, errors: [{ message: 'connect ECONNREFUSED' }] });
    expect((await payoutsOf(t, s.seller.id)).map((p) => p.status)).toEqual(['PENDING']);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 2295 });
    await syncJob(t);
    expect((await payoutsOf(t, s.seller.id)).map((p) => p.status)).toEqual(['COMPLETED']);
    expect(await balanceOf(t, s)).toMatchObject({ inTransitAmountInCents: 0, paidAmountInCents: 2295 });
  });

  it('a refund is refused (409) while the sale is in a payout in transit', async () => {
    const s = await shop(t, admin, { config: {} });
    const sale = await paidSale(t, s, 1);
    await release(t);
    await runPayouts(t.deps.orm.em.fork(), new CountingGateway({ neverSettles: true }), new Date(), s.territory.id);
    const refund = await post(`/api/v1/checkouts/${sale}/refund`, s.seller);
    expect(refund.statusCode).toBe(409);
    expect(refund.json().code).toBe('CHECKOUT_NOT_REFUNDABLE');
    await syncJob(t);
    expect(await balanceOf(t, s)).toMatchObject({ paidAmountInCents: 2295 });
  });
});

describe('idempotency and concurrency', () => {
  it('a crash between the gateway call and the commit, then a re-run: one transfer per payout id, each transaction paid once', async () => {
    const s = await shop(t, admin, { config: {} });
    await paidSale(t, s, 1);
    await paidSale(t, s, 2);
    await release(t);
    const crashing = new CountingGateway({ crashAfterCreate: true });
    await runPayouts(t.deps.orm.em.fork(), crashing, new Date(), s.territory.id);
    const [payout] = await payoutsOf(t, s.seller.id);
    expect(crashing.created).toEqual([payout!.id]);

    const healthy = new CountingGateway();
    const rerun = await runPayouts(t.deps.orm.em.fork(), healthy, new Date(), s.territory.id);
    // Nothing new is claimed; the same payout id goes to the gateway again (its idempotency key).
    expect(rerun.created).toBe(0);
    await syncPayoutStatuses(t.deps.orm.em.fork(), healthy, new Date());
    const payouts = await payoutsOf(t, s.seller.id);
    expect(payouts.map((p) => [p.id, p.status, p.amount])).toEqual([[payout!.id, 'COMPLETED', '6885']]);
    expect(healthy.created.every((id) => id === payout!.id)).toBe(true);
    expect(await t.sql('select gateway_reference from payout where id = $1', [payout!.id])).toEqual([{ gateway_reference: `fake_po_${payout!.id}` }]);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 0, paidAmountInCents: 6885 });
    await expectLedgerBalanced(t);
  });

  it('two runs at once, then twice more, and syncs at once: each transaction in exactly one payout, paid once', async () => {
    const s = await shop(t, admin, { config: { maximumPayoutAmountInCents: 5000 } });
    for (const quantity of [1, 2, 1, 1]) await paidSale(t, s, quantity);
    await release(t);
    await Promise.all([runJob(t, s.territory.id), runJob(t, s.territory.id), runJob(t)]);
    await runJob(t, s.territory.id);
    await Promise.all([syncJob(t), syncJob(t), syncJob(t)]);
    await syncJob(t);
    const payouts = await payoutsOf(t, s.seller.id);
    const carried = payouts.flatMap((p) => p.transaction_ids);
    expect(carried).toHaveLength(4);
    expect(new Set(carried).size).toBe(4);
    expect(payouts.every((p) => p.status === 'COMPLETED')).toBe(true);
    expect(payouts.reduce((sum, p) => sum + Number(p.amount), 0)).toBe(2295 * 5);
    for (const p of payouts) expect(await ledgerKeys(p.id)).toHaveLength(2);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 0, paidAmountInCents: 2295 * 5 });
    await expectLedgerBalanced(t);
  });

  it('a refund racing a run: either the refund wins (no payout carries the sale) or it is refused', async () => {
    const s = await shop(t, admin, { config: {} });
    const sale = await paidSale(t, s, 1);
    await release(t);
    const [refund] = await Promise.all([post(`/api/v1/checkouts/${sale}/refund`, s.seller), runJob(t, s.territory.id)]);
    await syncJob(t);
    const payouts = await payoutsOf(t, s.seller.id);
    if (refund.statusCode === 200) {
      expect(payouts).toEqual([]);
      expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, paidAmountInCents: 0 });
    } else {
      expect(refund.statusCode).toBe(409);
      expect(payouts.map((p) => p.status)).toEqual(['COMPLETED']);
    }
    await expectLedgerBalanced(t);
  });
});

describe('frequency', () => {
  const at = (iso: string) => new Date(iso);

  it('isPayoutDue: Daily every day, Weekly on Mondays, Monthly on the 1st, Manual never', () => {
    const tuesday = at('2026-11-24T00:00:10Z');
    const monday = at('2026-11-23T00:00:10Z');
    const firstTuesday = at('2026-12-01T00:00:10Z');
    expect([tuesday, monday, firstTuesday].map((d) => isPayoutDue('Daily', d))).toEqual([true, true, true]);
    expect([tuesday, monday, firstTuesday].map((d) => isPayoutDue('Weekly', d))).toEqual([false, true, false]);
    expect([tuesday, monday, firstTuesday].map((d) => isPayoutDue('Monthly', d))).toEqual([false, false, true]);
    expect([tuesday, monday, firstTuesday].map((d) => isPayoutDue('Manual', d))).toEqual([false, false, false]);
  });

  it("a territory whose run fails does not stop the others': they are paid, the job fails once all were tried, and its retry pays the one that failed", async () => {
    const failing = await shop(t, admin, { config: { frequency: 'Daily', autoPayoutEnabled: true } });
    const healthy = await shop(t, admin, { config: { frequency: 'Daily', autoPayoutEnabled: true } });
    for (const s of [failing, healthy]) await paidSale(t, s, 1);
    await release(t);
    // A refusal of the database while claiming the first territory's payouts.
    await t.sql(`create function refuse_claim() returns trigger language plpgsql as $$
      begin
        if new.territory_id = '${failing.territory.id}' then raise exception 'claim refused on purpose'; end if;
        return new;
      end $$`);
    await t.sql('create trigger refuse_claim before insert on payout for each row execute function refuse_claim()');
    const day = at('2026-11-25T00:00:05Z');
    try {
      await expect(runJob(t, undefined, day)).rejects.toThrow(`territory ${failing.territory.id}: claim refused on purpose`);
    } finally {
      await t.sql('drop trigger refuse_claim on payout');
      await t.sql('drop function refuse_claim()');
    }
    await syncJob(t);
    expect(await payoutsOf(t, failing.seller.id)).toEqual([]);
    expect((await payoutsOf(t, healthy.seller.id)).map((p) => p.status)).toEqual(['COMPLETED']);
    // The retry: only what is still unclaimed.
    await runJob(t, undefined, day);
    await syncJob(t);
    expect((await payoutsOf(t, failing.seller.id)).map((p) => p.status)).toEqual(['COMPLETED']);
    expect((await payoutsOf(t, healthy.seller.id)).map((p) => p.status)).toEqual(['COMPLETED']);
    await expectLedgerBalanced(t);
  });

  it('the scheduled run pays the territories due that day with automatic payouts on, and never Manual ones', async () => {
    const weekly = await shop(t, admin, { config: { frequency: 'Weekly', autoPayoutEnabled: true } });
    const monthly = await shop(t, admin, { config: { frequency: 'Monthly', autoPayoutEnabled: true } });
    const manual = await shop(t, admin, { config: { frequency: 'Manual', autoPayoutEnabled: true } });
    const dailyOff = await shop(t, admin, { config: { frequency: 'Daily', autoPayoutEnabled: false } });
    const shops = [weekly, monthly, manual, dailyOff];
    for (const s of shops) await paidSale(t, s, 1);
    await release(t);
    const mine = (ids: string[]) => ids.filter((id) => shops.some((s) => s.territory.id === id));

    const tuesday = at('2026-11-24T00:00:05Z');
    expect(mine(await territoriesDueForPayout(t.deps.orm.em.fork(), tuesday))).toEqual([]);
    const monday = at('2026-11-23T00:00:05Z');
    expect(mine(await territoriesDueForPayout(t.deps.orm.em.fork(), monday))).toEqual([weekly.territory.id]);

    await runJob(t, undefined, monday);
    await syncJob(t);
    expect((await payoutsOf(t, weekly.seller.id)).map((p) => p.status)).toEqual(['COMPLETED']);
    for (const s of [monthly, manual, dailyOff]) expect(await payoutsOf(t, s.seller.id)).toEqual([]);

    await runJob(t, undefined, at('2026-12-01T00:00:05Z'));
    await syncJob(t);
    expect((await payoutsOf(t, monthly.seller.id)).map((p) => p.status)).toEqual(['COMPLETED']);
    for (const s of [manual, dailyOff]) expect(await payoutsOf(t, s.seller.id)).toEqual([]);
    // On demand, a Manual territory is paid.
    await runJob(t, manual.territory.id);
    await syncJob(t);
    expect((await payoutsOf(t, manual.seller.id)).map((p) => p.status)).toEqual(['COMPLETED']);
  });

  it('the jobs are registered: payouts-run daily at 00:00 UTC, payout-status-sync every minute', () => {
    expect(JOBS.find((j) => j.queue === 'payouts-run')?.schedule).toBe('0 0 * * *');
    expect(JOBS.find((j) => j.queue === 'payout-status-sync')?.schedule).toBe('* * * * *');
  });
});

describe('operations: refusals', () => {
  it('POST .../payouts/run: 401, 403 without the role (nothing written), 400 malformed id, 404 unknown or marketplace off', async () => {
    const s = await shop(t, admin, { config: {} });
    const audits = await countRows(t, 'audit_entry');
    expect((await post(runUrl(s.territory.id), null)).statusCode).toBe(401);
    const denied = await post(runUrl(s.territory.id), s.seller);
    expect(denied.statusCode).toBe(403);
    expect((await post('/api/v1/territories/not-a-uuid/payouts/run', admin)).statusCode).toBe(400);
    expect(await countRows(t, 'audit_entry')).toBe(audits);
    expect((await post(runUrl(UNKNOWN_ID), admin)).statusCode).toBe(404);
    const off = await post(runUrl((await newTerritory(t)).id), admin);
    expect(off.statusCode).toBe(404);
    expect(off.json().code).toBe('MARKETPLACE_DISABLED');
    expect(await countRows(t, 'payout', 'territory_id = $1', [s.territory.id])).toBe(0);
  });

  it('POST .../payouts/run: 409 PAYOUTS_DISABLED without a payout gateway, 409 JOBS_DISABLED without a job runner', async () => {
    const s = await shop(t, admin, { config: {} });
    const noPayouts = await createSecondInstance(t, { PAYOUTS__PROVIDER: 'none' });
    try {
      const res = await noPayouts.app.inject({ method: 'POST', url: runUrl(s.territory.id), headers: admin.headers });
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('PAYOUTS_DISABLED');
    } finally {
      await noPayouts.close();
    }
    const noJobs = await createSecondInstance(t);
    try {
      const res = await noJobs.app.inject({ method: 'POST', url: runUrl(s.territory.id), headers: admin.headers });
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('JOBS_DISABLED');
    } finally {
      await noJobs.close();
    }
  });

  it('GET .../payouts: 401, 403 without the role, 400 bad query, 404 unknown territory; paged', async () => {
    const s = await shop(t, admin, { config: { maximumPayoutAmountInCents: 2295 } });
    for (const quantity of [1, 1, 1]) await paidSale(t, s, quantity);
    await release(t);
    await runJob(t, s.territory.id);
    const url = `/api/v1/territories/${s.territory.id}/payouts`;
    expect((await get(t, url, null)).statusCode).toBe(401);
    expect((await get(t, url, s.seller)).statusCode).toBe(403);
    expect((await get(t, `${url}?pageSize=101`, admin)).statusCode).toBe(400);
    expect((await get(t, `${url}?status=PAID`, admin)).statusCode).toBe(400);
    expect((await get(t, `${url}?sellerUserId=nope`, admin)).statusCode).toBe(400);
    expect((await get(t, `/api/v1/territories/${UNKNOWN_ID}/payouts`, admin)).statusCode).toBe(404);
    const page = (await get(t, `${url}?pageSize=2&sellerUserId=${s.seller.id}`, financeManager)).json();
    expect(page).toMatchObject({ totalCount: 3, totalPages: 2, hasNextPage: true });
    expect(page.items).toHaveLength(2);
    expect((await get(t, `${url}?pageNumber=5`, admin)).json()).toMatchObject({ items: [], totalCount: 3 });
    await syncJob(t);
  });

  it('GET .../seller-balance/me/payouts: 401, 404 NO_SELLER_BALANCE before a sale, 400 bad paging, 404 unknown territory', async () => {
    const s = await shop(t, admin, { config: {} });
    const url = `/api/v1/territories/${s.territory.id}/seller-balance/me/payouts`;
    expect((await get(t, url, null)).statusCode).toBe(401);
    const none = await get(t, url, s.seller);
    expect(none.statusCode).toBe(404);
    expect(none.json().code).toBe('NO_SELLER_BALANCE');
    await paidSale(t, s, 1);
    expect((await get(t, url, s.seller)).json()).toMatchObject({ items: [], totalCount: 0 });
    expect((await get(t, `${url}?pageSize=0`, s.seller)).statusCode).toBe(400);
    expect((await get(t, `/api/v1/territories/${UNKNOWN_ID}/seller-balance/me/payouts`, s.seller)).statusCode).toBe(404);
    // Someone else's payouts are not mine.
    expect((await get(t, url, admin)).statusCode).toBe(404);
  });
});

describe('the GETs read on the pool', () => {
  it("the payout configuration, the seller's balance, transactions, payouts and wallet, the territory's payouts: no fork", async () => {
    const s = await shop(t, admin, { config: { maximumPayoutAmountInCents: 2295 } });
    for (const quantity of [1, 1, 1]) await paidSale(t, s, quantity);
    await release(t);
    await runJob(t, s.territory.id);
    await syncJob(t);
    await paidSale(t, s, 2);
    // Read through a second process without job workers: the jobs the sales started fork the first one's manager.
    const reader = await createSecondInstance(t);
    try {
      const { expectReadsWithoutFork } = countForks({ ...t, ...reader });
      const base = `/api/v1/territories/${s.territory.id}`;
      const balance = (await get(t, `${base}/seller-balance/me`, s.seller)).json() as { id: string };
      const ids = (b: unknown) => (b as { items: { id: string }[] }).items.map((p) => p.id);
      const payouts = (await payoutsOf(t, s.seller.id)).map((p) => p.id).reverse();
      expect(payouts).toHaveLength(3);
      await expectReadsWithoutFork(s.seller, [
        [`${base}/payout-config`, (b) => expect(b).toMatchObject({ territoryId: s.territory.id, maximumPayoutAmountInCents: 2295, frequency: 'Manual' })],
        [
          `${base}/seller-balance/me`,
          (b) =>
            expect(b).toEqual({
              id: balance.id,
              territoryId: s.territory.id,
              sellerUserId: s.seller.id,
              pendingAmountInCents: 4590,
              readyForPayoutAmountInCents: 0,
              inTransitAmountInCents: 0,
              paidAmountInCents: 3 * 2295,
              currency: 'BRL',
              currencies: ['BRL'],
              updatedAtUtc: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
            }),
        ],
        [
          `${base}/seller-balance/me/transactions`,
          (b) => expect((b as { status: string }[]).map((x) => x.status)).toEqual(['PENDING', 'PAID', 'PAID', 'PAID']),
        ],
        [`${base}/seller-balance/me/payouts`, (b) => expect(ids(b)).toEqual(payouts)],
        [
          `${base}/seller-balance/me/payouts?pageSize=2&pageNumber=2`,
          (b) => expect(b).toMatchObject({ totalCount: 3, totalPages: 2, items: [{ id: payouts[2] }] }),
        ],
        [`/api/v1/wallets/${balance.id}`, (b) => expect(b).toMatchObject({ id: balance.id, balance: 45.9, currency: 'BRL' })],
      ]);
      await expectReadsWithoutFork(admin, [
        [`${base}/payouts`, (b) => expect(ids(b)).toEqual(payouts)],
        [
          `${base}/payouts?status=COMPLETED&sellerUserId=${s.seller.id}&pageSize=1`,
          (b) => expect(b).toMatchObject({ totalCount: 3, items: [{ id: payouts[0] }] }),
        ],
        [`${base}/payouts?status=FAILED`, (b) => expect(b).toMatchObject({ totalCount: 0, items: [] })],
        [`${base}/payouts?pageNumber=5`, (b) => expect(b).toMatchObject({ totalCount: 3, items: [] })],
      ]);
    } finally {
      await reader.close();
    }
  });

  it('a sale whose whole amount went to fees: the first balance read creates the seller_pending account (a fork), the next ones only read', async () => {
    const s = await shop(t, admin, { feeBasisPoints: 10000 });
    await paidSale(t, s, 1);
    const accounts = () => countRows(t, 'ledger_account', `kind = 'seller_pending' and owner_user_id = $1`, [s.seller.id]);
    expect(await accounts()).toBe(0);
    const reader = await createSecondInstance(t);
    try {
      const { withForks, expectReadsWithoutFork } = countForks({ ...t, ...reader });
      const url = `/api/v1/territories/${s.territory.id}/seller-balance/me`;
      const first = await withForks(() => reader.app.inject({ method: 'GET', url, headers: s.seller.headers }));
      expect(first.value.statusCode).toBe(200);
      expect(first.value.json()).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 0, inTransitAmountInCents: 0, paidAmountInCents: 0 });
      expect(first.forks).toBe(1);
      expect(await accounts()).toBe(1);
      await expectReadsWithoutFork(s.seller, [[url, (b) => expect(b).toEqual(first.value.json())]]);
    } finally {
      await reader.close();
    }
  });
});

// Keeps the job context helper honest: the worker's context carries the configuration the handlers need.
it('job handlers refuse to run without the process configuration', async () => {
  const { payoutsRunJob } = await import('../../src/routers/payouts/payouts-run.job.js');
  const ctx = { ...jobContext(t), config: undefined };
  await expect(payoutsRunJob.handle(ctx, {})).rejects.toThrow('configuration');
});

it('the payout provider: fake outside production, none in production by default, fake refused in production', () => {
  expect(loadConfig({ NODE_ENV: 'development' }).payouts.provider).toBe('fake');
  expect(loadConfig({ ...PRODUCTION_ENV }).payouts.provider).toBe('none');
  expect(() => loadConfig({ ...PRODUCTION_ENV, PAYOUTS__PROVIDER: 'fake' })).toThrow(
    new ConfigError('PAYOUTS__PROVIDER must not be fake in production: the fake gateway reports transfers no one made'),
  );
  expect(() => loadConfig({ PAYOUTS__PROVIDER: 'wire' })).toThrow(/PAYOUTS__PROVIDER/);
});
