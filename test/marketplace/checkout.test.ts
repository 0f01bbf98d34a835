import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newResident, newTerritory, newUser, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { addToCart, checkout, listItem, openStore } from './money-helpers.js';

let t: TestApp;
let territory: TestTerritory;
let seller: TestUser;
let storeId: string;
let loaf: string;
let seller2: TestUser;
let store2: string;
let jam: string;
let negotiable: string;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  seller = await newResident(t, territory, { verified: true });
  storeId = await openStore(t, seller, territory);
  loaf = await listItem(t, seller, storeId, { priceAmount: '10.05' });
  negotiable = await listItem(t, seller, storeId, { title: 'Wedding cake', pricingType: 'NEGOTIABLE', priceAmount: null });
  seller2 = await newResident(t, territory, { verified: true });
  store2 = await openStore(t, seller2, territory);
  jam = await listItem(t, seller2, store2, { title: 'Jam', type: 'SERVICE', priceAmount: 7 });
  // 2.5 % on products (round half even), 30 cents per unit on services.
  const admin = await newAdmin(t);
  for (const payload of [
    { itemType: 'PRODUCT', feeMode: 'PERCENTAGE', feeBasisPoints: 250, isActive: true },
    { itemType: 'SERVICE', feeMode: 'FIXED', feeFixedInCents: 30, isActive: true },
  ]) {
    const res = await t.app.inject({ method: 'PUT', url: `/api/v1/territories/${territory.id}/platform-fees`, headers: admin.headers, payload });
    expect(res.statusCode).toBe(200);
  }
});
afterAll(() => t.close());

async function buyerWithCart() {
  const buyer = await newUser(t);
  expect((await addToCart(t, buyer, { itemId: loaf, quantity: 2 })).statusCode).toBe(201);
  expect((await addToCart(t, buyer, { itemId: negotiable, quantity: 1, notes: 'Three tiers' })).statusCode).toBe(201);
  expect((await addToCart(t, buyer, { itemId: jam, quantity: 3 })).statusCode).toBe(201);
  return buyer;
}
const cartLines = (buyer: TestUser) => countRows(t, 'cart_item', 'cart_id in (select id from cart where user_id = $1)', [buyer.id]);

