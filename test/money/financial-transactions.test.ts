/**
 * The spec's FinancialTransaction ("every amount is traced"): PostgreSQL writes one per checkout, payment, seller's
 * net, platform fee, payout and refund, in the transaction that creates or moves the record, and finance roles read
 * them at `GET /api/v1/territories/{territoryId}/platform-financial/transactions[/{id}]`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACE_EXISTING_RECORDS } from '../../src/db/migrations/Migration20261128190000.js';
import { financialTransactionsPageQuery } from '../../src/routers/finance/finance.service.js';
import { newAdmin, newResident, newTerritory, newUser, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { planOf } from '../factories/query-plan.js';
import { addToCart, checkout, expectLedgerBalanced, sendWebhook } from '../marketplace/money-helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { get, paidSale, payoutsOf, release, runJob, type Shop, shop, syncJob } from './payout-helpers.js';

let t: TestApp;
let admin: TestUser;
let financeManager: TestUser;
let s: Shop;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  admin = await newAdmin(t);
  financeManager = await newUser(t, { permissions: ['FINANCIAL_MANAGER'] });
  s = await shop(t, admin, { price: '25.50', feeBasisPoints: 1000, config: {} });
});
afterAll(() => t.close());

interface Traced {
  id: string;
  type: string;
  status: string;
  amountInCents: number;
  currency: string;
  relatedEntityType: string;
  relatedEntityId: string;
}

const url = (territoryId = s.territory.id) => `/api/v1/territories/${territoryId}/platform-financial/transactions`;

/** The territory's financial transactions of the records named, as the API lists them: `type:status:amount`. */
async function traceOf(...relatedIds: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const id of relatedIds) {
    const res = await get(t, `${url()}?relatedEntityId=${id}`, admin);
    expect(res.statusCode).toBe(200);
    found.push(...res.json().items.map((f: Traced) => `${f.type}:${f.status}:${f.amountInCents}`));
  }
  return found.sort();
}

const historyOf = async (relatedId: string, type: string) => {
  const list = (await get(t, `${url()}?relatedEntityId=${relatedId}&type=${type}`, admin)).json();
  const detail = await get(t, `${url()}/${list.items[0].id}`, admin);
  expect(detail.statusCode).toBe(200);
  return (detail.json().statusHistory as Array<{ status: string; entityStatus: string }>).map((h) => `${h.status}/${h.entityStatus}`);
};

/** A checkout of `quantity` items (25.50 each) by a new buyer, not paid: its id and its payment's. */
async function unpaid(quantity = 2) {
  const buyer = await newUser(t);
  expect((await addToCart(t, buyer, { itemId: s.itemId, quantity })).statusCode).toBe(201);
  const c = (await checkout(t, buyer, { territoryId: s.territory.id })).json().checkouts[0];
  return { buyer, checkoutId: c.id as string, paymentId: c.payment.id as string, total: c.payment.amountInCents as number };
}

const paymentEvent = (c: { checkoutId: string; paymentId: string; total: number }, type: string, n = 1) => ({
  id: `evt_${type}_${n}_${c.checkoutId}`,
  type,
  data: { paymentId: c.paymentId, checkoutId: c.checkoutId, amountInCents: c.total, currency: 'BRL' },
});

const saleOf = async (checkoutId: string) => (await t.sql<{ id: string }>('select id from seller_transaction where checkout_id = $1', [checkoutId]))[0]!.id;

/** Every checkout, payment, seller transaction and payout has its financial transactions, with the status its own maps to. */
async function expectEveryAmountTraced() {
  const untraced = await t.sql<{ what: string; id: string }>(`
    select 'checkout' as what, c.id from checkout c
     where not exists (select 1 from financial_transaction f where f.related_entity_id = c.id and f.type = 'CHECKOUT' and f.amount_in_cents = c.total_in_cents
                         and f.status = case c.status when 'AWAITING_PAYMENT' then 'PENDING' when 'PAYMENT_FAILED' then 'FAILED' when 'CANCELED' then 'CANCELED' else 'COMPLETED' end)
    union all
    select 'payment', p.id from payment p
     where not exists (select 1 from financial_transaction f where f.related_entity_id = p.id and f.type = 'PAYMENT' and f.amount_in_cents = p.amount_in_cents
                         and f.status = case p.status when 'PENDING' then 'PROCESSING' when 'FAILED' then 'FAILED' else 'COMPLETED' end)
        or (p.status = 'REFUNDED') <> exists (select 1 from financial_transaction f where f.related_entity_id = p.id and f.type = 'REFUND')
    union all
    select 'seller transaction', x.id from seller_transaction x
     where not exists (select 1 from financial_transaction f where f.related_entity_id = x.id and f.type = 'SELLER' and f.amount_in_cents = x.net_amount_in_cents
                         and f.status = case x.status when 'PENDING' then 'PENDING' when 'READY' then 'PROCESSING' when 'PAID' then 'COMPLETED' else 'CANCELED' end)
        or (x.platform_fee_in_cents > 0) <> exists (select 1 from financial_transaction f where f.related_entity_id = x.id and f.type = 'PLATFORM_FEE'
                                                      and f.amount_in_cents = x.platform_fee_in_cents)
    union all
    select 'payout', p.id from payout p
     where not exists (select 1 from financial_transaction f where f.related_entity_id = p.id and f.type = 'PAYOUT' and f.amount_in_cents = p.amount_in_cents and f.status = p.status)`);
  expect(untraced).toEqual([]);
}

