/**
 * Spec Payout rule 4 ("a payout over maximumPayoutAmountInCents is split"; configuration: "a larger payout is split
 * into several"): every payout is at most the maximum, so one sale larger than it is paid in several payouts, each
 * carrying a `payout_line` of part of it. Each part is its own gateway transfer (its id the idempotency key) and its
 * own ledger movements; the sale is PAID only when all its parts completed, and a failed part alone goes back to
 * ready and is paid again, never twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execSql } from '../../src/db/sql.js';
import { FakePayoutGateway, type PayoutGateway, type PayoutGatewayStatus } from '../../src/routers/payouts/payout-gateway.js';
import { syncPayoutStatuses } from '../../src/routers/payouts/payout-status-sync.js';
import { runPayouts } from '../../src/routers/payouts/payouts-run.js';
import { newAdmin, type TestUser } from '../factories/index.js';
import { expectLedgerBalanced, listItem } from '../marketplace/money-helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { balanceOf, get, paidSale, payoutsOf, release, runJob, type Shop, shop, syncJob } from './payout-helpers.js';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const em = () => t.deps.orm.em.fork();
const MAX = 50_000;
/** One sale of 1,000.00 without fee: 100,000 cents, twice the maximum. */
const bigShop = (config: Record<string, unknown> = {}) =>
  shop(t, admin, { price: '1000.00', feeBasisPoints: 0, config: { minimumPayoutAmountInCents: 100, maximumPayoutAmountInCents: MAX, ...config } });

/**
 * The fake gateway, counting transfers; the payouts in `failing` are reported FAILED, those in `completing` COMPLETED,
 * all others as `otherwise` (default COMPLETED).
 */
class ScriptedGateway implements PayoutGateway {
  readonly provider = 'fake' as const;
  readonly created: string[] = [];
  private readonly fake = new FakePayoutGateway();
  constructor(
    private readonly opts: { failing?: Set<string>; completing?: Set<string>; otherwise?: 'COMPLETED' | 'PROCESSING'; crashAfterCreate?: boolean } = {},
  ) {}
  async createPayout(request: Parameters<PayoutGateway['createPayout']>[0]) {
    const answer = await this.fake.createPayout(request);
    this.created.push(request.payoutId);
    if (this.opts.crashAfterCreate) throw new Error('worker killed after the gateway call');
    return answer;
  }
  async getPayoutStatus(request: { payoutId: string; reference: string }): Promise<PayoutGatewayStatus> {
    if (this.opts.failing?.has(request.payoutId)) return { status: 'FAILED', reason: 'scripted failure' };
    if (this.opts.completing?.has(request.payoutId)) return { status: 'COMPLETED' };
    return { status: this.opts.otherwise ?? 'COMPLETED' };
  }
}

const saleOf = async (checkoutId: string) =>
  (
    await t.sql<{ id: string; status: string; payout_id: string | null }>('select id, status, payout_id from seller_transaction where checkout_id = $1', [
      checkoutId,
    ])
  )[0]!;
const linesOf = (sellerTransactionId: string) =>
  t.sql<{ payout_id: string; amount: string; status: string }>(
    `select l.payout_id, l.amount_in_cents::text as amount, p.status from payout_line l join payout p on p.id = l.payout_id
      where l.seller_transaction_id = $1 order by p.created_at_utc, p.id`,
    [sellerTransactionId],
  );
const ledgerKeys = (payoutId: string) =>
  t.sql<{ idempotency_key: string }>('select idempotency_key from ledger_transaction where idempotency_key like $1 order by idempotency_key', [
    `payout:${payoutId}:%`,
  ]);
const refund = (s: Shop, checkoutId: string) => t.app.inject({ method: 'POST', url: `/api/v1/checkouts/${checkoutId}/refund`, headers: s.seller.headers });