describe('POST /api/v1/cart/checkout', () => {
  it('one checkout per store with snapshots and fees taken from the seller, inquiries for the rest, the cart emptied (201)', async () => {
    const buyer = await buyerWithCart();
    const res = await checkout(t, buyer, { territoryId: territory.id, message: 'Pick-up on Saturday' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.checkouts).toHaveLength(2);
    const bakery = body.checkouts.find((c: { storeId: string }) => c.storeId === storeId);
    // 2 x 10.05 = 20.10; 2.5 % = 50.25 -> 50 (half even).
    expect(bakery).toMatchObject({
      storeId,
      buyerUserId: buyer.id,
      sellerUserId: seller.id,
      status: 'AWAITING_PAYMENT',
      paymentMethod: 'PIX',
      currency: 'BRL',
      itemsSubtotalInCents: 2010,
      platformFeeInCents: 50,
      totalInCents: 2010,
      message: 'Pick-up on Saturday',
      items: [{ itemId: loaf, titleSnapshot: 'Sourdough loaf', quantity: 2, unitPriceInCents: 1005, lineSubtotalInCents: 2010, platformFeeInCents: 50 }],
      payment: {
        provider: 'fake',
        method: 'PIX',
        status: 'PENDING',
        amountInCents: 2010,
        currency: 'BRL',
        pixCopyPasteCode: expect.any(String),
        clientSecret: null,
      },
    });
    const jams = body.checkouts.find((c: { storeId: string }) => c.storeId === store2);
    expect(jams).toMatchObject({ itemsSubtotalInCents: 2100, platformFeeInCents: 90, totalInCents: 2100 });
    expect(body.inquiries).toEqual([expect.objectContaining({ itemId: negotiable, storeId, fromUserId: buyer.id, status: 'OPEN' })]);
    expect(body.inquiries[0].message).toContain('Pick-up on Saturday');
    expect(body.inquiries[0].message).toContain('Three tiers');
    expect(body.summaries).toEqual(
      expect.arrayContaining([
        { storeId, checkoutItemCount: 1, inquiryCount: 1 },
        { storeId: store2, checkoutItemCount: 1, inquiryCount: 0 },
      ]),
    );
    expect(await cartLines(buyer)).toBe(0);
    // Snapshots: a later price change does not touch the checkout.
    await t.app.inject({ method: 'PATCH', url: `/api/v1/items/${loaf}`, headers: seller.headers, payload: { priceAmount: 99 } });
    const again = await t.app.inject({ method: 'GET', url: `/api/v1/checkouts/${bakery.id}`, headers: buyer.headers });
    expect(again.json().items[0].unitPriceInCents).toBe(1005);
    await t.app.inject({ method: 'PATCH', url: `/api/v1/items/${loaf}`, headers: seller.headers, payload: { priceAmount: '10.05' } });
  });

  it('400 CART_EMPTY for an empty cart (or none), writing nothing; 401 without a token', async () => {
    const buyer = await newUser(t);
    const before = await countRows(t, 'checkout');
    const res = await checkout(t, buyer, { territoryId: territory.id });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('CART_EMPTY');
    expect((await checkout(t, null, { territoryId: territory.id })).statusCode).toBe(401);
    expect(await countRows(t, 'checkout')).toBe(before);
  });

  it('400 for a bad payment method, message or Idempotency-Key, writing nothing and keeping the cart', async () => {
    const buyer = await buyerWithCart();
    const before = { checkouts: await countRows(t, 'checkout'), inquiries: await countRows(t, 'inquiry') };
    for (const [payload, headers] of [
      [{ territoryId: territory.id, paymentMethod: 'CASH' }, {}],
      [{ territoryId: territory.id, message: 'x'.repeat(2001) }, {}],
      [{ territoryId: 'nope' }, {}],
      [{ territoryId: territory.id }, { 'idempotency-key': 'x'.repeat(256) }],
    ] as const) {
      const res = await checkout(t, buyer, payload, headers);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect({ checkouts: await countRows(t, 'checkout'), inquiries: await countRows(t, 'inquiry') }).toEqual(before);
    expect(await cartLines(buyer)).toBe(3);
  });

  it('Idempotency-Key: the same body again answers the first answer (201, same checkouts); another body 409', async () => {
    const buyer = await buyerWithCart();
    const headers = { 'idempotency-key': `key-${buyer.id}` };
    const first = await checkout(t, buyer, { territoryId: territory.id }, headers);
    expect(first.statusCode).toBe(201);
    const second = await checkout(t, buyer, { territoryId: territory.id }, headers);
    expect(second.statusCode).toBe(201);
    expect(second.json()).toEqual(first.json());
    expect(await countRows(t, 'checkout', 'buyer_user_id = $1', [buyer.id])).toBe(2);
    const other = await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'CARD' }, headers);
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe('IDEMPOTENCY_KEY_REUSED');
    // The key is per user: another buyer may use the same one.
    expect((await checkout(t, await newUser(t), { territoryId: territory.id }, headers)).json().code).toBe('CART_EMPTY');
  });

  it('20 concurrent checkouts of one cart make exactly one set of checkouts (with and without a key)', async () => {
    for (const withKey of [false, true]) {
      const buyer = await buyerWithCart();
      const headers: Record<string, string> = withKey ? { 'idempotency-key': 'same' } : {};
      const answers = await Promise.all(Array.from({ length: 20 }, () => checkout(t, buyer, { territoryId: territory.id }, headers)));
      const statuses = answers.map((r) => r.statusCode).sort();
      if (withKey) {
        expect(statuses).toEqual(Array(20).fill(201));
        expect(new Set(answers.map((r) => r.body)).size).toBe(1);
      } else {
        expect(statuses).toEqual([201, ...Array(19).fill(400)]);
      }
      expect(await countRows(t, 'checkout', 'buyer_user_id = $1', [buyer.id])).toBe(2);
      expect(await countRows(t, 'inquiry', 'from_user_id = $1', [buyer.id])).toBe(1);
      expect(await cartLines(buyer)).toBe(0);
    }
  });

  it('CARD with tok_fake_declined: 402 PAYMENT_DECLINED, checkouts kept as PAYMENT_FAILED, no inquiry, the cart left as it was', async () => {
    const buyer = await buyerWithCart();
    const res = await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'CARD', paymentToken: 'tok_fake_declined' });
    expect(res.statusCode).toBe(402);
    expect(res.json().code).toBe('PAYMENT_DECLINED');
    const rows = await t.sql<{ status: string }>('select status from checkout where buyer_user_id = $1', [buyer.id]);
    expect(rows.map((r) => r.status)).toEqual(['PAYMENT_FAILED', 'PAYMENT_FAILED']);
    expect(await countRows(t, 'inquiry', 'from_user_id = $1', [buyer.id])).toBe(0);
    expect(await cartLines(buyer)).toBe(3);
    // A good card then goes through (the client secret is the buyer's).
    const ok = await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'card', paymentToken: 'tok_visa' });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().checkouts[0].payment).toMatchObject({ method: 'CARD', clientSecret: expect.any(String), pixCopyPasteCode: null });
  });
});

