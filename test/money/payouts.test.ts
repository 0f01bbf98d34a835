import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sellerBalanceReleaseJob } from '../../src/routers/payouts/seller-balance-release.job.js';
import { countRows, newAdmin, newResident, newTerritory, newUser, newVisitor, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { addToCart, checkout, expectLedgerBalanced, listItem, openStore, sendWebhook } from '../marketplace/money-helpers.js';

let t: TestApp;
let admin: TestUser;
let financeManager: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
  financeManager = await newUser(t, { permissions: ['FINANCIAL_MANAGER'] });
});
afterAll(() => t.close());

interface Shop {
  territory: TestTerritory;
  seller: TestUser;
  itemId: string;
}

/** A marketplace territory with a seller whose item costs 25.50 BRL, 10% platform fee. */
async function shop(): Promise<Shop> {
  const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  const seller = await newResident(t, territory, { verified: true });
  const storeId = await openStore(t, seller, territory);
  const itemId = await listItem(t, seller, storeId, { priceAmount: '25.50' });
  const res = await t.app.inject({
    method: 'PUT',
    url: `/api/v1/territories/${territory.id}/platform-fees`,
    headers: admin.headers,
    payload: { itemType: 'PRODUCT', feeMode: 'PERCENTAGE', feeBasisPoints: 1000, isActive: true },
  });
  expect(res.statusCode).toBe(200);
  return { territory, seller, itemId };
}

/** A PAID checkout of `quantity` items (gross 2550 * quantity, fee 10%); its id. */
async function paidSale(s: Shop, quantity = 2): Promise<string> {
  const buyer = await newUser(t);
  expect((await addToCart(t, buyer, { itemId: s.itemId, quantity })).statusCode).toBe(201);
  const res = await checkout(t, buyer, { territoryId: s.territory.id });
  expect(res.statusCode).toBe(201);
  const c = res.json().checkouts[0];
  const hook = await sendWebhook(t, {
    id: `evt_${c.id}`,
    type: 'payment.succeeded',
    data: { paymentId: c.payment.id, checkoutId: c.id, amountInCents: c.payment.amountInCents, currency: c.payment.currency },
  });
  expect(hook.json()).toEqual({ received: true, outcome: 'PAID' });
  return c.id as string;
}

const get = (url: string, user: TestUser | null) => t.app.inject({ method: 'GET', url, headers: user?.headers ?? {} });
const postConfig = (territoryId: string, user: TestUser | null, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: `/api/v1/territories/${territoryId}/payout-config`, headers: user?.headers ?? {}, payload });
const validConfig = { retentionPeriodDays: 7, minimumPayoutAmountInCents: 1000, maximumPayoutAmountInCents: 50000, frequency: 'Weekly' };
const runRelease = (now = new Date()) =>
  sellerBalanceReleaseJob.handle({ em: t.deps.orm.em.fork(), storage: t.deps.storage, clock: { now: () => now } }, sellerBalanceReleaseJob.payload.parse({}));

