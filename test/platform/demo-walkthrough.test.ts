import { afterAll, beforeAll, expect, it } from 'vitest';
import { seedDemoData } from '../../src/db/seed/demo.js';
import { socialLogin } from '../auth/login.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * README's "Sell and buy" walkthrough on the demo data, as a new user runs it after `npm start`: the demo resident
 * (who owns the store) lists an item, the demo visitor buys two and pays through the fake gateway, the seller sees
 * the order. The demo resident lost the right to list when listing came to need a verified resident; nothing failed
 * but the walkthrough.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  await seedDemoData(t.deps.orm.em.fork(), t.deps.config);
});
afterAll(() => t.close());

const demoLogin = async (externalId: string) => {
  const res = await socialLogin(t, { authProvider: 'demo', externalId, displayName: `Demo ${externalId}` });
  expect(res.statusCode, res.body).toBe(200);
  return { authorization: `Bearer ${(res.json() as { token: string }).token}` };
};

it('the demo resident lists an item in their store, the demo visitor buys and pays, the seller sees the order', async () => {
  const [seller, buyer] = [await demoLogin('resident'), await demoLogin('visitor')];
  const territories = (await t.app.inject({ method: 'GET', url: '/api/v1/territories?take=5' })).json() as { id: string; name: string }[];
  const territoryId = territories.find((x) => x.name === 'Vila Madalena')!.id;
  const stores = (await t.app.inject({ method: 'GET', url: `/api/v1/stores?territoryId=${territoryId}`, headers: seller })).json() as { id: string }[];
  const storeId = stores[0]!.id;

  const item = await t.app.inject({
    method: 'POST',
    url: '/api/v1/items',
    headers: seller,
    payload: { storeId, type: 'PRODUCT', title: 'Sourdough', pricingType: 'FIXED', priceAmount: 12.5 },
  });
  expect(item.statusCode, item.body).toBe(201);
  const cart = await t.app.inject({ method: 'POST', url: '/api/v1/cart/items', headers: buyer, payload: { itemId: item.json().id, quantity: 2 } });
  expect(cart.statusCode, cart.body).toBe(201);
  const checkout = await t.app.inject({
    method: 'POST',
    url: '/api/v1/cart/checkout',
    headers: { ...buyer, 'idempotency-key': 'my-first-order' },
    payload: { territoryId, paymentMethod: 'PIX' },
  });
  expect(checkout.statusCode, checkout.body).toBe(201);
  const checkoutId = checkout.json().checkouts[0].id as string;
  const paid = await t.app.inject({
    method: 'POST',
    url: `/api/v1/checkouts/${checkoutId}/simulate-payment`,
    headers: buyer,
    payload: { outcome: 'SUCCEEDED' },
  });
  expect(paid.statusCode, paid.body).toBeLessThan(300);
  const orders = await t.app.inject({ method: 'GET', url: `/api/v1/stores/${storeId}/orders`, headers: seller });
  expect(orders.statusCode).toBe(200);
  expect(JSON.stringify(orders.json())).toContain(checkoutId);
});