describe('a sale larger than the maximum', () => {
  it('is paid in payouts of at most the maximum: two of 50,000 for 100,000, each its own transfer and ledger movements', async () => {
    const s = await bigShop();
    const checkoutId = await paidSale(t, s, 1);
    await release(t);
    expect(await balanceOf(t, s)).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 100_000 });
    await runJob(t, s.territory.id);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 100_000, paidAmountInCents: 0 });
    await syncJob(t);

    const sale = await saleOf(checkoutId);
    const payouts = await payoutsOf(t, s.seller.id);
    expect(payouts.map((p) => [p.amount, p.status, p.transaction_ids])).toEqual([
      ['50000', 'COMPLETED', [sale.id]],
      ['50000', 'COMPLETED', [sale.id]],
    ]);
    expect((await linesOf(sale.id)).map((l) => [l.amount, l.status])).toEqual([
      ['50000', 'COMPLETED'],
      ['50000', 'COMPLETED'],
    ]);
    expect(sale.status).toBe('PAID');
    expect(payouts.map((p) => p.id)).toContain(sale.payout_id);
    for (const p of payouts) expect((await ledgerKeys(p.id)).map((k) => k.idempotency_key)).toEqual([`payout:${p.id}:paid`, `payout:${p.id}:sent`]);
    expect(await t.sql('select gateway_reference from payout where seller_user_id = $1 order by gateway_reference', [s.seller.id])).toEqual(
      payouts.map((p) => ({ gateway_reference: `fake_po_${p.id}` })).sort((a, b) => a.gateway_reference.localeCompare(b.gateway_reference)),
    );
    expect(await balanceOf(t, s)).toMatchObject({
      pendingAmountInCents: 0,
      readyForPayoutAmountInCents: 0,
      inTransitAmountInCents: 0,
      paidAmountInCents: 100_000,
    });

    // What the seller and the platform read.
    const mine = (await get(t, `/api/v1/territories/${s.territory.id}/seller-balance/me/payouts`, s.seller)).json();
    expect(mine.items.map((p: { amountInCents: number; status: string }) => [p.amountInCents, p.status])).toEqual([
      [50_000, 'COMPLETED'],
      [50_000, 'COMPLETED'],
    ]);
    // Each names the sale and the part of it it carried.
    for (const p of mine.items) {
      expect(p).toMatchObject({ transactionIds: [sale.id], lines: [{ transactionId: sale.id, amountInCents: 50_000 }] });
    }
    const balance = (await get(t, `/api/v1/territories/${s.territory.id}/platform-financial/balance`, admin)).json();
    expect(balance).toMatchObject({ totalRevenueInCents: 0, totalExpensesInCents: 100_000 });

    // Paid out: no refund.
    const refused = await refund(s, checkoutId);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('CHECKOUT_NOT_REFUNDABLE');
    await expectLedgerBalanced(t);
  });

  it('an odd amount: 125,001 -> 50,000 + 50,000 + 25,001; smaller sales that fit are not split and fill the room', async () => {
    const s = await shop(t, admin, { price: '1250.01', feeBasisPoints: 0, config: { maximumPayoutAmountInCents: MAX } });
    const small = await listSmallItem(s, '200.00');
    await paidSale(t, s, 1);
    await paidSale(t, { ...s, itemId: small }, 1);
    await release(t);
    await runJob(t, s.territory.id);
    await syncJob(t);
    const payouts = await payoutsOf(t, s.seller.id);
    expect(payouts.map((p) => Number(p.amount)).sort((a, b) => a - b)).toEqual([45_001, 50_000, 50_000]);
    expect(payouts.every((p) => p.status === 'COMPLETED' && Number(p.amount) <= MAX)).toBe(true);
    const lines = await t.sql<{ net: string; amount: string }>(
      `select st.net_amount_in_cents::text as net, l.amount_in_cents::text as amount from payout_line l join seller_transaction st on st.id = l.seller_transaction_id
        where st.seller_user_id = $1 order by st.net_amount_in_cents, l.amount_in_cents`,
      [s.seller.id],
    );
    expect(lines).toEqual([
      { net: '20000', amount: '20000' },
      { net: '125001', amount: '25001' },
      { net: '125001', amount: '50000' },
      { net: '125001', amount: '50000' },
    ]);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 0, paidAmountInCents: 145_001 });
    await expectLedgerBalanced(t);
  });

  it('while its parts are in transit the balance shows them there and a refund is refused; then each part settles', async () => {
    const s = await bigShop();
    const checkoutId = await paidSale(t, s, 1);
    await release(t);
    const slow = new ScriptedGateway({ otherwise: 'PROCESSING' });
    await runPayouts(em(), slow, new Date(), s.territory.id);
    await syncPayoutStatuses(em(), slow, new Date(), s.territory.id);
    expect((await payoutsOf(t, s.seller.id)).map((p) => [p.amount, p.status])).toEqual([
      ['50000', 'PROCESSING'],
      ['50000', 'PROCESSING'],
    ]);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 100_000, paidAmountInCents: 0 });
    expect((await refund(s, checkoutId)).statusCode).toBe(409);

    // One part completes first: the sale is not PAID yet, half is paid, half still in transit.
    const [first, second] = await payoutsOf(t, s.seller.id);
    await syncPayoutStatuses(em(), new ScriptedGateway({ completing: new Set([first!.id]), otherwise: 'PROCESSING' }), new Date(), s.territory.id);
    expect((await payoutsOf(t, s.seller.id)).map((p) => p.status)).toEqual(['COMPLETED', 'PROCESSING']);
    expect((await saleOf(checkoutId)).status).toBe('READY');
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 50_000, paidAmountInCents: 50_000 });
    expect((await refund(s, checkoutId)).statusCode).toBe(409);
    expect((await runPayouts(em(), new ScriptedGateway(), new Date(), s.territory.id)).created).toBe(0);

    // The other completes: PAID.
    await syncPayoutStatuses(em(), new ScriptedGateway(), new Date(), s.territory.id);
    expect((await payoutsOf(t, s.seller.id)).map((p) => p.status)).toEqual(['COMPLETED', 'COMPLETED']);
    const sale = await saleOf(checkoutId);
    expect(sale.status).toBe('PAID');
    expect([first!.id, second!.id]).toContain(sale.payout_id);
    expect(await balanceOf(t, s)).toMatchObject({ inTransitAmountInCents: 0, paidAmountInCents: 100_000 });
    await expectLedgerBalanced(t);
  });

  it('one part completes, the other fails: the sale stays READY with the failed half ready again, the next run pays only that half', async () => {
    const s = await bigShop();
    const checkoutId = await paidSale(t, s, 1);
    await release(t);
    await runPayouts(em(), new ScriptedGateway({ otherwise: 'PROCESSING' }), new Date(), s.territory.id);
    const [kept, lost] = await payoutsOf(t, s.seller.id);
    const sync = await syncPayoutStatuses(em(), new ScriptedGateway({ failing: new Set([lost!.id]) }), new Date(), s.territory.id);
    expect(sync).toMatchObject({ completed: 1, failed: 1 });

    const sale = await saleOf(checkoutId);
    expect(sale).toMatchObject({ status: 'READY', payout_id: kept!.id });
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 50_000, inTransitAmountInCents: 0, paidAmountInCents: 50_000 });
    expect((await ledgerKeys(lost!.id)).map((k) => k.idempotency_key)).toEqual([`payout:${lost!.id}:failed`, `payout:${lost!.id}:sent`]);
    // Half of it is paid: no refund.
    expect((await refund(s, checkoutId)).statusCode).toBe(409);

    // Runs at once, then again: exactly one new payout, of the unpaid half.
    const healthy = new ScriptedGateway();
    const runs = await Promise.all([
      runPayouts(em(), healthy, new Date(), s.territory.id),
      runPayouts(em(), healthy, new Date(), s.territory.id),
      runPayouts(em(), healthy, new Date(), null),
    ]);
    expect(runs.reduce((n, r) => n + r.created, 0)).toBe(1);
    expect((await runPayouts(em(), healthy, new Date(), s.territory.id)).created).toBe(0);
    await Promise.all([syncPayoutStatuses(em(), healthy, new Date()), syncPayoutStatuses(em(), healthy, new Date())]);
    const payouts = await payoutsOf(t, s.seller.id);
    expect(payouts.map((p) => [p.amount, p.status])).toEqual([
      ['50000', 'COMPLETED'],
      ['50000', 'FAILED'],
      ['50000', 'COMPLETED'],
    ]);
    expect(new Set(healthy.created).size).toBe(1);
    expect(await saleOf(checkoutId)).toMatchObject({ status: 'PAID', payout_id: payouts[2]!.id });
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 0, paidAmountInCents: 100_000 });
    await expectLedgerBalanced(t);
  });

  it('both parts fail: the sale is in no live payout (refundable again), its whole amount ready', async () => {
    const s = await bigShop();
    const checkoutId = await paidSale(t, s, 1);
    await release(t);
    await runPayouts(em(), new ScriptedGateway({ otherwise: 'PROCESSING' }), new Date(), s.territory.id);
    const ids = new Set((await payoutsOf(t, s.seller.id)).map((p) => p.id));
    await syncPayoutStatuses(em(), new ScriptedGateway({ failing: ids }), new Date(), s.territory.id);
    expect(await saleOf(checkoutId)).toMatchObject({ status: 'READY', payout_id: null });
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 100_000, inTransitAmountInCents: 0, paidAmountInCents: 0 });
    const refunded = await refund(s, checkoutId);
    expect(refunded.statusCode).toBe(200);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, paidAmountInCents: 0 });
    expect((await runPayouts(em(), new ScriptedGateway(), new Date(), s.territory.id)).created).toBe(0);
    await expectLedgerBalanced(t);
  });
});

