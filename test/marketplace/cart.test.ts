import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newResident, newTerritory, newUser, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { addToCart, checkout, listItem, openStore } from './money-helpers.js';

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
  itemId = await listItem(t, seller, storeId);
});
afterAll(() => t.close());

const getCart = (user: TestUser | null, territoryId = territory.id) =>
  t.app.inject({ method: 'GET', url: `/api/v1/cart?territoryId=${territoryId}`, headers: user?.headers ?? {} });

describe('POST /api/v1/cart/items and POST /api/v1/cart', () => {
  it('adds a line (201 with the line), the same item again replaces quantity and notes (200)', async () => {
    const buyer = await newUser(t);
    const first = await addToCart(t, buyer, { territoryId: territory.id, itemId, quantity: 2, notes: 'Sliced' });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      id: expect.any(String),
      itemId,
      quantity: 2,
      notes: 'Sliced',
      item: { id: itemId, title: 'Sourdough loaf', type: 'PRODUCT', pricingType: 'FIXED', priceInCents: 1200, currency: 'BRL', status: 'ACTIVE' },
      store: { id: storeId, displayName: 'Bakery', status: 'ACTIVE', paymentsEnabled: true },
      isPurchasable: true,
      lineSubtotalInCents: 2400,
    });
    const again = await addToCart(t, buyer, { territoryId: territory.id, itemId, quantity: 3 }, '/api/v1/cart');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ id: first.json().id, quantity: 3, notes: null, lineSubtotalInCents: 3600 });
    expect(await countRows(t, 'cart_item', 'item_id = $1', [itemId])).toBe(1);
  });

  it('a NEGOTIABLE item is not purchasable; an archived one cannot be added (409); own item 400', async () => {
    const buyer = await newUser(t);
    const negotiable = await listItem(t, seller, storeId, { title: 'Cake to order', pricingType: 'NEGOTIABLE', priceAmount: null });
    const res = await addToCart(t, buyer, { itemId: negotiable, quantity: 1 });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ isPurchasable: false, lineSubtotalInCents: null });
    const archived = await listItem(t, seller, storeId, { title: 'Old bread' });
    await t.app.inject({ method: 'POST', url: `/api/v1/items/${archived}/archive`, headers: seller.headers });
    expect((await addToCart(t, buyer, { itemId: archived, quantity: 1 })).json().code).toBe('ITEM_ARCHIVED');
    const own = await addToCart(t, seller, { itemId, quantity: 1 });
    expect(own.statusCode).toBe(400);
    expect(own.json().code).toBe('CANNOT_BUY_OWN_ITEM');
  });

  it('401 without a token; 404 for an unknown item; 404 MARKETPLACE_DISABLED where the flag is off', async () => {
    expect((await addToCart(t, null, { itemId, quantity: 1 })).statusCode).toBe(401);
    expect((await addToCart(t, await newUser(t), { itemId: UNKNOWN_ID, quantity: 1 })).statusCode).toBe(404);
    const closed = await newTerritory(t);
    const closedSeller = await newResident(t, closed, { verified: true });
    await t.sql(`update territory set enabled_flags = '{MARKETPLACEENABLED}' where id = $1`, [closed.id]);
    const closedItem = await listItem(t, closedSeller, await openStore(t, closedSeller, closed));
    await t.sql(`update territory set enabled_flags = '{}' where id = $1`, [closed.id]);
    const res = await addToCart(t, await newUser(t), { itemId: closedItem, quantity: 1 });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('MARKETPLACE_DISABLED');
  });

  it('400 for a quantity out of 1..999, a non-integer, a missing item or another territory, writing nothing', async () => {
    const buyer = await newUser(t);
    const before = await countRows(t, 'cart_item');
    const other = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    for (const payload of [
      { itemId, quantity: 0 },
      { itemId, quantity: 1000 },
      { itemId, quantity: 1.5 },
      { itemId, quantity: '2' },
      { quantity: 1 },
      { itemId, quantity: 1, notes: 'x'.repeat(501) },
      { itemId, quantity: 1, territoryId: other.id },
    ]) {
      const res = await addToCart(t, buyer, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect(await countRows(t, 'cart_item')).toBe(before);
  });
});

describe('a full cart', () => {
  it('holds at most 50 different items: the 51st is a 400 CART_FULL that writes nothing, also when two race for the last place; 50 of the dearest at the largest quantity still check out to an exact total', async () => {
    const buyer = await newUser(t);
    const dear: string[] = [];
    for (let i = 0; i < 52; i++) dear.push(await listItem(t, seller, storeId, { title: `Dear thing ${i}`, priceAmount: '1000000000' }));
    for (const id of dear.slice(0, 49)) expect((await addToCart(t, buyer, { itemId: id, quantity: 999 })).statusCode).toBe(201);
    const raced = await Promise.all([addToCart(t, buyer, { itemId: dear[49], quantity: 999 }), addToCart(t, buyer, { itemId: dear[50], quantity: 999 })]);
    expect(raced.map((res) => res.statusCode).sort()).toEqual([201, 400]);
    const lines = () => countRows(t, 'cart_item l join cart c on c.id = l.cart_id', 'c.user_id = $1', [buyer.id]);
    expect(await lines()).toBe(50);
    const refused = await addToCart(t, buyer, { itemId: dear[51], quantity: 1 });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'CART_FULL', detail: 'A cart holds at most 50 different items; check out or remove one first.' });
    expect(await lines()).toBe(50);
    // An item already in it is replaced as before.
    expect((await addToCart(t, buyer, { itemId: dear[0], quantity: 999 })).statusCode).toBe(200);
    const total = 50 * 999 * 100_000_000_000;
    expect(total).toBeLessThan(Number.MAX_SAFE_INTEGER);
    const cart = await getCart(buyer);
    expect(cart.statusCode).toBe(200);
    expect(cart.json()).toMatchObject({ subtotalInCents: total });
    const res = await checkout(t, buyer, { territoryId: territory.id });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().checkouts.map((c: { totalInCents: number }) => c.totalInCents)).toEqual([total]);
  });
});

