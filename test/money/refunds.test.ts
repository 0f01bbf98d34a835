import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakePaymentGateway } from '../../src/routers/payments/gateway.js';
import { sellerBalanceReleaseJob } from '../../src/routers/payouts/seller-balance-release.job.js';
import { countRows, newAdmin, newResident, newTerritory, newUser, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { addToCart, checkout, expectLedgerBalanced, listItem, openStore, sendWebhook } from '../marketplace/money-helpers.js';
import { paidSale, release, runJob, shop, syncJob } from './payout-helpers.js';

let t: TestApp;
let admin: TestUser;
let territory: TestTerritory;
let seller: TestUser;
let itemId: string;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  seller = await newResident(t, territory, { verified: true });
  itemId = await listItem(t, seller, await openStore(t, seller, territory), { priceAmount: '25.50' });
  await t.app.inject({
    method: 'PUT',
    url: `/api/v1/territories/${territory.id}/platform-fees`,
    headers: admin.headers,
    payload: { itemType: 'PRODUCT', feeMode: 'PERCENTAGE', feeBasisPoints: 1000, isActive: true },
  });
});
afterAll(() => t.close());

/** A checkout of 2 items (gross 5100, fee 510, net 4590), PAID unless told. */
async function sale(pay = true): Promise<{ id: string; buyer: TestUser }> {
  const buyer = await newUser(t);
  await addToCart(t, buyer, { itemId, quantity: 2 });
  const c = (await checkout(t, buyer, { territoryId: territory.id })).json().checkouts[0];
  if (pay) {
    const data = { paymentId: c.payment.id, checkoutId: c.id, amountInCents: c.payment.amountInCents, currency: c.payment.currency };
    expect((await sendWebhook(t, { id: `evt_${c.id}`, type: 'payment.succeeded', data })).statusCode).toBe(200);
  }
  return { id: c.id, buyer };
}
const refund = (id: string, user: TestUser | null) => t.app.inject({ method: 'POST', url: `/api/v1/checkouts/${id}/refund`, headers: user?.headers ?? {} });
const entriesOf = (key: string) =>
  t.sql<{ kind: string; amount: string }>(
    `select a.kind, e.amount_in_cents::text as amount from ledger_entry e join ledger_account a on a.id = e.account_id
      join ledger_transaction x on x.id = e.transaction_id where x.idempotency_key = $1 order by a.kind`,
    [key],
  );
const moneyRows = async () => ({ ledger: await countRows(t, 'ledger_entry'), audit: await countRows(t, 'audit_entry', `action = 'checkout.refunded'`) });
const balance = async () =>
  (await t.app.inject({ method: 'GET', url: `/api/v1/territories/${territory.id}/seller-balance/me`, headers: seller.headers })).json();

describe('POST /api/v1/checkouts/{checkoutId}/refund', () => {
  it('the store owner refunds a PAID checkout: REFUNDED, gateway refund, reversing ledger entries, negative revenue line', async () => {
    const before = await balance().catch(() => null);
    const { id } = await sale();
    const refundsBefore = FakePaymentGateway.refunds.length;
    const res = await refund(id, seller);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, status: 'REFUNDED', payment: { status: 'REFUNDED', amountInCents: 5100 } });
    expect(FakePaymentGateway.refunds.length).toBe(refundsBefore + 1);
    expect(FakePaymentGateway.refunds.at(-1)).toMatchObject({ amountInCents: 5100, currency: 'BRL' });
    expect(await entriesOf(`checkout:${id}:refunded`)).toEqual([
      { kind: 'gateway_clearing', amount: '5100' },
      { kind: 'platform_revenue', amount: '-510' },
      { kind: 'seller_pending', amount: '-4590' },
    ]);
    expect((await t.sql<{ status: string }>('select status from seller_transaction where checkout_id = $1', [id]))[0]!.status).toBe('CANCELED');
    expect(await countRows(t, 'audit_entry', `action = 'checkout.refunded' and subject_id = $1`, [id])).toBe(1);
    expect((await balance()).pendingAmountInCents).toBe(before?.pendingAmountInCents ?? 0);
    const revenue = (
      await t.app.inject({ method: 'GET', url: `/api/v1/territories/${territory.id}/platform-financial/revenue`, headers: admin.headers })
    ).json();
    expect(revenue.items.filter((l: { checkoutId: string }) => l.checkoutId === id).map((l: { amountInCents: number }) => l.amountInCents)).toEqual([
      -510, 510,
    ]);
    await expectLedgerBalanced(t);

    // A second refund: 409, nothing written.
    const rows = await moneyRows();
    const again = await refund(id, seller);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('CHECKOUT_NOT_REFUNDABLE');
    expect(await moneyRows()).toEqual(rows);
  });

  it('a SYSTEM_ADMIN refunds money already released to ready (seller_ready is reversed)', async () => {
    const { id } = await sale();
    await sellerBalanceReleaseJob.handle({ em: t.deps.orm.em.fork(), storage: t.deps.storage, clock: { now: () => new Date() } }, {});
    expect((await balance()).readyForPayoutAmountInCents).toBeGreaterThanOrEqual(4590);
    const readyBefore = (await balance()).readyForPayoutAmountInCents;
    expect((await refund(id, admin)).statusCode).toBe(200);
    expect(await entriesOf(`checkout:${id}:refunded`)).toEqual([
      { kind: 'gateway_clearing', amount: '5100' },
      { kind: 'platform_revenue', amount: '-510' },
      { kind: 'seller_ready', amount: '-4590' },
    ]);
    expect((await balance()).readyForPayoutAmountInCents).toBe(readyBefore - 4590);
    await expectLedgerBalanced(t);
  });

  it('concurrent refunds of one checkout: one succeeds, the other 409', async () => {
    const { id } = await sale();
    const answers = (await Promise.all([refund(id, seller), refund(id, admin)])).map((r) => r.statusCode).sort();
    expect(answers).toEqual([200, 409]);
    expect(await countRows(t, 'ledger_transaction', 'idempotency_key = $1', [`checkout:${id}:refunded`])).toBe(1);
    await expectLedgerBalanced(t);
  });

  it('401 without a token; 403 for the buyer; 404 for others and unknown; 409 unpaid; nothing written', async () => {
    const { id, buyer } = await sale();
    const rows = await moneyRows();
    expect((await refund(id, null)).statusCode).toBe(401);
    expect((await refund(id, buyer)).statusCode).toBe(403);
    expect((await refund(id, await newUser(t))).statusCode).toBe(404);
    expect((await refund(UNKNOWN_ID, seller)).statusCode).toBe(404);
    expect((await refund('not-a-uuid', seller)).statusCode).toBe(400);
    const unpaid = await sale(false);
    expect((await refund(unpaid.id, seller)).statusCode).toBe(409);
    expect(await moneyRows()).toEqual(rows);
  });
});

