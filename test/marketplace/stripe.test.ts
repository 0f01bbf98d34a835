/**
 * PAYMENTS__PROVIDER=stripe end to end through our HTTP API, offline: the official `stripe` client talks to a local
 * HTTP stub answering PaymentIntent creation and refunds the way Stripe's API does (form-encoded requests, JSON
 * objects, a 402 `card_error` for a declined card), and webhooks are signed with the package's own
 * `generateTestHeaderString`, so the signature check is the real one.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { fromStripeAmount, toStripeAmount } from '../../src/routers/payments/stripe-gateway.js';
import { countRows, newAdmin, newResident, newTerritory, newUser, type TestTerritory, type TestUser } from '../factories/index.js';
import { PRODUCTION_ENV } from '../platform/support.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { addToCart, checkout, expectLedgerBalanced, listItem, openStore } from './money-helpers.js';

const SECRET_KEY = 'sk_test_territory_stub';
const WEBHOOK_SECRET = 'whsec_territory_test_secret';
/** The PaymentMethod the stub declines, like Stripe's test `pm_card_chargeDeclined`. */
const DECLINED_PM = 'pm_card_chargeDeclined';

interface StubRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
}

type Json = Record<string, unknown>;

/** Stripe's API, as far as our gateway uses it. */
class StripeStub {
  readonly requests: StubRequest[] = [];
  readonly intents = new Map<string, Json>();
  /** Answer the next PaymentIntent creation with a non-card error (an API failure). */
  failNextCreate = false;
  private readonly replies = new Map<string, { status: number; body: Json }>();
  private seq = 0;
  private server!: Server;
  url = '';

  async start() {
    this.server = createServer((req, res) => {
      void this.answer(req).then(({ status, body }) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++this.seq}` });
        res.end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(req: IncomingMessage): Promise<{ status: number; body: Json }> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const params = Object.fromEntries(new URLSearchParams(raw));
    const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
    const request = { method: req.method!, path: req.url!, params, idempotencyKey, authorization: req.headers.authorization };
    this.requests.push(request);
    // Stripe answers a repeated idempotency key with the first answer.
    const replayed = idempotencyKey && this.replies.get(idempotencyKey);
    if (replayed) return replayed;
    const reply = this.route(request);
    if (idempotencyKey) this.replies.set(idempotencyKey, reply);
    return reply;
  }

  private route(r: StubRequest): { status: number; body: Json } {
    if (r.method === 'POST' && r.path === '/v1/payment_intents') return this.createIntent(r.params);
    if (r.method === 'POST' && r.path === '/v1/refunds') {
      const intent = this.intents.get(r.params.payment_intent ?? '');
      if (!intent) return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such payment_intent' } } };
      const id = `re_${++this.seq}`;
      return {
        status: 200,
        body: {
          id,
          object: 'refund',
          amount: Number(r.params.amount),
          currency: intent.currency,
          payment_intent: intent.id,
          status: 'succeeded',
          metadata: {},
        },
      };
    }
    return { status: 404, body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${r.method}: ${r.path})` } } };
  }

  private createIntent(p: Record<string, string>): { status: number; body: Json } {
    if (this.failNextCreate) {
      this.failNextCreate = false;
      return {
        status: 400,
        body: { error: { type: 'invalid_request_error', code: 'parameter_invalid_integer', param: 'amount', message: 'Invalid integer' } },
      };
    }
    const id = `pi_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const type = p['allowed_payment_method_types[0]'];
    const intent: Json = {
      id,
      object: 'payment_intent',
      amount: Number(p.amount),
      amount_received: 0,
      currency: p.currency,
      client_secret: `${id}_secret_${randomUUID().replace(/-/g, '')}`,
      metadata: { checkoutId: p['metadata[checkoutId]'], paymentId: p['metadata[paymentId]'] },
      allowed_payment_method_types: [type],
      payment_method_types: [type],
      status: 'requires_payment_method',
      next_action: null,
      last_payment_error: null,
      livemode: false,
    };
    if (p.confirm === 'true' && type === 'pix') {
      intent.status = 'requires_action';
      intent.next_action = {
        type: 'pix_display_qr_code',
        pix_display_qr_code: {
          data: `00020101021226880014br.gov.bcb.pix2566qr.stripe.com/pix/${id}5204000053039865802BR6304ABCD`,
          expires_at: Math.floor(Date.now() / 1000) + 86_400,
          hosted_instructions_url: `https://payments.stripe.com/pix/instructions/${id}`,
        },
      };
    } else if (p.confirm === 'true' && type === 'card') {
      if (p.payment_method === DECLINED_PM) {
        const lastPaymentError = { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' };
        this.intents.set(id, { ...intent, last_payment_error: lastPaymentError });
        return { status: 402, body: { error: { ...lastPaymentError, payment_intent: { ...intent, last_payment_error: lastPaymentError } } } };
      }
      intent.status = 'succeeded';
      intent.amount_received = intent.amount;
    }
    this.intents.set(id, intent);
    return { status: 200, body: intent };
  }
}