describe('GET /api/v1/cart', () => {
  it("answers the caller's cart with the lines, the purchasable subtotal and the currency", async () => {
    const buyer = await newUser(t);
    const second = await listItem(t, seller, storeId, { title: 'Baguette', priceAmount: '3.35' });
    await addToCart(t, buyer, { itemId, quantity: 2 });
    await addToCart(t, buyer, { itemId: second, quantity: 3 });
    const res = await getCart(buyer);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ cartId: expect.any(String), territoryId: territory.id, subtotalInCents: 2400 + 1005, currency: 'BRL' });
    expect(body.items.map((l: { itemId: string }) => l.itemId)).toEqual([itemId, second]);
    // An empty cart for someone else; never another's lines.
    const other = await getCart(await newUser(t));
    expect(other.json()).toMatchObject({ items: [], subtotalInCents: 0 });
  });

  it('401 without a token; 400 for a malformed territoryId; 404 for an unknown territory', async () => {
    expect((await getCart(null)).statusCode).toBe(401);
    expect((await getCart(await newUser(t), 'nope')).statusCode).toBe(400);
    expect((await getCart(await newUser(t), UNKNOWN_ID)).statusCode).toBe(404);
  });
});

describe('PATCH|PUT /api/v1/cart/items/{id}, PUT /api/v1/cart/{itemId}, DELETE /api/v1/cart/{itemId}', () => {
  it('update quantity and notes by line id or by catalogue item id (200); remove (204)', async () => {
    const buyer = await newUser(t);
    const line = (await addToCart(t, buyer, { itemId, quantity: 1, notes: 'Hi' })).json();
    const patch = await t.app.inject({ method: 'PATCH', url: `/api/v1/cart/items/${line.id}`, headers: buyer.headers, payload: { quantity: 4 } });
    expect(patch.statusCode).toBe(200);
    expect(patch.json()).toMatchObject({ id: line.id, quantity: 4, notes: 'Hi', lineSubtotalInCents: 4800 });
    const put = await t.app.inject({ method: 'PUT', url: `/api/v1/cart/items/${line.id}`, headers: buyer.headers, payload: { quantity: 5, notes: null } });
    expect(put.json()).toMatchObject({ quantity: 5, notes: null });
    const byItem = await t.app.inject({ method: 'PUT', url: `/api/v1/cart/${itemId}`, headers: buyer.headers, payload: { quantity: 6, notes: 'Warm' } });
    expect(byItem.json()).toMatchObject({ id: line.id, quantity: 6, notes: 'Warm' });
    const del = await t.app.inject({ method: 'DELETE', url: `/api/v1/cart/${line.id}`, headers: buyer.headers });
    expect(del.statusCode).toBe(204);
    expect(await countRows(t, 'cart_item', 'id = $1', [line.id])).toBe(0);
    // Gone: 404.
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/cart/${line.id}`, headers: buyer.headers })).statusCode).toBe(404);
  });

  it("someone else's line is 404 (update and delete), nothing changed; 401 without a token; 400 for bad quantities", async () => {
    const buyer = await newUser(t);
    const line = (await addToCart(t, buyer, { itemId, quantity: 1 })).json();
    const stranger = await newUser(t);
    expect(
      (await t.app.inject({ method: 'PATCH', url: `/api/v1/cart/items/${line.id}`, headers: stranger.headers, payload: { quantity: 9 } })).statusCode,
    ).toBe(404);
    expect((await t.app.inject({ method: 'PUT', url: `/api/v1/cart/${itemId}`, headers: stranger.headers, payload: { quantity: 9 } })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/cart/${line.id}`, headers: stranger.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'PATCH', url: `/api/v1/cart/items/${line.id}`, payload: { quantity: 9 } })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/cart/${line.id}` })).statusCode).toBe(401);
    for (const quantity of [0, 1000, 2.5, null]) {
      const res = await t.app.inject({ method: 'PATCH', url: `/api/v1/cart/items/${line.id}`, headers: buyer.headers, payload: { quantity } });
      expect(res.statusCode).toBe(400);
    }
    const [row] = await t.sql<{ quantity: number }>('select quantity from cart_item where id = $1', [line.id]);
    expect(row!.quantity).toBe(1);
  });

  it('an item archived after it was added stays in the cart as not purchasable', async () => {
    const buyer = await newUser(t);
    const later = await listItem(t, seller, storeId, { title: 'Rye' });
    await addToCart(t, buyer, { itemId: later, quantity: 1 });
    await t.app.inject({ method: 'POST', url: `/api/v1/items/${later}/archive`, headers: seller.headers });
    const line = (await getCart(buyer)).json().items.find((l: { itemId: string }) => l.itemId === later);
    expect(line).toMatchObject({ isPurchasable: false, item: { status: 'ARCHIVED' } });
  });
});
