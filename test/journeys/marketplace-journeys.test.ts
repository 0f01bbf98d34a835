import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newResident, newTerritory, newUser, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { checkout as checkoutV1, listItem, openStore, sendWebhook } from '../marketplace/money-helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { clientToken, expectV2Error, v2 } from './helpers.js';

/** The marketplace journeys (v2): search, add to cart, checkout. */
let t: TestApp;
let territory: TestTerritory;
let seller: TestUser;
let seller2: TestUser;
let storeId: string;
let store2: string;
let loaf: string;
let jam: string;
let client: string;
/** The client application's id (the `sub` of its token), as audit rows record it. */
let clientApplicationId: string;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  const admin = await newAdmin(t);
  client = await clientToken(t, admin);
  clientApplicationId = JSON.parse(Buffer.from(client.split('.')[1]!, 'base64url').toString()).sub;
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  seller = await newResident(t, territory, { verified: true });
  storeId = await openStore(t, seller, territory);
  loaf = await listItem(t, seller, storeId, { priceAmount: '10.05', category: 'Bread' });
  await listItem(t, seller, storeId, { title: 'Croissant', priceAmount: 4, category: 'Pastry' });
  seller2 = await newResident(t, territory, { verified: true });
  store2 = await openStore(t, seller2, territory);
  jam = await listItem(t, seller2, store2, { title: 'Jam', type: 'SERVICE', priceAmount: 7 });
});
afterAll(() => t.close());

const shippingAddress = { street: 'Rua das Flores', number: '12', city: 'São Paulo', state: 'SP', zipCode: '01000-000' };
const lines = (user: TestUser) => countRows(t, 'cart_item', 'cart_id in (select id from cart where user_id = $1)', [user.id]);

describe('GET /marketplace/search', () => {
  it('items matching the query, the stores, facets and pagination (cached per user)', async () => {
    const user = await newUser(t);
    const res = await v2(t, 'GET', `/marketplace/search?territoryId=${territory.id}&query=loaf`, { client, user });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-cache']).toBe('MISS');
    const body = res.json();
    expect(body.items.map((i: { id: string }) => i.id)).toEqual([loaf]);
    expect(body.stores.map((s: { id: string }) => s.id).sort()).toEqual([storeId, store2].sort());
    expect(body.filters).toEqual({ categories: ['Bread', 'Pastry'], types: ['PRODUCT', 'SERVICE'], priceRange: { minInCents: 400, maxInCents: 1005 } });
    expect(body.pagination).toMatchObject({ pageNumber: 1, totalCount: 1 });
    expect(body.suggestions).toEqual([]);
    const typed = await v2(t, 'GET', `/marketplace/search?territoryId=${territory.id}&type=service`, { client, user });
    expect(typed.json().items.map((i: { id: string }) => i.id)).toEqual([jam]);
    expect((await v2(t, 'GET', `/marketplace/search?territoryId=${territory.id}&query=loaf`, { client, user })).headers['x-cache']).toBe('HIT');
    const none = await v2(t, 'GET', `/marketplace/search?territoryId=${territory.id}&query=nothing-like-this`, { client, user });
    expect(none.json().suggestions).toEqual([expect.objectContaining({ action: 'CLEAR_FILTERS' })]);
  });

  it('400 for bad input, 404 for an unknown territory', async () => {
    const user = await newUser(t);
    expectV2Error(await v2(t, 'GET', `/marketplace/search?territoryId=${territory.id}&type=CAR`, { client, user }), 400, 'INVALID_REQUEST');
    expectV2Error(await v2(t, 'GET', `/marketplace/search?territoryId=${territory.id}&pageNumber=0`, { client, user }), 400, 'INVALID_REQUEST');
    expectV2Error(await v2(t, 'GET', `/marketplace/search?territoryId=${UNKNOWN_ID}`, { client, user }), 404, 'NOT_FOUND');
  });
});