describe('idempotency and concurrency of split payouts', () => {
  it('runs at once and again, syncs at once: every part transferred once, the sale paid once', async () => {
    const s = await bigShop();
    const checkoutIds = [await paidSale(t, s, 1), await paidSale(t, s, 1)];
    await release(t);
    const gateway = new ScriptedGateway();
    await Promise.all([
      runPayouts(em(), gateway, new Date(), s.territory.id),
      runPayouts(em(), gateway, new Date(), s.territory.id),
      runJob(t, s.territory.id),
    ]);
    await runJob(t, s.territory.id);
    await Promise.all([syncJob(t), syncJob(t), syncPayoutStatuses(em(), gateway, new Date())]);
    await syncJob(t);
    const payouts = await payoutsOf(t, s.seller.id);
    expect(payouts.map((p) => [p.amount, p.status])).toEqual(Array.from({ length: 4 }, () => ['50000', 'COMPLETED']));
    for (const checkoutId of checkoutIds) {
      const sale = await saleOf(checkoutId);
      expect(sale.status).toBe('PAID');
      expect((await linesOf(sale.id)).reduce((sum, l) => sum + Number(l.amount), 0)).toBe(100_000);
    }
    for (const p of payouts) expect(await ledgerKeys(p.id)).toHaveLength(2);
    expect(await balanceOf(t, s)).toMatchObject({ readyForPayoutAmountInCents: 0, inTransitAmountInCents: 0, paidAmountInCents: 200_000 });
    await expectLedgerBalanced(t);
  });

  it('a crash after the gateway accepted the parts, then a re-run: the same payout ids are asked again, nothing new is claimed', async () => {
    const s = await bigShop();
    await paidSale(t, s, 1);
    await release(t);
    const crashing = new ScriptedGateway({ crashAfterCreate: true });
    await runPayouts(em(), crashing, new Date(), s.territory.id);
    const claimed = (await payoutsOf(t, s.seller.id)).map((p) => p.id);
    expect(claimed).toHaveLength(2);
    expect([...crashing.created].sort()).toEqual([...claimed].sort());
    const healthy = new ScriptedGateway();
    expect((await runPayouts(em(), healthy, new Date(), s.territory.id)).created).toBe(0);
    await syncPayoutStatuses(em(), healthy, new Date(), s.territory.id);
    expect([...healthy.created].sort()).toEqual([...claimed].sort());
    expect((await payoutsOf(t, s.seller.id)).map((p) => [p.id, p.status])).toEqual(claimed.map((id) => [id, 'COMPLETED']));
    expect(await balanceOf(t, s)).toMatchObject({ inTransitAmountInCents: 0, paidAmountInCents: 100_000 });
    await expectLedgerBalanced(t);
  });
});