/** The gateway's report of a refund made outside this API (its dashboard, a dispute) of the checkout's whole payment. */
async function reportedRefund(checkoutId: string, eventId = `evt_refund_${checkoutId}`) {
  const [payment] = await t.sql<{ id: string; amount: number; currency: string }>(
    'select id, amount_in_cents::int as amount, currency from payment where checkout_id = $1',
    [checkoutId],
  );
  return sendWebhook(t, {
    id: eventId,
    type: 'payment.refunded',
    data: { paymentId: payment!.id, checkoutId, amountInCents: payment!.amount, currency: payment!.currency },
  });
}

describe('a refund the gateway reports (payment.refunded)', () => {
  it('reverses a PAID checkout whose money is with the platform, as a refund here does, without asking the gateway again; a repeat changes nothing', async () => {
    const { id } = await sale();
    const refundsBefore = FakePaymentGateway.refunds.length;
    const res = await reportedRefund(id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ received: true, outcome: 'REFUNDED' });
    expect(FakePaymentGateway.refunds.length).toBe(refundsBefore);
    expect(await t.sql('select c.status, p.status as payment from checkout c join payment p on p.checkout_id = c.id where c.id = $1', [id])).toEqual([
      { status: 'REFUNDED', payment: 'REFUNDED' },
    ]);
    expect(await t.sql('select status from seller_transaction where checkout_id = $1', [id])).toEqual([{ status: 'CANCELED' }]);
    expect(await entriesOf(`checkout:${id}:refunded`)).toEqual([
      { kind: 'gateway_clearing', amount: '5100' },
      { kind: 'platform_revenue', amount: '-510' },
      { kind: 'seller_pending', amount: '-4590' },
    ]);
    expect(await countRows(t, 'audit_entry', `action = 'checkout.refunded' and subject_id = $1 and actor_user_id is null`, [id])).toBe(1);
    const before = await moneyRows();
    expect((await reportedRefund(id)).json().outcome).toBe('DUPLICATE');
    expect((await reportedRefund(id, `evt_again_${id}`)).json().outcome).toBe('IGNORED');
    expect(await moneyRows()).toEqual(before);
    await expectLedgerBalanced(t);
  });

  it("after a refund made here, the gateway's own report of it changes nothing", async () => {
    const { id } = await sale();
    expect((await refund(id, seller)).statusCode).toBe(200);
    const before = await moneyRows();
    const res = await reportedRefund(id);
    expect(res.json()).toEqual({ received: true, outcome: 'IGNORED' });
    expect(await moneyRows()).toEqual(before);
  });

  it('a checkout already paid out to the seller stays PAID with its ledger; the refund is audited for the finance team', async () => {
    const s = await shop(t, admin, { config: {} });
    const checkoutId = await paidSale(t, s, 1);
    await release(t);
    await runJob(t, s.territory.id);
    await syncJob(t);
    expect(await t.sql('select status from seller_transaction where checkout_id = $1', [checkoutId])).toEqual([{ status: 'PAID' }]);
    const ledger = await countRows(t, 'ledger_entry');
    const res = await reportedRefund(checkoutId);
    expect(res.json()).toEqual({ received: true, outcome: 'REFUNDED_AFTER_PAYOUT' });
    expect(await t.sql('select status from checkout where id = $1', [checkoutId])).toEqual([{ status: 'PAID' }]);
    expect(await countRows(t, 'ledger_entry')).toBe(ledger);
    expect(await countRows(t, 'audit_entry', `action = 'checkout.refunded_after_payout' and subject_id = $1`, [checkoutId])).toBe(1);
    await expectLedgerBalanced(t);
  });
});
