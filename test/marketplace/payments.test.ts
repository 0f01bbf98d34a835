import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { FakePaymentGateway, signWebhook } from '../../src/routers/payments/gateway.js';
import { countRows, newAdmin, newResident, newTerritory, newUser, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { PRODUCTION_ENV } from '../platform/support.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { addToCart, checkout, expectLedgerBalanced, listItem, openStore, sendWebhook } from './money-helpers.js';

let t: TestApp;
let territory: TestTerritory;
let seller: TestUser;
let storeId: string;
let itemId: string;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  seller = await newResident(t, territory, { verified: true });
  storeId = await openStore(t, seller, territory);
  itemId = await listItem(t, seller, storeId, { priceAmount: '25.50' });
  const admin = await newAdmin(t);
  await t.app.inject({
    method: 'PUT',
    url: `/api/v1/territories/${territory.id}/platform-fees`,
    headers: admin.headers,
    payload: { itemType: 'PRODUCT', feeMode: 'PERCENTAGE', feeBasisPoints: 1000, isActive: true },
  });
});
afterAll(() => t.close());

interface Bought {
  buyer: TestUser;
  id: string;
  payment: { id: string; amountInCents: number; currency: string };
}
async function bought(quantity = 2): Promise<Bought> {
  const buyer = await newUser(t);
  await addToCart(t, buyer, { itemId, quantity });
  const res = await checkout(t, buyer, { territoryId: territory.id });
  expect(res.statusCode).toBe(201);
  const c = res.json().checkouts[0];
  return { buyer, id: c.id, payment: c.payment };
}
const event = (b: Bought, type = 'payment.succeeded', id = `evt_${b.id}_${type}`, data: Record<string, unknown> = {}) => ({
  id,
  type,
  data: { paymentId: b.payment.id, checkoutId: b.id, amountInCents: b.payment.amountInCents, currency: b.payment.currency, ...data },
});
const status = async (id: string) => (await t.sql<{ status: string }>('select status from checkout where id = $1', [id]))[0]!.status;
const moneyRows = async () => ({
  events: await countRows(t, 'payment_webhook_event'),
  sellerTx: await countRows(t, 'seller_transaction'),
  ledger: await countRows(t, 'ledger_entry'),
  audit: await countRows(t, 'audit_entry'),
});