describe('payout configuration', () => {
  it('GET is 404 before any; POST creates (201), replaces (200, same id) and members read it', async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const visitor = await newVisitor(t, territory);
    const url = `/api/v1/territories/${territory.id}/payout-config`;
    expect((await get(url, visitor)).statusCode).toBe(404);

    const created = await postConfig(territory.id, admin, validConfig);
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      retentionPeriodDays: 7,
      minimumPayoutAmountInCents: 1000,
      maximumPayoutAmountInCents: 50000,
      frequency: 'Weekly',
      autoPayoutEnabled: false,
      requiresApproval: false,
      currency: 'BRL',
      isActive: true,
      createdAtUtc: expect.any(String),
      updatedAtUtc: expect.any(String),
    });

    const replaced = await postConfig(territory.id, financeManager, {
      retentionPeriodDays: 0,
      minimumPayoutAmountInCents: 0,
      maximumPayoutAmountInCents: null,
      frequency: 'manual',
      autoPayoutEnabled: true,
      requiresApproval: true,
      currency: 'usd',
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toMatchObject({
      id: body.id,
      retentionPeriodDays: 0,
      minimumPayoutAmountInCents: 0,
      maximumPayoutAmountInCents: null,
      frequency: 'Manual',
      autoPayoutEnabled: true,
      requiresApproval: true,
      currency: 'USD',
    });
    expect(await countRows(t, 'payout_config', 'territory_id = $1', [territory.id])).toBe(1);
    expect(await countRows(t, 'audit_entry', `action = 'payout-config.updated' and territory_id = $1`, [territory.id])).toBe(2);

    const read = await get(url, visitor);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(replaced.json());
  });

  it('401 without a token, 403 for a member without the role (nothing written), 403 reading as a non-member, 404 unknown territory', async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const resident = await newResident(t, territory, { verified: true });
    expect((await postConfig(territory.id, null, validConfig)).statusCode).toBe(401);
    expect((await get(`/api/v1/territories/${territory.id}/payout-config`, null)).statusCode).toBe(401);
    const denied = await postConfig(territory.id, resident, validConfig);
    expect(denied.statusCode).toBe(403);
    expect(await countRows(t, 'payout_config', 'territory_id = $1', [territory.id])).toBe(0);
    await postConfig(territory.id, admin, validConfig);
    expect((await get(`/api/v1/territories/${territory.id}/payout-config`, await newUser(t))).statusCode).toBe(403);
    expect((await postConfig(UNKNOWN_ID, admin, validConfig)).statusCode).toBe(404);
    expect((await get(`/api/v1/territories/${UNKNOWN_ID}/payout-config`, admin)).statusCode).toBe(404);
  });

  it.each([
    ['retention above 365', { retentionPeriodDays: 366 }],
    ['negative retention', { retentionPeriodDays: -1 }],
    ['fractional retention', { retentionPeriodDays: 1.5 }],
    ['negative minimum', { minimumPayoutAmountInCents: -1 }],
    ['fractional cents', { minimumPayoutAmountInCents: 10.5 }],
    ['maximum below minimum', { minimumPayoutAmountInCents: 1000, maximumPayoutAmountInCents: 999 }],
    ['maximum of 0 (no payout could be made)', { minimumPayoutAmountInCents: 0, maximumPayoutAmountInCents: 0 }],
    ['unknown frequency', { frequency: 'Yearly' }],
    ['missing frequency', { frequency: undefined }],
    ['bad currency', { currency: 'EURO' }],
  ])('400 and nothing written: %s', async (_name, patch) => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const before = await countRows(t, 'audit_entry');
    const res = await postConfig(territory.id, admin, { ...validConfig, ...patch });
    expect(res.statusCode).toBe(400);
    expect(await countRows(t, 'payout_config', 'territory_id = $1', [territory.id])).toBe(0);
    expect(await countRows(t, 'audit_entry')).toBe(before);
  });

  it('a territory without the marketplace answers 404 MARKETPLACE_DISABLED', async () => {
    const territory = await newTerritory(t);
    const res = await postConfig(territory.id, admin, validConfig);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('MARKETPLACE_DISABLED');
  });
});