describe('checkout reads and cancel', () => {
  async function oneCheckout() {
    const buyer = await newUser(t);
    await addToCart(t, buyer, { itemId: loaf, quantity: 1 });
    const res = await checkout(t, buyer, { territoryId: territory.id });
    return { buyer, checkout: res.json().checkouts[0] as { id: string } };
  }

  it('GET /api/v1/checkouts/{id}: buyer, store owner and SYSTEM_ADMIN 200; others 404; 401 without a token', async () => {
    const { buyer, checkout: c } = await oneCheckout();
    const get = (user: TestUser | null, id = c.id) => t.app.inject({ method: 'GET', url: `/api/v1/checkouts/${id}`, headers: user?.headers ?? {} });
    expect((await get(buyer)).json()).toMatchObject({ id: c.id, status: 'AWAITING_PAYMENT' });
    expect((await get(seller)).statusCode).toBe(200);
    expect((await get(await newAdmin(t))).statusCode).toBe(200);
    expect((await get(await newUser(t))).statusCode).toBe(404);
    expect((await get(seller2)).statusCode).toBe(404);
    expect((await get(buyer, UNKNOWN_ID)).statusCode).toBe(404);
    expect((await get(null)).statusCode).toBe(401);
  });

  it('GET /api/v1/checkouts/me (+paged) and GET /api/v1/stores/{storeId}/orders (owner; others 403)', async () => {
    const { buyer, checkout: c } = await oneCheckout();
    const mine = await t.app.inject({ method: 'GET', url: '/api/v1/checkouts/me', headers: buyer.headers });
    expect(mine.json().map((x: { id: string }) => x.id)).toEqual([c.id]);
    const paged = await t.app.inject({ method: 'GET', url: '/api/v1/checkouts/me/paged?pageSize=1', headers: buyer.headers });
    expect(paged.json()).toMatchObject({ totalCount: 1, items: [{ id: c.id }] });
    const orders = await t.app.inject({ method: 'GET', url: `/api/v1/stores/${storeId}/orders`, headers: seller.headers });
    expect(orders.statusCode).toBe(200);
    expect(orders.json().map((x: { id: string }) => x.id)).toContain(c.id);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/stores/${storeId}/orders`, headers: buyer.headers })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/stores/${UNKNOWN_ID}/orders`, headers: seller.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/checkouts/me' })).statusCode).toBe(401);
  });

  it('POST /api/v1/checkouts/{id}/cancel: the buyer (200 CANCELED, audited), again 409; the seller 403; others 404', async () => {
    const { buyer, checkout: c } = await oneCheckout();
    const cancel = (user: TestUser | null) => t.app.inject({ method: 'POST', url: `/api/v1/checkouts/${c.id}/cancel`, headers: user?.headers ?? {} });
    expect((await cancel(null)).statusCode).toBe(401);
    expect((await cancel(seller)).statusCode).toBe(403);
    expect((await cancel(await newUser(t))).statusCode).toBe(404);
    const res = await cancel(buyer);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'CANCELED', canceledAtUtc: expect.any(String) });
    expect(await countRows(t, 'audit_entry', `action = 'checkout.canceled' and subject_id = $1`, [c.id])).toBe(1);
    const again = await cancel(buyer);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('CHECKOUT_NOT_AWAITING_PAYMENT');
  });
});
