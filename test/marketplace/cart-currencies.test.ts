/**
 * The cart never adds amounts of different currencies. A cart holds one currency when lines are added, but the seller
 * may re-price an item already in it in another currency: `subtotalInCents` then counts the lines in the cart's
 * `currency` only, and `subtotals` carries one sum per currency, the same split the checkout charges.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newResident, newTerritory, newUser, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { addToCart, checkout, listItem, openStore } from './money-helpers.js';

let t: TestApp;
let territory: TestTerritory;
let seller: TestUser;
let storeId: string;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  seller = await newResident(t, territory, { verified: true });
  storeId = await openStore(t, seller, territory);
});
afterAll(() => t.close());

const getCart = async (user: TestUser) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/cart?territoryId=${territory.id}`, headers: user.headers });
  expect(res.statusCode).toBe(200);
  return res.json();
};
const patchItem = (itemId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'PATCH', url: `/api/v1/items/${itemId}`, headers: seller.headers, payload });

describe('GET /api/v1/cart with lines in more than one currency', () => {
  it('an empty cart: subtotal 0 BRL, no subtotals; one currency: one subtotal equal to subtotalInCents', async () => {
    const buyer = await newUser(t);
    expect(await getCart(buyer)).toMatchObject({ items: [], subtotalInCents: 0, currency: 'BRL', subtotals: [] });
    const itemId = await listItem(t, seller, storeId, { priceAmount: '3.25', currency: 'EUR' });
    expect((await addToCart(t, buyer, { itemId, quantity: 2 })).statusCode).toBe(201);
    expect(await getCart(buyer)).toMatchObject({ subtotalInCents: 650, currency: 'EUR', subtotals: [{ currency: 'EUR', subtotalInCents: 650 }] });
  });

  it('a line re-priced in USD after it was added: BRL and USD summed apart, as the checkout charges them', async () => {
    const bread = await listItem(t, seller, storeId, { priceAmount: '10.00', title: 'Bread' });
    const jam = await listItem(t, seller, storeId, { priceAmount: '5.00', title: 'Jam' });
    const buyer = await newUser(t);
    expect((await addToCart(t, buyer, { itemId: bread, quantity: 1 })).statusCode).toBe(201);
    expect((await addToCart(t, buyer, { itemId: jam, quantity: 3 })).statusCode).toBe(201);
    const repriced = await patchItem(jam, { currency: 'usd' });
    expect(repriced.statusCode).toBe(200);
    expect(repriced.json().currency).toBe('USD');

    const cart = await getCart(buyer);
    expect(cart).toMatchObject({
      territoryId: territory.id,
      subtotalInCents: 1000,
      currency: 'BRL',
      subtotals: [
        { currency: 'BRL', subtotalInCents: 1000 },
        { currency: 'USD', subtotalInCents: 1500 },
      ],
    });
    expect(
      cart.items.map((l: { itemId: string; item: { currency: string }; lineSubtotalInCents: number; isPurchasable: boolean }) => [
        l.itemId,
        l.item.currency,
        l.lineSubtotalInCents,
        l.isPurchasable,
      ]),
    ).toEqual([
      [bread, 'BRL', 1000, true],
      [jam, 'USD', 1500, true],
    ]);

    // The cart keeps refusing a line that adds to the mix, and writes nothing.
    const more = await listItem(t, seller, storeId, { priceAmount: '1.00', title: 'Butter' });
    const lines = await countRows(t, 'cart_item', 'cart_id = $1', [cart.cartId]);
    const refused = await addToCart(t, buyer, { itemId: more, quantity: 1 });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('CART_CURRENCY_MISMATCH');
    expect(await countRows(t, 'cart_item', 'cart_id = $1', [cart.cartId])).toBe(lines);

    // The checkout charges exactly the subtotals: one checkout per currency.
    const res = await checkout(t, buyer, { territoryId: territory.id });
    expect(res.statusCode).toBe(201);
    const charged = res.json().checkouts.map((c: { currency: string; totalInCents: number }) => ({ currency: c.currency, subtotalInCents: c.totalInCents }));
    expect(charged).toEqual(cart.subtotals);
  });

  it('a line not purchasable keeps its currency in subtotals with nothing counted; an archived first line still names the currency', async () => {
    const tea = await listItem(t, seller, storeId, { priceAmount: '4.00', title: 'Tea' });
    const cup = await listItem(t, seller, storeId, { priceAmount: '7.00', title: 'Cup' });
    const buyer = await newUser(t);
    expect((await addToCart(t, buyer, { itemId: tea, quantity: 1 })).statusCode).toBe(201);
    expect((await addToCart(t, buyer, { itemId: cup, quantity: 2 })).statusCode).toBe(201);
    expect((await patchItem(cup, { currency: 'USD' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/items/${tea}/archive`, headers: seller.headers })).statusCode).toBe(200);
    expect(await getCart(buyer)).toMatchObject({
      subtotalInCents: 0,
      currency: 'BRL',
      subtotals: [
        { currency: 'BRL', subtotalInCents: 0 },
        { currency: 'USD', subtotalInCents: 1400 },
      ],
    });
  });
});
