import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitDuring, countRows, newAdmin, newResident, newTerritory, type TestTerritory, type TestUser } from '../factories/index.js';
import { addToCart, checkout, listItem, openStore } from '../marketplace/money-helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/** The checkout honours the territory's payment methods (DESIGN section 13 "Checkout"). */
let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
});
afterAll(() => t.close());

async function cartReady(territory: TestTerritory) {
  const seller = await newResident(t, territory, { verified: true });
  const itemId = await listItem(t, seller, await openStore(t, seller, territory));
  const buyer = await newResident(t, territory);
  expect((await addToCart(t, buyer, { itemId, quantity: 1 })).statusCode).toBe(201);
  return buyer;
}

const setMethods = (territory: TestTerritory, methods: string[]) =>
  t.app.inject({ method: 'PUT', url: `/api/v1/territories/${territory.id}/payment-methods`, headers: admin.headers, payload: { methods } });

describe('POST /api/v1/cart/checkout and the payment methods', () => {
  it('a territory that never configured its methods accepts any of them', async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const buyer = await cartReady(territory);
    const res = await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'BOLETO' });
    expect(res.statusCode).toBe(201);
    expect(res.json().checkouts[0].paymentMethod).toBe('BOLETO');
  });

  it('a method the territory has not enabled: 400 PAYMENT_METHOD_NOT_ENABLED, nothing written, the cart kept', async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    expect((await setMethods(territory, ['PIX', 'CARD'])).statusCode).toBe(200);
    const buyer = await cartReady(territory);
    const before = await countRows(t, 'checkout');
    const res = await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'BOLETO' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'PAYMENT_METHOD_NOT_ENABLED', detail: expect.stringContaining('BOLETO') });
    expect(await countRows(t, 'checkout')).toBe(before);
    expect(await countRows(t, 'cart_item c join cart k on k.id = c.cart_id', 'k.user_id = $1', [buyer.id])).toBe(1);

    // The default method (PIX) is enabled: the same cart checks out.
    const ok = await checkout(t, buyer, { territoryId: territory.id });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().checkouts[0].paymentMethod).toBe('PIX');
  });

  it('the default PIX is refused where only CARD and BOLETO are enabled', async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    expect((await setMethods(territory, ['CARD', 'BOLETO'])).statusCode).toBe(200);
    const buyer = await cartReady(territory);
    const res = await checkout(t, buyer, { territoryId: territory.id });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('PAYMENT_METHOD_NOT_ENABLED');
    expect((await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'boleto' })).statusCode).toBe(201);
  });

  it('a retried checkout (same Idempotency-Key and body) answers its checkout again after the method was turned off', async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const buyer = await cartReady(territory);
    const key = { 'idempotency-key': 'methods-replay' };
    const first = await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'PIX' }, key);
    expect(first.statusCode).toBe(201);
    expect((await setMethods(territory, ['CARD'])).statusCode).toBe(200);
    const replay = await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'PIX' }, key);
    expect(replay.statusCode).toBe(201);
    expect(replay.json()).toEqual(first.json());
    // A new attempt is refused.
    expect((await checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'PIX' })).json().code).toBe('PAYMENT_METHOD_NOT_ENABLED');
  });

  it('a change of the methods committed while a checkout waited for it is the one the checkout applies', async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    expect((await setMethods(territory, ['PIX', 'CARD'])).statusCode).toBe(200);
    const buyer = await cartReady(territory);
    // A fiscal write in progress (it holds the territory's fiscal lock, as PUT /payment-methods does) turns PIX off
    // and commits once the checkout waits for the lock.
    const res = await commitDuring(
      t,
      {
        sql: `with locked as (select pg_advisory_xact_lock(hashtextextended('fiscal:' || $1::text, 0)))
              update territory_payment_methods set methods = '{CARD}' where territory_id = $1::uuid and exists (select 1 from locked)`,
        params: [territory.id],
      },
      () => checkout(t, buyer, { territoryId: territory.id, paymentMethod: 'PIX' }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('PAYMENT_METHOD_NOT_ENABLED');
    expect(await countRows(t, 'checkout', 'buyer_user_id = $1', [buyer.id])).toBe(0);
  });
});