const stub = new StripeStub();
let t: TestApp;
let territory: TestTerritory;
let seller: TestUser;
let itemId: string;

beforeAll(async () => {
  await stub.start();
  t = await createTestApp({
    PAYMENTS__PROVIDER: 'stripe',
    PAYMENTS__STRIPESECRETKEY: SECRET_KEY,
    PAYMENTS__WEBHOOKSECRET: WEBHOOK_SECRET,
    PAYMENTS__STRIPEAPIURL: stub.url,
  });
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  seller = await newResident(t, territory, { verified: true });
  const storeId = await openStore(t, seller, territory);
  itemId = await listItem(t, seller, storeId, { priceAmount: '25.50' });
  const admin = await newAdmin(t);
  const fee = await t.app.inject({
    method: 'PUT',
    url: `/api/v1/territories/${territory.id}/platform-fees`,
    headers: admin.headers,
    payload: { itemType: 'PRODUCT', feeMode: 'PERCENTAGE', feeBasisPoints: 1000, isActive: true },
  });
  expect(fee.statusCode).toBeLessThan(300);
});
afterAll(async () => {
  await t?.close();
  await stub.stop();
});
beforeEach(() => {
  stub.requests.length = 0;
});

interface Bought {
  buyer: TestUser;
  id: string;
  payment: { id: string; method: string; amountInCents: number; currency: string; pixCopyPasteCode: string | null; clientSecret: string | null };
  /** The PaymentIntent the stub created for it. */
  intent: Json;
}

async function bought(payload: Record<string, unknown> = {}, quantity = 2): Promise<Bought> {
  const buyer = await newUser(t);
  expect((await addToCart(t, buyer, { itemId, quantity })).statusCode).toBe(201);
  const res = await checkout(t, buyer, { territoryId: territory.id, ...payload });
  expect(res.statusCode).toBe(201);
  const c = res.json().checkouts[0];
  const [row] = await t.sql<{ provider_payment_id: string }>('select provider_payment_id from payment where id = $1', [c.payment.id]);
  return { buyer, id: c.id, payment: c.payment, intent: stub.intents.get(row!.provider_payment_id)! };
}

/** A Stripe event as Stripe sends it (a snapshot of the object). */
const stripeEvent = (type: string, object: Json, id = `evt_${randomUUID().replace(/-/g, '')}`) => ({
  id,
  object: 'event',
  api_version: '2026-10-28.endive',
  created: Math.floor(Date.now() / 1000),
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  type,
  data: { object },
});
const succeeded = (intent: Json, extra: Json = {}) =>
  stripeEvent('payment_intent.succeeded', { ...intent, status: 'succeeded', amount_received: intent.amount, ...extra });

function sendStripeWebhook(body: unknown, opts: { secret?: string; timestamp?: number; signature?: string | null; provider?: string } = {}) {
  const payload = JSON.stringify(body);
  const signature =
    opts.signature === undefined
      ? Stripe.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? WEBHOOK_SECRET, ...(opts.timestamp ? { timestamp: opts.timestamp } : {}) })
      : opts.signature;
  return t.app.inject({
    method: 'POST',
    url: `/api/v1/payments/webhooks/${opts.provider ?? 'stripe'}`,
    headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'stripe-signature': signature }) },
    payload,
  });
}