describe('POST /marketplace/add-to-cart', () => {
  it('answers the cart, its total and suggestions; 400 with nothing written; 404 for an unknown item', async () => {
    const user = await newUser(t);
    const res = await v2(t, 'POST', '/marketplace/add-to-cart', { client, user, payload: { territoryId: territory.id, itemId: loaf, quantity: 2 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      cart: { territoryId: territory.id, items: [{ itemId: loaf, quantity: 2, lineSubtotalInCents: 2010 }], subtotalInCents: 2010 },
      total: { subtotalInCents: 2010, currency: 'BRL' },
      suggestions: expect.arrayContaining([expect.objectContaining({ action: 'CHECKOUT' })]),
    });
    for (const payload of [
      { territoryId: territory.id, itemId: jam, quantity: 0 },
      { territoryId: territory.id, itemId: jam },
      { territoryId: 'x', itemId: jam, quantity: 1 },
    ]) {
      expectV2Error(await v2(t, 'POST', '/marketplace/add-to-cart', { client, user, payload }), 400, 'INVALID_REQUEST');
    }
    expect(await lines(user)).toBe(1);
    expectV2Error(
      await v2(t, 'POST', '/marketplace/add-to-cart', { client, user, payload: { territoryId: territory.id, itemId: UNKNOWN_ID, quantity: 1 } }),
      404,
      'NOT_FOUND',
    );
  });
});

describe('GET /territories/{territoryId}/seller-balance', () => {
  it("the user's seller balance (as v1 answers it) after a paid sale; 404 before one; 400 and 404 for bad ids", async () => {
    const buyer = await newUser(t);
    await v2(t, 'POST', '/marketplace/add-to-cart', { client, user: buyer, payload: { territoryId: territory.id, itemId: jam, quantity: 2 } });
    const order = (await checkoutV1(t, buyer, { territoryId: territory.id })).json().checkouts[0];
    const paid = await sendWebhook(t, {
      id: `evt_${order.id}`,
      type: 'payment.succeeded',
      data: { paymentId: order.payment.id, checkoutId: order.id, amountInCents: order.totalInCents, currency: order.currency },
    });
    expect(paid.statusCode, paid.body).toBe(200);
    const url = `/territories/${territory.id}/seller-balance`;
    const res = await v2(t, 'GET', url, { client, user: seller2 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-cache']).toBe('MISS');
    const v1 = await t.app.inject({ method: 'GET', url: `/api/v1/territories/${territory.id}/seller-balance/me`, headers: seller2.headers });
    expect(res.json()).toEqual(v1.json());
    expect(res.json()).toMatchObject({ territoryId: territory.id, sellerUserId: seller2.id, pendingAmountInCents: expect.any(Number), currency: 'BRL' });
    expect((await v2(t, 'GET', url, { client, user: seller2 })).headers['x-cache']).toBe('HIT');
    // Someone without a sale here, an unknown territory, a malformed id.
    expectV2Error(await v2(t, 'GET', url, { client, user: await newUser(t) }), 404, 'NOT_FOUND');
    expectV2Error(await v2(t, 'GET', `/territories/${UNKNOWN_ID}/seller-balance`, { client, user: seller2 }), 404, 'NOT_FOUND');
    expectV2Error(await v2(t, 'GET', '/territories/not-a-uuid/seller-balance', { client, user: seller2 }), 400, 'INVALID_REQUEST');
  });

  it('401 without a client token or X-User-Token, 403 without journeys:read', async () => {
    const url = `/territories/${territory.id}/seller-balance`;
    expectV2Error(await v2(t, 'GET', url, { user: seller }), 401, 'UNAUTHORIZED');
    expectV2Error(await v2(t, 'GET', url, { client }), 401, 'UNAUTHORIZED');
    const writeOnly = await clientToken(t, await newAdmin(t), ['journeys:write']);
    expectV2Error(await v2(t, 'GET', url, { client: writeOnly, user: seller }), 403, 'FORBIDDEN');
  });
});

describe('POST /marketplace/checkout', () => {
  it('201: the first order, its payment and a confirmation; the other stores as additionalOrders; the cart emptied', async () => {
    const user = await newUser(t);
    for (const itemId of [loaf, jam]) {
      expect((await v2(t, 'POST', '/marketplace/add-to-cart', { client, user, payload: { territoryId: territory.id, itemId, quantity: 1 } })).statusCode).toBe(
        200,
      );
    }
    const res = await v2(t, 'POST', '/marketplace/checkout', { client, user, payload: { territoryId: territory.id, paymentMethod: 'PIX', shippingAddress } });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body.order).toMatchObject({ buyerUserId: user.id, status: 'AWAITING_PAYMENT', paymentMethod: 'PIX' });
    expect(body.payment).toMatchObject({ method: 'PIX', status: 'PENDING', pixCopyPasteCode: expect.any(String) });
    expect(body.confirmation).toEqual({ orderId: body.order.id, confirmationNumber: expect.stringMatching(/^ARA-[0-9A-F]{10}$/) });
    expect(body.additionalOrders).toHaveLength(1);
    expect(new Set([body.order.storeId, body.additionalOrders[0].storeId])).toEqual(new Set([storeId, store2]));
    expect(await lines(user)).toBe(0);
    // Writes are never cached.
    expect(res.headers['x-cache']).toBeUndefined();
  });

  it('stores the shipping address on every checkout of the order (defaults: country BR, no complement)', async () => {
    const user = await newUser(t);
    for (const itemId of [loaf, jam]) {
      await v2(t, 'POST', '/marketplace/add-to-cart', { client, user, payload: { territoryId: territory.id, itemId, quantity: 1 } });
    }
    const address = { ...shippingAddress, neighborhood: 'Pinheiros', country: 'br' };
    const res = await v2(t, 'POST', '/marketplace/checkout', {
      client,
      user,
      payload: { territoryId: territory.id, paymentMethod: 'PIX', shippingAddress: address },
    });
    expect(res.statusCode, res.body).toBe(201);
    const rows = await t.sql<{ shipping_address: unknown }>('select shipping_address from checkout where buyer_user_id = $1', [user.id]);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.shipping_address).toEqual({
        street: 'Rua das Flores',
        number: '12',
        complement: null,
        neighborhood: 'Pinheiros',
        city: 'São Paulo',
        state: 'SP',
        zipCode: '01000-000',
        country: 'BR',
      });
    }
    // A v1 checkout has none.
    const v1Buyer = await newUser(t);
    await v2(t, 'POST', '/marketplace/add-to-cart', { client, user: v1Buyer, payload: { territoryId: territory.id, itemId: loaf, quantity: 1 } });
    expect((await checkoutV1(t, v1Buyer, { territoryId: territory.id })).statusCode).toBe(201);
    const [v1Row] = await t.sql<{ shipping_address: unknown }>('select shipping_address from checkout where buyer_user_id = $1', [v1Buyer.id]);
    expect(v1Row!.shipping_address).toBeNull();
  });

  it('400 for bad input with nothing written (cart kept), 400 for an empty cart, 404 for an unknown territory', async () => {
    const user = await newUser(t);
    await v2(t, 'POST', '/marketplace/add-to-cart', { client, user, payload: { territoryId: territory.id, itemId: loaf, quantity: 1 } });
    const before = await countRows(t, 'checkout', 'buyer_user_id = $1', [user.id]);
    for (const payload of [
      { territoryId: territory.id, paymentMethod: 'PIX' },
      { territoryId: territory.id, paymentMethod: 'PIX', shippingAddress: { ...shippingAddress, street: '' } },
      { territoryId: territory.id, paymentMethod: 'GOLD', shippingAddress },
      { territoryId: territory.id, paymentMethod: 'PIX', shippingAddress: { ...shippingAddress, country: 'Brazil' } },
    ]) {
      expectV2Error(await v2(t, 'POST', '/marketplace/checkout', { client, user, payload }), 400, 'INVALID_REQUEST');
    }
    expect(await countRows(t, 'checkout', 'buyer_user_id = $1', [user.id])).toBe(before);
    expect(await lines(user)).toBe(1);
    const empty = await newUser(t);
    expectV2Error(
      await v2(t, 'POST', '/marketplace/checkout', { client, user: empty, payload: { territoryId: territory.id, shippingAddress } }),
      400,
      'INVALID_REQUEST',
    );
    expectV2Error(await v2(t, 'POST', '/marketplace/checkout', { client, user, payload: { territoryId: UNKNOWN_ID, shippingAddress } }), 404, 'NOT_FOUND');
  });

  it('402 PAYMENT_REQUIRED when the gateway declines the card at once', async () => {
    const user = await newUser(t);
    await v2(t, 'POST', '/marketplace/add-to-cart', { client, user, payload: { territoryId: territory.id, itemId: loaf, quantity: 1 } });
    const res = await v2(t, 'POST', '/marketplace/checkout', {
      client,
      user,
      payload: { territoryId: territory.id, paymentMethod: 'CARD', paymentToken: 'tok_fake_declined', shippingAddress },
    });
    expectV2Error(res, 402, 'PAYMENT_REQUIRED');
    expect(await lines(user)).toBe(1);
  });

  it('the audit rows the journey writes record its client application; the same v1 call records none', async () => {
    const declined = async (via: 'v1' | 'v2') => {
      const user = await newUser(t);
      await v2(t, 'POST', '/marketplace/add-to-cart', { client, user, payload: { territoryId: territory.id, itemId: loaf, quantity: 1 } });
      const payload = { territoryId: territory.id, paymentMethod: 'CARD', paymentToken: 'tok_fake_declined', shippingAddress };
      const res = via === 'v2' ? await v2(t, 'POST', '/marketplace/checkout', { client, user, payload }) : await checkoutV1(t, user, payload);
      expect(res.statusCode).toBe(402);
      return t.sql<{ client_application_id: string | null }>(
        `select client_application_id from audit_entry where actor_user_id = $1 and action = 'checkout.payment.declined'`,
        [user.id],
      );
    };
    expect(await declined('v2')).toEqual([{ client_application_id: clientApplicationId }]);
    expect(await declined('v1')).toEqual([{ client_application_id: null }]);
  });
});