describe('seller balance and wallet', () => {
  it('404 NO_SELLER_BALANCE before the first paid sale; then pending = net, transactions newest first; 401 without a token', async () => {
    const s = await shop();
    const base = `/api/v1/territories/${s.territory.id}/seller-balance/me`;
    for (const url of [base, `${base}/transactions`]) {
      const res = await get(url, s.seller);
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('NO_SELLER_BALANCE');
      expect((await get(url, null)).statusCode).toBe(401);
    }
    const first = await paidSale(s, 2);
    const second = await paidSale(s, 1);
    const balance = await get(base, s.seller);
    expect(balance.statusCode).toBe(200);
    expect(balance.json()).toEqual({
      id: expect.any(String),
      territoryId: s.territory.id,
      sellerUserId: s.seller.id,
      pendingAmountInCents: 4590 + 2295,
      readyForPayoutAmountInCents: 0,
      inTransitAmountInCents: 0,
      paidAmountInCents: 0,
      currency: 'BRL',
      currencies: ['BRL'],
      updatedAtUtc: expect.any(String),
    });
    const txs = await get(`${base}/transactions`, s.seller);
    expect(txs.statusCode).toBe(200);
    expect(txs.json().map((x: { checkoutId: string }) => x.checkoutId)).toEqual([second, first]);
    expect(txs.json()[1]).toMatchObject({
      sellerUserId: s.seller.id,
      grossAmountInCents: 5100,
      platformFeeInCents: 510,
      netAmountInCents: 4590,
      currency: 'BRL',
      status: 'PENDING',
      payoutId: null,
    });
    // Another user (a buyer) has no balance here.
    expect((await get(base, await newUser(t))).statusCode).toBe(404);
    await expectLedgerBalanced(t);

    // The wallet: the same id, holder only.
    const walletUrl = `/api/v1/wallets/${balance.json().id}`;
    const wallet = await get(walletUrl, s.seller);
    expect(wallet.statusCode).toBe(200);
    expect(wallet.json()).toEqual({
      id: balance.json().id,
      ownerType: 'seller',
      ownerId: s.seller.id,
      territoryId: s.territory.id,
      balance: 68.85,
      currency: 'BRL',
      updatedAtUtc: expect.any(String),
    });
    expect((await get(walletUrl, await newUser(t))).statusCode).toBe(403);
    expect((await get(walletUrl, admin)).statusCode).toBe(403);
    expect((await get(walletUrl, null)).statusCode).toBe(401);
    expect((await get(`/api/v1/wallets/${UNKNOWN_ID}`, s.seller)).statusCode).toBe(404);
    expect((await get('/api/v1/wallets/not-a-uuid', s.seller)).statusCode).toBe(400);
  });
});

describe('seller-balance-release job', () => {
  it('moves due transactions pending -> ready once, however often and concurrently it runs', async () => {
    const s = await shop();
    const checkoutId = await paidSale(s, 2);
    const [st] = await t.sql<{ id: string }>('select id from seller_transaction where checkout_id = $1', [checkoutId]);
    await Promise.all([runRelease(), runRelease(), runRelease()]);
    await runRelease();
    expect(await countRows(t, 'ledger_transaction', 'idempotency_key = $1', [`seller-tx:${st!.id}:ready`])).toBe(1);
    const entries = await t.sql<{ kind: string; amount: string }>(
      `select a.kind, e.amount_in_cents::text as amount from ledger_entry e join ledger_account a on a.id = e.account_id
        join ledger_transaction x on x.id = e.transaction_id where x.idempotency_key = $1 order by a.kind`,
      [`seller-tx:${st!.id}:ready`],
    );
    expect(entries).toEqual([
      { kind: 'seller_pending', amount: '-4590' },
      { kind: 'seller_ready', amount: '4590' },
    ]);
    expect((await t.sql<{ status: string }>('select status from seller_transaction where id = $1', [st!.id]))[0]!.status).toBe('READY');
    const balance = (await get(`/api/v1/territories/${s.territory.id}/seller-balance/me`, s.seller)).json();
    expect(balance).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 4590, paidAmountInCents: 0 });
    await expectLedgerBalanced(t);
  });

  it("waits for the territory's retention period", async () => {
    const s = await shop();
    expect((await postConfig(s.territory.id, admin, { ...validConfig, retentionPeriodDays: 3 })).statusCode).toBe(201);
    const checkoutId = await paidSale(s, 1);
    const [st] = await t.sql<{ id: string }>('select id from seller_transaction where checkout_id = $1', [checkoutId]);
    const txs = (await get(`/api/v1/territories/${s.territory.id}/seller-balance/me/transactions`, s.seller)).json();
    expect(Date.parse(txs[0].readyForPayoutAtUtc) - Date.parse(txs[0].paidAtUtc)).toBe(3 * 86_400_000);
    await runRelease(new Date(Date.now() + 2 * 86_400_000));
    expect((await t.sql<{ status: string }>('select status from seller_transaction where id = $1', [st!.id]))[0]!.status).toBe('PENDING');
    await runRelease(new Date(Date.now() + 4 * 86_400_000));
    expect((await t.sql<{ status: string }>('select status from seller_transaction where id = $1', [st!.id]))[0]!.status).toBe('READY');
    const balance = (await get(`/api/v1/territories/${s.territory.id}/seller-balance/me`, s.seller)).json();
    expect(balance).toMatchObject({ pendingAmountInCents: 0, readyForPayoutAmountInCents: 2295 });
    await expectLedgerBalanced(t);
  });

  it('is registered to run every minute', async () => {
    const { JOBS } = await import('../../src/jobs/registry.js');
    expect(JOBS.find((j) => j.queue === 'seller-balance-release')?.schedule).toBe('* * * * *');
  });
});

