/**
 * The seller's reads of their money: the transactions list paged by `skip`/`take` (spec Limits/Pagination: default
 * 20), the balance of each currency the seller sold in (DESIGN section 13: amounts of different currencies are never
 * added up), and the payout configuration's currency, ISO 4217 as items' (DESIGN section 4).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newTerritory, newUser, type TestUser } from '../factories/index.js';
import { listItem } from '../marketplace/money-helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { configurePayouts, get, paidSale, shop } from './payout-helpers.js';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const expectValidationFailed = (res: { statusCode: number; json: () => { code: string; errors: { field: string }[] } }, field: string) => {
  expect(res.statusCode).toBe(400);
  expect(res.json().code).toBe('VALIDATION_FAILED');
  expect(res.json().errors.map((e) => e.field)).toContain(field);
};

describe('GET .../seller-balance/me/transactions: skip and take', () => {
  it('404 NO_SELLER_BALANCE before the first paid sale, on any page; then 20 by default, newest first, pages that tile the list', async () => {
    const s = await shop(t, admin, { price: '1.00', feeBasisPoints: 0 });
    const url = `/api/v1/territories/${s.territory.id}/seller-balance/me/transactions`;
    for (const query of ['', '?skip=5&take=1']) {
      const res = await get(t, `${url}${query}`, s.seller);
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('NO_SELLER_BALANCE');
    }

    const checkouts: string[] = [];
    for (let i = 0; i < 23; i += 1) checkouts.push(await paidSale(t, s, 1 + (i % 3)));
    // Three sales of one instant: the id decides their order, so no page repeats or skips one of them.
    await t.sql(`update seller_transaction set created_at_utc = '2030-01-01T00:00:00Z' where checkout_id = any($1::uuid[])`, [checkouts.slice(5, 8)]);
    const expected = await t.sql<{ id: string }>('select id from seller_transaction where seller_user_id = $1 order by created_at_utc desc, id desc', [
      s.seller.id,
    ]);
    const ids = (res: { json: () => { id: string }[] }) => res.json().map((x) => x.id);

    const first = await get(t, url, s.seller);
    expect(first.statusCode).toBe(200);
    expect(ids(first)).toEqual(expected.slice(0, 20).map((r) => r.id));
    expect(first.json()[0]).toMatchObject({ sellerUserId: s.seller.id, territoryId: s.territory.id, currency: 'BRL', status: expect.any(String) });
    const rest = await get(t, `${url}?skip=20`, s.seller);
    expect(ids(rest)).toEqual(expected.slice(20).map((r) => r.id));

    const paged: string[] = [];
    for (let skip = 0; skip < 23; skip += 4) {
      const page = await get(t, `${url}?skip=${skip}&take=4`, s.seller);
      expect(page.statusCode).toBe(200);
      expect(page.json().length).toBe(Math.min(4, 23 - skip));
      paged.push(...ids(page));
    }
    expect(paged).toEqual(expected.map((r) => r.id));
    expect(ids(await get(t, `${url}?take=100`, s.seller))).toHaveLength(23);

    // Past the last page: an empty page, not "no balance".
    const past = await get(t, `${url}?skip=23&take=5`, s.seller);
    expect(past.statusCode).toBe(200);
    expect(past.json()).toEqual([]);
    // Someone without sales: 404 on any page.
    const stranger = await get(t, `${url}?skip=23`, await newUser(t));
    expect(stranger.statusCode).toBe(404);
    expect(stranger.json().code).toBe('NO_SELLER_BALANCE');
  });

  it.each([
    ['take', 'take=0'],
    ['take', 'take=101'],
    ['take', 'take=2.5'],
    ['skip', 'skip=-1'],
    ['skip', 'skip=10000001'],
    ['skip', 'skip=abc'],
  ])('400 VALIDATION_FAILED naming %s for %s', async (field, query) => {
    const s = await shop(t, admin, { feeBasisPoints: 0 });
    await paidSale(t, s, 1);
    expectValidationFailed(await get(t, `/api/v1/territories/${s.territory.id}/seller-balance/me/transactions?${query}`, s.seller), field);
  });
});

describe('GET .../seller-balance/me: one balance per currency', () => {
  it('sales in BRL and USD: the latest currency by default, each with ?currency=, both listed; never summed', async () => {
    const s = await shop(t, admin, { price: '10.00', feeBasisPoints: 0, config: { retentionPeriodDays: 7 } });
    await paidSale(t, s, 1);
    const usdItem = await listItem(t, s.seller, s.storeId, { priceAmount: '5.00', title: 'Imported jam', currency: 'USD' });
    await paidSale(t, { ...s, itemId: usdItem }, 1);
    const url = `/api/v1/territories/${s.territory.id}/seller-balance/me`;
    const balance = {
      territoryId: s.territory.id,
      sellerUserId: s.seller.id,
      readyForPayoutAmountInCents: 0,
      inTransitAmountInCents: 0,
      paidAmountInCents: 0,
      currencies: ['BRL', 'USD'],
      id: expect.any(String),
      updatedAtUtc: expect.any(String),
    };

    const latest = await get(t, url, s.seller);
    expect(latest.statusCode).toBe(200);
    expect(latest.json()).toEqual({ ...balance, pendingAmountInCents: 500, currency: 'USD' });
    const usd = await get(t, `${url}?currency=USD`, s.seller);
    expect(usd.json()).toEqual(latest.json());
    const brl = await get(t, `${url}?currency=brl`, s.seller);
    expect(brl.statusCode).toBe(200);
    expect(brl.json()).toEqual({ ...balance, pendingAmountInCents: 1000, currency: 'BRL' });
    expect(brl.json().id).not.toBe(usd.json().id);

    // Each balance is its own wallet, in its own currency.
    expect((await get(t, `/api/v1/wallets/${brl.json().id}`, s.seller)).json()).toMatchObject({ balance: 10, currency: 'BRL' });
    expect((await get(t, `/api/v1/wallets/${usd.json().id}`, s.seller)).json()).toMatchObject({ balance: 5, currency: 'USD' });
  });

  it('a currency without a sale: 404 NO_SELLER_BALANCE, no account opened; not ISO 4217: 400', async () => {
    const s = await shop(t, admin, { feeBasisPoints: 0 });
    const url = `/api/v1/territories/${s.territory.id}/seller-balance/me`;
    const accounts = () => countRows(t, 'ledger_account', 'owner_user_id = $1', [s.seller.id]);
    const eur = await get(t, `${url}?currency=EUR`, s.seller);
    expect(eur.statusCode).toBe(404);
    expect(eur.json().code).toBe('NO_SELLER_BALANCE');
    await paidSale(t, s, 1);
    const before = await accounts();
    expect((await get(t, `${url}?currency=EUR`, s.seller)).json().code).toBe('NO_SELLER_BALANCE');
    expect(await accounts()).toBe(before);
    for (const bad of ['XYZ', 'EURO', '12']) expectValidationFailed(await get(t, `${url}?currency=${bad}`, s.seller), 'currency');
    expect(await accounts()).toBe(before);
  });

  it('a sale in a currency whose whole amount went to fees: asking for it opens its zero balance, then it is listed', async () => {
    const s = await shop(t, admin, { price: '10.00', feeBasisPoints: 0 });
    await paidSale(t, s, 1);
    const fee = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/territories/${s.territory.id}/platform-fees`,
      headers: admin.headers,
      payload: { itemType: 'SERVICE', feeMode: 'PERCENTAGE', feeBasisPoints: 10000, isActive: true },
    });
    expect(fee.statusCode).toBe(200);
    const service = await listItem(t, s.seller, s.storeId, { type: 'SERVICE', title: 'Tour', priceAmount: '3.00', currency: 'EUR' });
    await paidSale(t, { ...s, itemId: service }, 1);
    const url = `/api/v1/territories/${s.territory.id}/seller-balance/me`;
    expect((await get(t, `${url}?currency=BRL`, s.seller)).json()).toMatchObject({ currency: 'BRL', pendingAmountInCents: 1000, currencies: ['BRL'] });
    const eur = await get(t, `${url}?currency=EUR`, s.seller);
    expect(eur.statusCode).toBe(200);
    expect(eur.json()).toMatchObject({
      currency: 'EUR',
      pendingAmountInCents: 0,
      readyForPayoutAmountInCents: 0,
      paidAmountInCents: 0,
      currencies: ['BRL', 'EUR'],
    });
  });
});

describe('payout configuration currency: ISO 4217', () => {
  it('400 VALIDATION_FAILED for a code outside ISO 4217, nothing written (first config or replacement); any case in, upper-case out', async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const url = `/api/v1/territories/${territory.id}/payout-config`;
    const post = (currency: unknown) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: admin.headers,
        payload: { retentionPeriodDays: 3, minimumPayoutAmountInCents: 0, frequency: 'Manual', currency },
      });
    const audits = () => countRows(t, 'audit_entry', `territory_id = $1`, [territory.id]);

    for (const bad of ['XYZ', 'AAA', 'EURO', 'R$', '']) expectValidationFailed(await post(bad), 'currency');
    expect(await countRows(t, 'payout_config', 'territory_id = $1', [territory.id])).toBe(0);
    expect(await audits()).toBe(0);

    const created = await post('usd');
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ territoryId: territory.id, currency: 'USD', retentionPeriodDays: 3 });
    const auditsAfter = await audits();
    expectValidationFailed(await post('XYZ'), 'currency');
    expect((await get(t, url, admin)).json()).toEqual(created.json());
    expect(await audits()).toBe(auditsAfter);

    await configurePayouts(t, admin, territory.id, {});
    expect((await get(t, url, admin)).json().currency).toBe('BRL');
  });
});