const status = async (id: string) => (await t.sql<{ status: string }>('select status from checkout where id = $1', [id]))[0]!.status;
const paymentStatus = async (id: string) => (await t.sql<{ status: string }>('select status from payment where id = $1', [id]))[0]!.status;
const moneyRows = async () => ({
  events: await countRows(t, 'payment_webhook_event'),
  sellerTx: await countRows(t, 'seller_transaction'),
  ledger: await countRows(t, 'ledger_entry'),
  audit: await countRows(t, 'audit_entry'),
  checkouts: await countRows(t, 'checkout'),
});
const cartLines = (buyer: TestUser) => countRows(t, 'cart_item', 'cart_id in (select id from cart where user_id = $1)', [buyer.id]);

describe('checkout with PAYMENTS__PROVIDER=stripe', () => {
  it('PIX: one PaymentIntent created and confirmed (amount, lower-case currency, our ids, idempotency key); the copy-paste code of its next action', async () => {
    const b = await bought({ paymentMethod: 'PIX' });
    expect(b.payment).toMatchObject({ method: 'PIX', status: 'PENDING', amountInCents: 5100, currency: 'BRL', clientSecret: null });
    const next = b.intent.next_action as { pix_display_qr_code: { data: string } };
    expect(b.payment.pixCopyPasteCode).toBe(next.pix_display_qr_code.data);
    const creations = stub.requests.filter((r) => r.path === '/v1/payment_intents');
    expect(creations).toHaveLength(1);
    expect(creations[0]).toMatchObject({
      method: 'POST',
      authorization: `Bearer ${SECRET_KEY}`,
      idempotencyKey: `payment:${b.payment.id}`,
      params: {
        amount: '5100',
        currency: 'brl',
        confirm: 'true',
        'allowed_payment_method_types[0]': 'pix',
        'payment_method_data[type]': 'pix',
        'metadata[checkoutId]': b.id,
        'metadata[paymentId]': b.payment.id,
      },
    });
    expect(creations[0]!.params).not.toHaveProperty('payment_method_types[0]');
    const [row] = await t.sql<{ provider: string; provider_payment_id: string }>('select provider, provider_payment_id from payment where id = $1', [
      b.payment.id,
    ]);
    expect(row).toEqual({ provider: 'stripe', provider_payment_id: b.intent.id });
  });

  it('CARD without a token: an unconfirmed PaymentIntent whose client secret only the buyer sees', async () => {
    const b = await bought({ paymentMethod: 'CARD' });
    expect(b.payment).toMatchObject({ method: 'CARD', pixCopyPasteCode: null, clientSecret: b.intent.client_secret });
    const [creation] = stub.requests.filter((r) => r.path === '/v1/payment_intents');
    expect(creation!.params).toMatchObject({ 'allowed_payment_method_types[0]': 'card' });
    expect(creation!.params).not.toHaveProperty('confirm');
    const asSeller = await t.app.inject({ method: 'GET', url: `/api/v1/checkouts/${b.id}`, headers: seller.headers });
    expect(asSeller.json().payment.clientSecret).toBeNull();
  });

  it('CARD with a PaymentMethod Stripe declines (card_declined, 402 from the API): 402 PAYMENT_DECLINED, checkout kept PAYMENT_FAILED, cart untouched', async () => {
    const buyer = await newUser(t);
    await addToCart(t, buyer, { itemId, quantity: 1 });
    const before = await countRows(t, 'checkout', 'buyer_user_id = $1', [buyer.id]);
    const res = await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'CARD', paymentToken: DECLINED_PM });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({ status: 402, code: 'PAYMENT_DECLINED' });
    const rows = await t.sql<{ status: string; payment_status: string; provider_payment_id: string }>(
      `select c.status, p.status as payment_status, p.provider_payment_id from checkout c join payment p on p.checkout_id = c.id where c.buyer_user_id = $1`,
      [buyer.id],
    );
    expect(before).toBe(0);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'PAYMENT_FAILED', payment_status: 'FAILED' });
    // The declined confirmation's PaymentIntent, from the error Stripe answered with.
    expect(stub.intents.get(rows[0]!.provider_payment_id)).toBeDefined();
    expect(await cartLines(buyer)).toBe(1);
    expect(await countRows(t, 'audit_entry', `action = 'checkout.payment.declined' and actor_user_id = $1`, [buyer.id])).toBe(1);

    // A good card then goes through: confirmed at once, PAID when Stripe's webhook says so.
    const ok = await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'CARD', paymentToken: 'pm_card_visa' });
    expect(ok.statusCode).toBe(201);
    const c = ok.json().checkouts[0];
    expect(c).toMatchObject({ status: 'AWAITING_PAYMENT', payment: { method: 'CARD', status: 'PENDING', clientSecret: expect.stringContaining('_secret_') } });
    const [creation] = stub.requests.filter((r) => r.path === '/v1/payment_intents').slice(-1);
    expect(creation!.params).toMatchObject({ payment_method: 'pm_card_visa', confirm: 'true' });
    const [row] = await t.sql<{ provider_payment_id: string }>('select provider_payment_id from payment where id = $1', [c.payment.id]);
    const res2 = await sendStripeWebhook(succeeded(stub.intents.get(row!.provider_payment_id)!));
    expect(res2.json()).toEqual({ received: true, outcome: 'PAID' });
    expect(await cartLines(buyer)).toBe(0);
  });

  it('an API failure that is not the card: 503 PAYMENT_GATEWAY_UNAVAILABLE with Retry-After, nothing written, the cart untouched', async () => {
    const buyer = await newUser(t);
    await addToCart(t, buyer, { itemId, quantity: 1 });
    const before = await moneyRows();
    stub.failNextCreate = true;
    const res = await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'PIX' });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('PAYMENT_GATEWAY_UNAVAILABLE');
    expect(res.headers['retry-after']).toBe('5');
    expect(await moneyRows()).toEqual(before);
    expect(await cartLines(buyer)).toBe(1);
  });

  it("simulate-payment is the fake gateway's only: 404 under stripe", async () => {
    const b = await bought();
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/checkouts/${b.id}/simulate-payment`,
      headers: b.buyer.headers,
      payload: { outcome: 'SUCCEEDED' },
    });
    expect(res.statusCode).toBe(404);
    expect(await status(b.id)).toBe('AWAITING_PAYMENT');
  });
});

describe('POST /api/v1/payments/webhooks/stripe', () => {
  it('payment_intent.succeeded (signed): PAID with seller transaction and balanced ledger; a replay is DUPLICATE and changes nothing', async () => {
    const b = await bought();
    const event = succeeded(b.intent);
    const res = await sendStripeWebhook(event);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ received: true, outcome: 'PAID' });
    expect(await status(b.id)).toBe('PAID');
    expect(await paymentStatus(b.payment.id)).toBe('SUCCEEDED');
    const [st] = await t.sql<Record<string, unknown>>(
      `select gross_amount_in_cents::text as gross, platform_fee_in_cents::text as fee, net_amount_in_cents::text as net, currency, seller_user_id
         from seller_transaction where checkout_id = $1`,
      [b.id],
    );
    expect(st).toEqual({ gross: '5100', fee: '510', net: '4590', currency: 'BRL', seller_user_id: seller.id });
    await expectLedgerBalanced(t);
    const [recorded] = await t.sql<{ provider: string; type: string; payment_id: string }>(
      'select provider, type, payment_id from payment_webhook_event where event_id = $1',
      [event.id],
    );
    expect(recorded).toEqual({ provider: 'stripe', type: 'payment.succeeded', payment_id: b.payment.id });
    expect(await countRows(t, 'outbox_message', `type = 'ORDER_PAID' and source_key = $1`, [`checkout:${b.id}:paid`])).toBe(1);

    const before = await moneyRows();
    const replay = await sendStripeWebhook(event);
    expect(replay.json()).toEqual({ received: true, outcome: 'DUPLICATE' });
    // Another event id for the same payment changes nothing either.
    const again = await sendStripeWebhook(succeeded(b.intent));
    expect(again.json()).toEqual({ received: true, outcome: 'ALREADY_SETTLED' });
    expect((await moneyRows()).sellerTx).toBe(before.sellerTx);
    expect((await moneyRows()).ledger).toBe(before.ledger);
  });

  it('20 concurrent deliveries of one event credit the seller once', async () => {
    const b = await bought({}, 1);
    const event = succeeded(b.intent);
    const answers = await Promise.all(Array.from({ length: 20 }, () => sendStripeWebhook(event)));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(20).fill(200));
    expect(answers.filter((a) => a.json().outcome === 'PAID')).toHaveLength(1);
    expect(await countRows(t, 'seller_transaction', 'checkout_id = $1', [b.id])).toBe(1);
    await expectLedgerBalanced(t);
  });

  it('a bad signature is 400 INVALID_WEBHOOK_SIGNATURE and writes nothing: another secret, no header, a tampered body, a stale timestamp', async () => {
    const b = await bought();
    const event = succeeded(b.intent);
    const before = await moneyRows();
    const wrongSecret = await sendStripeWebhook(event, { secret: 'whsec_someone_else' });
    const noHeader = await sendStripeWebhook(event, { signature: null });
    const garbage = await sendStripeWebhook(event, { signature: 't=1,v1=deadbeef' });
    const signedOther = Stripe.webhooks.generateTestHeaderString({ payload: JSON.stringify(succeeded(b.intent)), secret: WEBHOOK_SECRET });
    const tampered = await sendStripeWebhook(event, { signature: signedOther });
    const stale = await sendStripeWebhook(event, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
    for (const res of [wrongSecret, noHeader, garbage, tampered, stale]) {
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, code: 'INVALID_WEBHOOK_SIGNATURE' });
    }
    expect(await moneyRows()).toEqual(before);
    expect(await status(b.id)).toBe('AWAITING_PAYMENT');
  });

  it('an amount or currency differing from the checkout: 400 WEBHOOK_AMOUNT_MISMATCH, nothing written', async () => {
    const b = await bought();
    const before = await moneyRows();
    const less = await sendStripeWebhook(succeeded(b.intent, { amount_received: 100 }));
    const usd = await sendStripeWebhook(succeeded(b.intent, { currency: 'usd' }));
    for (const res of [less, usd]) {
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('WEBHOOK_AMOUNT_MISMATCH');
    }
    expect(await moneyRows()).toEqual(before);
    expect(await status(b.id)).toBe('AWAITING_PAYMENT');
  });

  it('payment_intent.payment_failed: PAYMENT_FAILED; a late success then is recorded, audited and refunded through Stripe', async () => {
    const b = await bought();
    const failed = await sendStripeWebhook(stripeEvent('payment_intent.payment_failed', { ...b.intent, status: 'requires_payment_method' }));
    expect(failed.json()).toEqual({ received: true, outcome: 'FAILED' });
    expect(await status(b.id)).toBe('PAYMENT_FAILED');
    const late = await sendStripeWebhook(succeeded(b.intent));
    expect(late.json()).toEqual({ received: true, outcome: 'LATE_SUCCESS_REFUNDED' });
    expect(await status(b.id)).toBe('PAYMENT_FAILED');
    expect(await paymentStatus(b.payment.id)).toBe('REFUNDED');
    const refunds = stub.requests.filter((r) => r.path === '/v1/refunds');
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ params: { payment_intent: b.intent.id, amount: '5100' }, idempotencyKey: `refund:${b.intent.id}:5100` });
    expect(await countRows(t, 'seller_transaction', 'checkout_id = $1', [b.id])).toBe(0);
    expect(await countRows(t, 'audit_entry', `action = 'checkout.payment.late_success_refunded' and subject_id = $1`, [b.id])).toBe(1);
  });

  it('a refund by the store owner goes through Stripe; the charge.refunded event that follows is recorded and changes nothing', async () => {
    const b = await bought();
    await sendStripeWebhook(succeeded(b.intent));
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/checkouts/${b.id}/refund`, headers: seller.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('REFUNDED');
    const [refund] = stub.requests.filter((r) => r.path === '/v1/refunds');
    expect(refund).toMatchObject({ params: { payment_intent: b.intent.id, amount: '5100' } });
    await expectLedgerBalanced(t);
    // Stripe copies the PaymentIntent's metadata to its charge: that is how the event finds the checkout.
    const charge = {
      id: `ch_${b.id.slice(0, 8)}`,
      object: 'charge',
      amount: 5100,
      amount_refunded: 5100,
      currency: 'brl',
      payment_intent: b.intent.id,
      metadata: b.intent.metadata,
      refunded: true,
    };
    const before = await moneyRows();
    const event = await sendStripeWebhook(stripeEvent('charge.refunded', charge));
    expect(event.json()).toEqual({ received: true, outcome: 'IGNORED' });
    expect(await status(b.id)).toBe('REFUNDED');
    const after = await moneyRows();
    expect(after).toEqual({ ...before, events: before.events + 1 });
  });

  it('a genuine event we do not act on (another type, a PaymentIntent not ours): 200 IGNORED, not recorded', async () => {
    const before = await moneyRows();
    const other = await sendStripeWebhook(stripeEvent('customer.created', { id: 'cus_1', object: 'customer', metadata: {} }));
    const foreign = await sendStripeWebhook(
      stripeEvent('payment_intent.succeeded', { id: 'pi_foreign', object: 'payment_intent', amount: 999, amount_received: 999, currency: 'brl', metadata: {} }),
    );
    for (const res of [other, foreign]) {
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ received: true, outcome: 'IGNORED' });
    }
    expect(await moneyRows()).toEqual(before);
  });

  it("a signed body that is not JSON: 400, nothing written; the fake provider's path is 404 while stripe is configured", async () => {
    const before = await moneyRows();
    const payload = 'not json';
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/payments/webhooks/stripe',
      headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET }) },
      payload,
    });
    expect(res.statusCode).toBe(400);
    const b = await bought();
    const fakePath = await sendStripeWebhook(succeeded(b.intent), { provider: 'fake' });
    expect(fakePath.statusCode).toBe(404);
    expect((await moneyRows()).events).toBe(before.events);
    expect(await status(b.id)).toBe('AWAITING_PAYMENT');
  });
});