describe('POST /api/v1/payments/webhooks/{provider}', () => {
  it('payment.succeeded: PAID, seller transaction, balanced ledger entries, audit and ORDER_PAID in one transaction (200)', async () => {
    const b = await bought();
    const res = await sendWebhook(t, event(b));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ received: true, outcome: 'PAID' });
    expect(await status(b.id)).toBe('PAID');
    const [st] = await t.sql<Record<string, unknown>>(
      `select gross_amount_in_cents::text as gross, platform_fee_in_cents::text as fee, net_amount_in_cents::text as net, currency, status, seller_user_id,
              ready_for_payout_at_utc = paid_at_utc as ready_at_paid from seller_transaction where checkout_id = $1`,
      [b.id],
    );
    expect(st).toEqual({ gross: '5100', fee: '510', net: '4590', currency: 'BRL', status: 'PENDING', seller_user_id: seller.id, ready_at_paid: true });
    const entries = await t.sql<{ kind: string; amount: string; owner_user_id: string | null }>(
      `select a.kind, e.amount_in_cents::text as amount, a.owner_user_id from ledger_entry e join ledger_account a on a.id = e.account_id
        join ledger_transaction x on x.id = e.transaction_id where x.idempotency_key = $1 order by a.kind`,
      [`checkout:${b.id}:paid`],
    );
    expect(entries).toEqual([
      { kind: 'gateway_clearing', amount: '-5100', owner_user_id: null },
      { kind: 'platform_revenue', amount: '510', owner_user_id: null },
      { kind: 'seller_pending', amount: '4590', owner_user_id: seller.id },
    ]);
    await expectLedgerBalanced(t);
    expect(await countRows(t, 'audit_entry', `action = 'checkout.paid' and subject_id = $1`, [b.id])).toBe(1);
    const outbox = await t.sql<{ type: string; recipient_user_ids: string[] }>('select type, recipient_user_ids from outbox_message where source_key = $1', [
      `checkout:${b.id}:paid`,
    ]);
    expect(outbox).toEqual([{ type: 'ORDER_PAID', recipient_user_ids: [seller.id] }]);
    const payment = await t.app.inject({ method: 'GET', url: `/api/v1/checkouts/${b.id}`, headers: b.buyer.headers });
    expect(payment.json()).toMatchObject({ status: 'PAID', paidAtUtc: expect.any(String), payment: { status: 'SUCCEEDED' } });
  });

  it('a replayed event and 20 concurrent duplicates credit once (200 each)', async () => {
    const b = await bought();
    const body = event(b);
    const answers = await Promise.all(Array.from({ length: 20 }, () => sendWebhook(t, body)));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    expect(answers.filter((r) => r.json().outcome === 'PAID')).toHaveLength(1);
    expect((await sendWebhook(t, body)).json().outcome).toBe('DUPLICATE');
    expect(await countRows(t, 'seller_transaction', 'checkout_id = $1', [b.id])).toBe(1);
    expect(await countRows(t, 'ledger_transaction', 'idempotency_key = $1', [`checkout:${b.id}:paid`])).toBe(1);
    expect(await countRows(t, 'payment_webhook_event', 'checkout_id = $1', [b.id])).toBe(1);
    // 20 concurrent distinct "succeeded" events for one checkout: still paid once.
    const c = await bought();
    const distinct = await Promise.all(Array.from({ length: 20 }, (_, i) => sendWebhook(t, event(c, 'payment.succeeded', `evt_distinct_${c.id}_${i}`))));
    expect(distinct.filter((r) => r.json().outcome === 'PAID')).toHaveLength(1);
    expect(await countRows(t, 'seller_transaction', 'checkout_id = $1', [c.id])).toBe(1);
    await expectLedgerBalanced(t);
  });

  it('a bad or missing signature, a malformed body, another amount or currency: 400 and nothing written', async () => {
    const b = await bought();
    const before = await moneyRows();
    const bad = await sendWebhook(t, event(b), 'sha256=' + '0'.repeat(64));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('INVALID_WEBHOOK_SIGNATURE');
    const missing = await t.app.inject({
      method: 'POST',
      url: '/api/v1/payments/webhooks/fake',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(missing.statusCode).toBe(400);
    expect((await sendWebhook(t, { id: 'x', type: 'payment.exploded', data: {} })).statusCode).toBe(400);
    const amount = await sendWebhook(t, event(b, 'payment.succeeded', 'evt_amount', { amountInCents: 1 }));
    expect(amount.statusCode).toBe(400);
    expect(amount.json().code).toBe('WEBHOOK_AMOUNT_MISMATCH');
    expect((await sendWebhook(t, event(b, 'payment.succeeded', 'evt_currency', { currency: 'USD' }))).statusCode).toBe(400);
    expect(await moneyRows()).toEqual(before);
    expect(await status(b.id)).toBe('AWAITING_PAYMENT');
    // A signed event sent to another provider's path: 404; unsigned: 400.
    const raw = JSON.stringify(event(b, 'payment.succeeded', 'evt_elsewhere'));
    const signature = signWebhook(t.deps.config.payments.webhookSecret, raw);
    const elsewhere = (url: string, headers: Record<string, string>) =>
      t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: raw });
    expect((await elsewhere('/api/v1/payments/webhooks/stripe', { 'x-signature': signature })).statusCode).toBe(404);
    expect((await elsewhere('/api/v1/payments/webhooks/stripe', {})).statusCode).toBe(400);
    expect(await moneyRows()).toEqual(before);
  });

  it('a late success for a CANCELED checkout is recorded, audited and refunded through the gateway; PAID stays PAID (200)', async () => {
    const b = await bought();
    await t.app.inject({ method: 'POST', url: `/api/v1/checkouts/${b.id}/cancel`, headers: b.buyer.headers });
    const refunds = FakePaymentGateway.refunds.length;
    const res = await sendWebhook(t, event(b));
    expect(res.statusCode).toBe(200);
    expect(res.json().outcome).toBe('LATE_SUCCESS_REFUNDED');
    expect(await status(b.id)).toBe('CANCELED');
    expect(FakePaymentGateway.refunds.length).toBe(refunds + 1);
    expect(FakePaymentGateway.refunds.at(-1)).toMatchObject({ amountInCents: 5100, currency: 'BRL' });
    expect(await countRows(t, 'audit_entry', `action = 'checkout.payment.late_success_refunded' and subject_id = $1`, [b.id])).toBe(1);
    expect(await countRows(t, 'seller_transaction', 'checkout_id = $1', [b.id])).toBe(0);
    expect(await countRows(t, 'payment', `checkout_id = $1 and status = 'REFUNDED'`, [b.id])).toBe(1);

    const paid = await bought();
    await sendWebhook(t, event(paid));
    const second = await sendWebhook(t, event(paid, 'payment.succeeded', `evt_second_${paid.id}`));
    expect(second.statusCode).toBe(200);
    expect(second.json().outcome).toBe('ALREADY_SETTLED');
    expect(await countRows(t, 'seller_transaction', 'checkout_id = $1', [paid.id])).toBe(1);
  });

  it('payment.failed turns AWAITING_PAYMENT into PAYMENT_FAILED; a late success then is refunded', async () => {
    const b = await bought();
    expect((await sendWebhook(t, event(b, 'payment.failed'))).json().outcome).toBe('FAILED');
    expect(await status(b.id)).toBe('PAYMENT_FAILED');
    expect((await sendWebhook(t, event(b))).json().outcome).toBe('LATE_SUCCESS_REFUNDED');
    expect(await status(b.id)).toBe('PAYMENT_FAILED');
  });
});