describe('the database holds the payout rules', () => {
  it('refuses a line that would pay a sale twice, lines not adding up to the payout, an edited line, and a payout moved back or changed', async () => {
    const s = await bigShop();
    const checkoutId = await paidSale(t, s, 1);
    await release(t);
    await runPayouts(em(), new ScriptedGateway({ otherwise: 'PROCESSING' }), new Date(), s.territory.id);
    const sale = await saleOf(checkoutId);
    const [payout] = await payoutsOf(t, s.seller.id);

    const inOneTransaction = (statements: Array<[string, unknown[]]>) =>
      em().transactional(async (tx) => {
        for (const [sql, params] of statements) await execSql(tx, sql, params);
      });
    const newPayout = (id: string, amount: number): [string, unknown[]] => [
      `insert into payout (id, created_at_utc, territory_id, seller_user_id, amount_in_cents, currency, status, transaction_ids, updated_at_utc)
       values (?, now(), ?, ?, ?, 'BRL', 'PENDING', array[?::text], now())`,
      [id, s.territory.id, s.seller.id, amount, sale.id],
    ];
    const newLine = (payoutId: string, amount: number): [string, unknown[]] => [
      `insert into payout_line (id, created_at_utc, payout_id, seller_transaction_id, amount_in_cents) values (gen_random_uuid(), now(), ?, ?, ?)`,
      [payoutId, sale.id, amount],
    ];
    // The sale's 100,000 are all in live payouts: one more cent is refused at commit.
    await expect(inOneTransaction([newPayout('01900000-0000-7000-8000-000000000001', 1), newLine('01900000-0000-7000-8000-000000000001', 1)])).rejects.toThrow(
      /more than its net/,
    );
    // The same sale twice in one payout.
    await expect(inOneTransaction([newLine(payout!.id, 0)])).rejects.toThrow(/payout_line_payout_transaction_unique/);
    // A payout whose lines do not add up to its amount.
    await expect(inOneTransaction([newPayout('01900000-0000-7000-8000-000000000003', 7), newLine('01900000-0000-7000-8000-000000000003', 0)])).rejects.toThrow(
      /not its amount/,
    );
    await expect(t.sql('update payout_line set amount_in_cents = amount_in_cents + 1 where payout_id = $1', [payout!.id])).rejects.toThrow(/never changed/);
    await expect(t.sql(`update payout set amount_in_cents = amount_in_cents - 1 where id = $1`, [payout!.id])).rejects.toThrow(/never changed/);
    await expect(t.sql(`update payout set status = 'PENDING', gateway_reference = null where id = $1`, [payout!.id])).rejects.toThrow(
      /cannot move from PROCESSING to PENDING/,
    );
    expect(await t.sql('select count(*)::int as n from payout where seller_user_id = $1', [s.seller.id])).toEqual([{ n: 2 }]);
    await syncJob(t);
    expect(await t.sql(`select status from payout where id = $1`, [payout!.id])).toEqual([{ status: 'COMPLETED' }]);
    await expect(t.sql(`update payout set status = 'FAILED', failed_at_utc = now(), completed_at_utc = null where id = $1`, [payout!.id])).rejects.toThrow(
      /cannot move from COMPLETED to FAILED/,
    );
    await expectLedgerBalanced(t);
  });

  it("sums a payout's lines once, by its last line: a line added in a later transaction, or after an immediate check, is still refused; its transactions are its lines'; a payout's line writers take turns", async () => {
    const s = await bigShop();
    await paidSale(t, s, 1);
    await release(t);
    await runPayouts(em(), new ScriptedGateway({ otherwise: 'PROCESSING' }), new Date(), s.territory.id);
    const [first] = await payoutsOf(t, s.seller.id);
    // Two more sales, READY and in no payout.
    const b = await saleOf(await paidSale(t, s, 1));
    const c = await saleOf(await paidSale(t, s, 1));
    await release(t);
    expect((await t.sql<{ status: string }>('select status from seller_transaction where id = any($1)', [[b.id, c.id]])).map((r) => r.status)).toEqual([
      'READY',
      'READY',
    ]);
    const line = (payoutId: string, transactionId: string, amount: number): [string, unknown[]] => [
      `insert into payout_line (id, created_at_utc, payout_id, seller_transaction_id, amount_in_cents) values (gen_random_uuid(), now(), ?, ?, ?)`,
      [payoutId, transactionId, amount],
    ];
    const inOneTransaction = (statements: Array<[string, unknown[]]>) =>
      em().transactional(async (tx) => {
        for (const [sql, params] of statements) await execSql(tx, sql, params);
      });

    // The payout's lines added up when it committed; one more cent a transaction later is its new last line, which sums them.
    await expect(inOneTransaction([line(first!.id, b.id, 1)])).rejects.toThrow(/carries 50001 cents in its lines, not its amount of 50000/);
    // Checked early (set constraints ... immediate), then a line more: that line is the last one at commit.
    const early = '01900000-0000-7000-8000-000000000009';
    await expect(
      inOneTransaction([
        [
          `insert into payout (id, created_at_utc, territory_id, seller_user_id, amount_in_cents, currency, status, transaction_ids, updated_at_utc)
           values (?, now(), ?, ?, 1, 'BRL', 'PENDING', array[?::text], now())`,
          [early, s.territory.id, s.seller.id, b.id],
        ],
        line(early, b.id, 1),
        ['set constraints payout_line_check immediate', []],
        line(early, c.id, 1),
      ]),
    ).rejects.toThrow(/carries 2 cents in its lines, not its amount of 1/);
    // Its list of transactions is its lines' transactions, and stays so.
    const listed = '01900000-0000-7000-8000-000000000010';
    await expect(
      inOneTransaction([
        [
          `insert into payout (id, created_at_utc, territory_id, seller_user_id, amount_in_cents, currency, status, transaction_ids, updated_at_utc)
           values (?, now(), ?, ?, 1, 'BRL', 'PENDING', array[?::text, ?::text], now())`,
          [listed, s.territory.id, s.seller.id, b.id, c.id],
        ],
        line(listed, b.id, 1),
      ]),
    ).rejects.toThrow(/its transaction_ids are not the transactions of its lines/);
    await expect(t.sql(`update payout set transaction_ids = array[$2::text] where id = $1`, [first!.id, b.id])).rejects.toThrow(/never changed/);
    // A writer of a payout's lines holds the payout's row lock to its commit, so lines are numbered in commit order.
    const sentinel = new Error('rolled back on purpose');
    await expect(
      em().transactional(async (tx) => {
        await execSql(tx, ...line(first!.id, b.id, 0));
        await expect(t.sql('select 1 from payout where id = $1 for no key update nowait', [first!.id])).rejects.toThrow(/could not obtain lock/);
        throw sentinel;
      }),
    ).rejects.toBe(sentinel);
    const lines = await t.sql<{ payout_id: string; seq: string }>('select payout_id, seq::text from payout_line where seller_transaction_id = any($1)', [
      [b.id, c.id],
    ]);
    expect(lines).toEqual([]);
    expect(await t.sql('select count(*)::int as n from payout where id = any($1)', [[early, listed]])).toEqual([{ n: 0 }]);
    await expectLedgerBalanced(t);
  });
});

/** A second item of the shop at `price` (BRL, no fee); its id. */
const listSmallItem = (s: Shop, price: string) => listItem(t, s.seller, s.storeId, { priceAmount: price, title: 'Small thing' });