describe('stripe configuration', () => {
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return null;
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
  };

  it('needs a secret key and the webhook signing secret; production keeps its refusals and wants https for the API', () => {
    expect(refusal({ PAYMENTS__PROVIDER: 'stripe', PAYMENTS__WEBHOOKSECRET: WEBHOOK_SECRET })).toMatch(/^PAYMENTS__STRIPESECRETKEY must be configured/);
    expect(refusal({ PAYMENTS__PROVIDER: 'stripe', PAYMENTS__STRIPESECRETKEY: 'pk_test_publishable', PAYMENTS__WEBHOOKSECRET: WEBHOOK_SECRET })).toMatch(
      /^PAYMENTS__STRIPESECRETKEY/,
    );
    expect(refusal({ PAYMENTS__PROVIDER: 'stripe', PAYMENTS__STRIPESECRETKEY: SECRET_KEY })).toMatch(/^PAYMENTS__WEBHOOKSECRET must be configured/);
    expect(refusal({ PAYMENTS__PROVIDER: 'stripe', PAYMENTS__STRIPESECRETKEY: SECRET_KEY, PAYMENTS__WEBHOOKSECRET: WEBHOOK_SECRET })).toBeNull();
    expect(refusal({ ...PRODUCTION_ENV, PAYMENTS__PROVIDER: 'stripe', PAYMENTS__STRIPESECRETKEY: SECRET_KEY })).toBe(
      'PAYMENTS__WEBHOOKSECRET must be configured in production: webhooks of the payment gateway are verified with it',
    );
    const prod = { ...PRODUCTION_ENV, PAYMENTS__PROVIDER: 'stripe', PAYMENTS__STRIPESECRETKEY: SECRET_KEY, PAYMENTS__WEBHOOKSECRET: WEBHOOK_SECRET };
    expect(refusal(prod)).toBeNull();
    expect(refusal({ ...prod, PAYMENTS__STRIPEAPIURL: 'http://stripe.internal' })).toMatch(/^PAYMENTS__STRIPEAPIURL must be an https/);
    expect(refusal({ ...prod, PAYMENTS__STRIPEAPIURL: 'ftp://x' })).toMatch(/PAYMENTS__STRIPEAPIURL/);
  });

  it("amounts: hundredths become the currency's smallest unit for Stripe and back", () => {
    expect(toStripeAmount(5100, 'BRL')).toBe(5100);
    expect(toStripeAmount(150000, 'JPY')).toBe(1500);
    expect(() => toStripeAmount(150050, 'JPY')).toThrow(/no fractional unit/);
    expect(toStripeAmount(1234, 'KWD')).toBe(12340);
    expect(fromStripeAmount(1500, 'jpy')).toBe(150000);
    expect(fromStripeAmount(12340, 'kwd')).toBe(1234);
  });
});