describe('POST /api/v1/checkouts/{id}/simulate-payment', () => {
  it('the buyer pays through the signed webhook path (200 PAID); FAILED fails a fresh one', async () => {
    const b = await bought(1);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/checkouts/${b.id}/simulate-payment`,
      headers: b.buyer.headers,
      payload: { outcome: 'SUCCEEDED' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: b.id, status: 'PAID', payment: { status: 'SUCCEEDED' } });
    expect(await countRows(t, 'payment_webhook_event', 'checkout_id = $1', [b.id])).toBe(1);
    expect(await countRows(t, 'seller_transaction', 'checkout_id = $1', [b.id])).toBe(1);
    const f = await bought(1);
    const failed = await t.app.inject({
      method: 'POST',
      url: `/api/v1/checkouts/${f.id}/simulate-payment`,
      headers: f.buyer.headers,
      payload: { outcome: 'FAILED' },
    });
    expect(failed.json()).toMatchObject({ status: 'PAYMENT_FAILED', payment: { status: 'FAILED' } });
    await expectLedgerBalanced(t);
  });

  it('401 without a token; the seller 403; others 404; 400 for a bad outcome, nothing written', async () => {
    const b = await bought(1);
    const simulate = (user: TestUser | null, payload: Record<string, unknown> = { outcome: 'SUCCEEDED' }) =>
      t.app.inject({ method: 'POST', url: `/api/v1/checkouts/${b.id}/simulate-payment`, headers: user?.headers ?? {}, payload });
    expect((await simulate(null)).statusCode).toBe(401);
    expect((await simulate(seller)).statusCode).toBe(403);
    expect((await simulate(await newUser(t))).statusCode).toBe(404);
    const before = await moneyRows();
    expect((await simulate(b.buyer, { outcome: 'MAYBE' })).statusCode).toBe(400);
    expect(await moneyRows()).toEqual(before);
  });
});

describe('PAYMENTS__PROVIDER=none', () => {
  it('every cart line becomes an inquiry, no store says it takes payments; simulate-payment and the webhook are 404', async () => {
    const off = await createTestApp({ PAYMENTS__PROVIDER: 'none' });
    try {
      const where = await newTerritory(off, { flags: ['MARKETPLACEENABLED'] });
      const owner = await newResident(off, where, { verified: true });
      const storeId = await openStore(off, owner, where);
      const store = await off.app.inject({ method: 'GET', url: `/api/v1/stores/${storeId}`, headers: owner.headers });
      expect(store.json().paymentsEnabled).toBe(false);
      const item = await listItem(off, owner, storeId);
      const buyer = await newUser(off);
      const line = await addToCart(off, buyer, { itemId: item, quantity: 1 });
      expect(line.json().isPurchasable).toBe(false);
      const res = await checkout(off, buyer, { territoryId: where.id });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ checkouts: [], inquiries: [{ itemId: item }] });
      expect((await sendWebhook(off, { id: 'e', type: 'payment.succeeded', data: {} })).statusCode).toBe(404);
      const simulate = await off.app.inject({
        method: 'POST',
        url: `/api/v1/checkouts/${UNKNOWN_ID}/simulate-payment`,
        headers: buyer.headers,
        payload: { outcome: 'SUCCEEDED' },
      });
      expect(simulate.statusCode).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe('payments configuration', () => {
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('loadConfig accepted the environment');
  };

  it('fake outside production, none in production by default', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).payments.provider).toBe('fake');
    expect(loadConfig({ ...PRODUCTION_ENV }).payments.provider).toBe('none');
  });

  it('production refuses the fake provider, and a provider without PAYMENTS__WEBHOOKSECRET', () => {
    expect(refusal({ ...PRODUCTION_ENV, PAYMENTS__PROVIDER: 'fake', PAYMENTS__WEBHOOKSECRET: 's3cret' })).toBe(
      'PAYMENTS__PROVIDER must not be fake in production: the fake gateway confirms payments no one made',
    );
    expect(refusal({ ...PRODUCTION_ENV, PAYMENTS__PROVIDER: 'stripe' })).toBe(
      'PAYMENTS__WEBHOOKSECRET must be configured in production: webhooks of the payment gateway are verified with it',
    );
    expect(refusal({ PAYMENTS__PROVIDER: 'stripe' })).toMatch(/^PAYMENTS__STRIPESECRETKEY must be configured/);
    expect(refusal({ PAYMENTS__PROVIDER: 'paypal' })).toMatch(/PAYMENTS__PROVIDER/);
  });
});