describe('platform financial views', () => {
  it('zeros before any sale; then revenue = the fees, as lines with their checkout', async () => {
    const s = await shop();
    const base = `/api/v1/territories/${s.territory.id}/platform-financial`;
    const zero = await get(`${base}/balance`, financeManager);
    expect(zero.statusCode).toBe(200);
    expect(zero.json()).toEqual({ territoryId: s.territory.id, totalRevenueInCents: 0, totalExpensesInCents: 0, netBalanceInCents: 0, currency: 'BRL' });
    expect((await get(`${base}/revenue`, admin)).json()).toMatchObject({ items: [], totalCount: 0, pageNumber: 1 });

    const first = await paidSale(s, 2);
    const second = await paidSale(s, 1);
    expect((await get(`${base}/balance`, admin)).json()).toEqual({
      territoryId: s.territory.id,
      totalRevenueInCents: 510 + 255,
      totalExpensesInCents: 0,
      netBalanceInCents: 765,
      currency: 'BRL',
    });
    const revenue = await get(`${base}/revenue?pageSize=1`, financeManager);
    expect(revenue.statusCode).toBe(200);
    expect(revenue.json()).toMatchObject({ totalCount: 2, totalPages: 2, hasNextPage: true });
    expect(revenue.json().items).toEqual([
      { id: expect.any(String), checkoutId: second, amountInCents: 255, currency: 'BRL', createdAtUtc: expect.any(String) },
    ]);
    const page2 = (await get(`${base}/revenue?pageSize=1&pageNumber=2`, financeManager)).json();
    expect(page2.items[0].checkoutId).toBe(first);
    const future = new Date(Date.now() + 86_400_000).toISOString();
    expect((await get(`${base}/revenue?fromUtc=${future}`, admin)).json().totalCount).toBe(0);
    expect((await get(`${base}/revenue?toUtc=${future}`, admin)).json().totalCount).toBe(2);
    expect((await get(`${base}/expenses`, admin)).json()).toMatchObject({ items: [], totalCount: 0 });
  });

  it('401 without a token, 403 without the role, 400 on a bad query, 404 unknown territory', async () => {
    const s = await shop();
    const base = `/api/v1/territories/${s.territory.id}/platform-financial`;
    for (const path of ['balance', 'revenue', 'expenses']) {
      expect((await get(`${base}/${path}`, null)).statusCode).toBe(401);
      expect((await get(`${base}/${path}`, s.seller)).statusCode).toBe(403);
      expect((await get(`/api/v1/territories/${UNKNOWN_ID}/platform-financial/${path}`, admin)).statusCode).toBe(404);
    }
    expect((await get(`${base}/revenue?fromUtc=yesterday`, admin)).statusCode).toBe(400);
    expect((await get(`${base}/expenses?pageSize=101`, admin)).statusCode).toBe(400);
    // ISO 4217, as items and payout configurations take it (XYZ has the shape of a code and is none).
    expect((await get(`${base}/balance?currency=XYZ`, admin)).statusCode).toBe(400);
    expect((await get(`${base}/balance?currency=usd`, admin)).statusCode).toBe(200);
  });
});