describe('every amount is traced, as its record moves', () => {
  it('a sale from checkout to payout: CHECKOUT, PAYMENT, SELLER, PLATFORM_FEE and PAYOUT, each with its status history', async () => {
    const c = await unpaid();
    expect(await traceOf(c.checkoutId, c.paymentId)).toEqual(['CHECKOUT:PENDING:5100', 'PAYMENT:PROCESSING:5100']);

    expect((await sendWebhook(t, paymentEvent(c, 'payment.succeeded'))).json().outcome).toBe('PAID');
    const sale = await saleOf(c.checkoutId);
    expect(await traceOf(c.checkoutId, c.paymentId, sale)).toEqual([
      'CHECKOUT:COMPLETED:5100',
      'PAYMENT:COMPLETED:5100',
      'PLATFORM_FEE:COMPLETED:510',
      'SELLER:PENDING:4590',
    ]);

    await release(t);
    expect(await traceOf(sale)).toEqual(['PLATFORM_FEE:COMPLETED:510', 'SELLER:PROCESSING:4590']);
    await runJob(t, s.territory.id);
    const [payout] = await payoutsOf(t, s.seller.id);
    expect(await traceOf(payout!.id)).toEqual(['PAYOUT:PROCESSING:4590']);
    await syncJob(t);
    expect(await traceOf(sale, payout!.id)).toEqual(['PAYOUT:COMPLETED:4590', 'PLATFORM_FEE:COMPLETED:510', 'SELLER:COMPLETED:4590']);

    expect(await historyOf(c.checkoutId, 'CHECKOUT')).toEqual(['PENDING/AWAITING_PAYMENT', 'COMPLETED/PAID']);
    expect(await historyOf(c.paymentId, 'PAYMENT')).toEqual(['PROCESSING/PENDING', 'COMPLETED/SUCCEEDED']);
    expect(await historyOf(sale, 'SELLER')).toEqual(['PENDING/PENDING', 'PROCESSING/READY', 'COMPLETED/PAID']);
    expect(await historyOf(sale, 'PLATFORM_FEE')).toEqual(['COMPLETED/PENDING']);
    expect(await historyOf(payout!.id, 'PAYOUT')).toEqual(['PENDING/PENDING', 'PROCESSING/PROCESSING', 'COMPLETED/COMPLETED']);

    // The trace agrees with the ledger's projections: fees collected and payouts processed.
    const balance = (await get(t, `/api/v1/territories/${s.territory.id}/platform-financial/balance`, admin)).json();
    const [sums] = await t.sql<{ fees: string; payouts: string }>(
      `select coalesce(sum(amount_in_cents) filter (where type = 'PLATFORM_FEE' and status = 'COMPLETED'), 0)::text as fees,
              coalesce(sum(amount_in_cents) filter (where type = 'PAYOUT' and status = 'COMPLETED'), 0)::text as payouts
         from financial_transaction where territory_id = $1`,
      [s.territory.id],
    );
    expect(balance).toMatchObject({ totalRevenueInCents: Number(sums!.fees), totalExpensesInCents: Number(sums!.payouts) });
    await expectLedgerBalanced(t);
    await expectEveryAmountTraced();
  });

  it('a refund: REFUND of the payment, the seller net and the fee CANCELED, the checkout stays COMPLETED', async () => {
    const c = await unpaid();
    await sendWebhook(t, paymentEvent(c, 'payment.succeeded'));
    const sale = await saleOf(c.checkoutId);
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/checkouts/${c.checkoutId}/refund`, headers: s.seller.headers });
    expect(res.statusCode).toBe(200);
    expect(await traceOf(c.checkoutId, c.paymentId, sale)).toEqual([
      'CHECKOUT:COMPLETED:5100',
      'PAYMENT:COMPLETED:5100',
      'PLATFORM_FEE:CANCELED:510',
      'REFUND:COMPLETED:5100',
      'SELLER:CANCELED:4590',
    ]);
    expect(await historyOf(c.checkoutId, 'CHECKOUT')).toEqual(['PENDING/AWAITING_PAYMENT', 'COMPLETED/PAID']);
    expect(await historyOf(sale, 'SELLER')).toEqual(['PENDING/PENDING', 'CANCELED/CANCELED']);
    await expectEveryAmountTraced();
  });

  it('a failed payment, a canceled checkout paid late (refunded at once) and a declined card', async () => {
    const failed = await unpaid(1);
    expect((await sendWebhook(t, paymentEvent(failed, 'payment.failed'))).json().outcome).toBe('FAILED');
    expect(await traceOf(failed.checkoutId, failed.paymentId)).toEqual(['CHECKOUT:FAILED:2550', 'PAYMENT:FAILED:2550']);

    const late = await unpaid(1);
    const cancel = await t.app.inject({ method: 'POST', url: `/api/v1/checkouts/${late.checkoutId}/cancel`, headers: late.buyer.headers });
    expect(cancel.statusCode).toBe(200);
    expect((await sendWebhook(t, paymentEvent(late, 'payment.succeeded'))).json().outcome).toBe('LATE_SUCCESS_REFUNDED');
    expect(await traceOf(late.checkoutId, late.paymentId)).toEqual(['CHECKOUT:CANCELED:2550', 'PAYMENT:COMPLETED:2550', 'REFUND:COMPLETED:2550']);
    expect(await historyOf(late.paymentId, 'PAYMENT')).toEqual(['PROCESSING/PENDING', 'COMPLETED/REFUNDED']);

    const buyer = await newUser(t);
    await addToCart(t, buyer, { itemId: s.itemId, quantity: 1 });
    const declined = await checkout(t, buyer, { territoryId: s.territory.id, paymentMethod: 'CARD', paymentToken: 'tok_fake_declined' });
    expect(declined.statusCode).toBe(402);
    const [row] = await t.sql<{ id: string }>('select id from checkout where buyer_user_id = $1', [buyer.id]);
    expect(await traceOf(row!.id)).toEqual(['CHECKOUT:FAILED:2550']);
    await expectEveryAmountTraced();
  });

  it('a payout the gateway refuses is FAILED; the seller net stays PROCESSING for the next run', async () => {
    // 6.66 BRL without fee: the fake gateway declines amounts ending in 666 cents.
    const failing = await shop(t, admin, { price: '6.66', feeBasisPoints: 0, config: {} });
    const checkoutId = await paidSale(t, failing, 1);
    await release(t);
    await runJob(t, failing.territory.id);
    await syncJob(t);
    const [payout] = await payoutsOf(t, failing.seller.id);
    const sale = await saleOf(checkoutId);
    const listed = await get(t, `${url(failing.territory.id)}?type=payout&status=failed`, financeManager);
    expect(listed.statusCode).toBe(200);
    expect(listed.json().items).toEqual([
      expect.objectContaining({
        type: 'PAYOUT',
        status: 'FAILED',
        amountInCents: 666,
        currency: 'BRL',
        relatedEntityType: 'PAYOUT',
        relatedEntityId: payout!.id,
      }),
    ]);
    const seller = await get(t, `${url(failing.territory.id)}?relatedEntityId=${sale}`, financeManager);
    // No fee: no PLATFORM_FEE transaction.
    expect(seller.json().items.map((f: Traced) => `${f.type}:${f.status}`)).toEqual(['SELLER:PROCESSING']);
    await expectEveryAmountTraced();
  });
});

describe('GET .../platform-financial/transactions[/{id}]', () => {
  it('newest first, paged with totalCount, filtered by type, status (any case), currency and period', async () => {
    const all = (await get(t, `${url()}?pageSize=100`, admin)).json();
    expect(all.totalCount).toBe(all.items.length);
    const times = all.items.map((f: { createdAtUtc: string }) => f.createdAtUtc);
    expect([...times].sort().reverse()).toEqual(times);
    expect(all.items[0]).toEqual({
      id: expect.any(String),
      territoryId: s.territory.id,
      type: expect.any(String),
      status: expect.any(String),
      amountInCents: expect.any(Number),
      currency: 'BRL',
      relatedEntityType: expect.any(String),
      relatedEntityId: expect.any(String),
      createdAtUtc: expect.any(String),
      updatedAtUtc: expect.any(String),
    });

    const page = (await get(t, `${url()}?pageSize=2&pageNumber=2`, admin)).json();
    expect(page).toMatchObject({ pageNumber: 2, pageSize: 2, totalCount: all.totalCount });
    expect(page.items).toEqual(all.items.slice(2, 4));
    const beyond = (await get(t, `${url()}?pageSize=2&pageNumber=999`, admin)).json();
    expect(beyond).toMatchObject({ items: [], totalCount: all.totalCount });

    const refunds = (await get(t, `${url()}?type=refund&status=Completed`, admin)).json();
    expect(refunds.items.length).toBe(2);
    expect(refunds.items.every((f: Traced) => f.type === 'REFUND' && f.status === 'COMPLETED')).toBe(true);
    expect((await get(t, `${url()}?currency=USD`, admin)).json()).toMatchObject({ items: [], totalCount: 0 });
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await get(t, `${url()}?fromUtc=${future}`, admin)).json().totalCount).toBe(0);
    expect((await get(t, `${url()}?toUtc=${future}`, admin)).json().totalCount).toBe(all.totalCount);
  });

  it('401 without a token, 403 for a resident, 200 for a FINANCIAL_MANAGER; 404 for an unknown territory', async () => {
    expect((await get(t, url(), null)).statusCode).toBe(401);
    const resident = await newResident(t, s.territory, { verified: true });
    const refused = await get(t, url(), resident);
    expect(refused.statusCode).toBe(403);
    expect((await get(t, `${url()}/${UNKNOWN_ID}`, resident)).statusCode).toBe(403);
    expect((await get(t, url(), financeManager)).statusCode).toBe(200);
    expect((await get(t, url(UNKNOWN_ID), admin)).statusCode).toBe(404);
  });

  it('400 naming the field for a bad type, status, id, currency or period', async () => {
    for (const [query, field] of [
      ['type=WIRE', 'type'],
      ['status=DONE', 'status'],
      ['relatedEntityId=abc', 'relatedEntityId'],
      ['currency=reais', 'currency'],
      ['fromUtc=yesterday', 'fromUtc'],
      ['fromUtc=2026-02-01T00:00:00Z&toUtc=2026-01-01T00:00:00Z', 'toUtc'],
      ['pageSize=0', 'pageSize'],
    ]) {
      const res = await get(t, `${url()}?${query}`, admin);
      expect(res.statusCode, query).toBe(400);
      expect(JSON.stringify(res.json()), query).toContain(field);
    }
    expect((await get(t, `${url()}/not-an-id`, admin)).statusCode).toBe(400);
  });

  it("404 for an unknown id and for another territory's transaction", async () => {
    expect((await get(t, `${url()}/${UNKNOWN_ID}`, admin)).statusCode).toBe(404);
    const other = await shop(t, admin, { feeBasisPoints: 0 });
    await paidSale(t, other, 1);
    const [theirs] = (await get(t, url(other.territory.id), admin)).json().items;
    const res = await get(t, `${url()}/${theirs.id}`, admin);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('NOT_FOUND');
    expect((await get(t, `${url(other.territory.id)}/${theirs.id}`, admin)).statusCode).toBe(200);
  });
});

describe('the trace in the database', () => {
  it('status changes are append-only; a write that leaves the status as it was adds none', async () => {
    await expect(t.sql(`update financial_transaction_status_change set status = 'FAILED'`)).rejects.toThrow(/append-only/);
    const before = await t.sql<{ n: number }>('select count(*)::int as n from financial_transaction_status_change');
    await t.sql(`update seller_transaction set updated_at_utc = now()`);
    await t.sql(`update checkout set updated_at_utc = now()`);
    expect(await t.sql<{ n: number }>('select count(*)::int as n from financial_transaction_status_change')).toEqual(before);
  });

  it("the migration's tracing of existing records gives what the triggers wrote", async () => {
    const read = () =>
      t.sql(
        `select territory_id, type, status, amount_in_cents::text, currency, related_entity_type, related_entity_id from financial_transaction
          order by related_entity_id, type`,
      );
    const traced = await read();
    expect(traced.length).toBeGreaterThan(20);
    await t.sql('delete from financial_transaction');
    for (const statement of TRACE_EXISTING_RECORDS) await t.sql(statement);
    expect(await read()).toEqual(traced);
    await expectEveryAmountTraced();
  });

  it('the list walks financial_transaction_territory_idx (EXPLAIN with other territories traced)', async () => {
    await t.sql(
      `insert into financial_transaction (id, created_at_utc, updated_at_utc, territory_id, type, status, amount_in_cents, currency, related_entity_type, related_entity_id)
       select gen_random_uuid(), now() - make_interval(secs => g), now(), $1, 'PAYOUT', 'COMPLETED', g, 'BRL', 'PAYOUT', gen_random_uuid()
         from generate_series(1, 3000) g`,
      [(await newTerritory(t)).id],
    );
    await t.sql('analyze financial_transaction');
    const nodes = await planOf(t, financialTransactionsPageQuery(s.territory.id, { territoryId: s.territory.id, pageNumber: 1, pageSize: 20 }, 0, 20));
    expect(nodes.map((n) => n['Index Name']).filter(Boolean)).toContain('financial_transaction_territory_idx');
    expect(nodes.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  });
});
