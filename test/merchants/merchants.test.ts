import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newCurator, newResident, newTerritory, newUser, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { multipartBody, TINY_PNG } from '../factories/multipart.js';
import { listItem, openStore } from '../marketplace/money-helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let territory: TestTerritory;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
});
afterAll(() => t.close());

interface Plan {
  id: string;
  code: string;
}
let plans: Record<string, Plan>;
async function plan(code: string): Promise<Plan> {
  if (!plans) {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/subscription-plans' });
    plans = Object.fromEntries((res.json() as Plan[]).map((p) => [p.code, p]));
  }
  return plans[code]!;
}

/** A verified resident with a store in the territory. */
async function merchant(where = territory): Promise<{ owner: TestUser; storeId: string }> {
  const owner = await newResident(t, where, { verified: true });
  return { owner, storeId: await openStore(t, owner, where) };
}

const subscribe = (user: TestUser | null, storeId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: `/api/v1/merchants/${storeId}/subscription`, headers: user?.headers ?? {}, payload });
const consumption = (user: TestUser | null, storeId: string) =>
  t.app.inject({ method: 'GET', url: `/api/v1/merchants/${storeId}/consumption`, headers: user?.headers ?? {} });
const subscription = (user: TestUser | null, id: string) => t.app.inject({ method: 'GET', url: `/api/v1/subscriptions/${id}`, headers: user?.headers ?? {} });

describe('GET /api/v1/subscription-plans', () => {
  it('lists the seeded plans FREE, BASIC and PRO with their quotas, without a token', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/subscription-plans' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      { id: expect.any(String), code: 'FREE', name: 'Free', priceInCents: 0, currency: 'BRL', quotas: { ai: 0, media: 20, notifications: 100 } },
      { id: expect.any(String), code: 'BASIC', name: 'Basic', priceInCents: 2990, currency: 'BRL', quotas: { ai: 100, media: 200, notifications: 1000 } },
      { id: expect.any(String), code: 'PRO', name: 'Pro', priceInCents: 9990, currency: 'BRL', quotas: { ai: 1000, media: 2000, notifications: 10000 } },
    ]);
  });
});

describe('POST /api/v1/merchants/{merchantId}/subscription', () => {
  it('201 + Location the first time, 200 for the same plan, 200 changing the plan; audited', async () => {
    const { owner, storeId } = await merchant();
    const basic = await plan('BASIC');
    const first = await subscribe(owner, storeId, { planId: basic.id });
    expect(first.statusCode).toBe(201);
    const body = first.json();
    expect(body).toEqual({
      id: expect.any(String),
      merchantId: storeId,
      planId: basic.id,
      planCode: 'BASIC',
      status: 'ACTIVE',
      createdAtUtc: expect.any(String),
      updatedAtUtc: expect.any(String),
    });
    expect(first.headers.location).toBe(`/api/v1/subscriptions/${body.id}`);

    const same = await subscribe(owner, storeId, { planId: basic.id });
    expect(same.statusCode).toBe(200);
    expect(same.headers.location).toBeUndefined();
    expect(same.json()).toEqual(body);

    const pro = await plan('PRO');
    const changed = await subscribe(owner, storeId, { planId: pro.id });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toMatchObject({ id: body.id, planId: pro.id, planCode: 'PRO' });
    expect(await countRows(t, 'merchant_subscription', 'store_id = $1', [storeId])).toBe(1);
    expect(await countRows(t, 'audit_entry', `subject_id = $1 and action like 'merchant-subscription.%'`, [body.id])).toBe(2);
  });

  it('concurrent first subscriptions create one subscription (one 201, the rest 200)', async () => {
    const { owner, storeId } = await merchant();
    const basic = await plan('BASIC');
    const answers = await Promise.all(Array.from({ length: 8 }, () => subscribe(owner, storeId, { planId: basic.id })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => a.json().id)).size).toBe(1);
    expect(await countRows(t, 'merchant_subscription', 'store_id = $1', [storeId])).toBe(1);
  });

  it('403 for anyone but the owner (admins and curators too), 401 without a token, writing nothing', async () => {
    const { storeId } = await merchant();
    const planId = (await plan('PRO')).id;
    for (const user of [await newAdmin(t), await newCurator(t, territory), await newResident(t, territory, { verified: true }), await newUser(t)]) {
      const res = await subscribe(user, storeId, { planId });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('NOT_STORE_OWNER');
    }
    expect((await subscribe(null, storeId, { planId })).statusCode).toBe(401);
    expect(await countRows(t, 'merchant_subscription', 'store_id = $1', [storeId])).toBe(0);
  });

  it('400 for a malformed or unknown plan, writing nothing', async () => {
    const { owner, storeId } = await merchant();
    const audits = await countRows(t, 'audit_entry');
    for (const bad of [{}, { planId: 'PRO' }, { planId: 7 }, { planId: UNKNOWN_ID }]) {
      const res = await subscribe(owner, storeId, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect((await subscribe(owner, storeId, { planId: UNKNOWN_ID })).json().detail).toContain('planId');
    expect(await countRows(t, 'merchant_subscription', 'store_id = $1', [storeId])).toBe(0);
    expect(await countRows(t, 'audit_entry')).toBe(audits);
  });

  it('404 for an unknown store, 404 MARKETPLACE_DISABLED when its territory turned the marketplace off', async () => {
    const { owner } = await merchant();
    const planId = (await plan('FREE')).id;
    expect((await subscribe(owner, UNKNOWN_ID, { planId })).statusCode).toBe(404);
    const other = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const { owner: offOwner, storeId } = await merchant(other);
    await t.sql(`update territory set enabled_flags = '{}' where id = $1`, [other.id]);
    const res = await subscribe(offOwner, storeId, { planId });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('MARKETPLACE_DISABLED');
  });
});

describe('GET /api/v1/subscriptions/{id}', () => {
  it("the store's owner reads it; others 403, unknown 404, 401 without a token", async () => {
    const { owner, storeId } = await merchant();
    const created = (await subscribe(owner, storeId, { planId: (await plan('BASIC')).id })).json();
    const res = await subscription(owner, created.id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(created);
    expect((await subscription(await newAdmin(t), created.id)).statusCode).toBe(403);
    expect((await subscription(await newResident(t, territory, { verified: true }), created.id)).statusCode).toBe(403);
    expect((await subscription(owner, UNKNOWN_ID)).statusCode).toBe(404);
    expect((await subscription(owner, 'nope')).statusCode).toBe(400);
    expect((await subscription(null, created.id)).statusCode).toBe(401);
  });
});

describe('GET /api/v1/merchants/{merchantId}/consumption', () => {
  it('the first read subscribes the store to FREE and creates its three meters for the month; zeros', async () => {
    const { owner, storeId } = await merchant();
    const res = await consumption(owner, storeId);
    expect(res.statusCode).toBe(200);
    const now = new Date();
    expect(res.json()).toEqual({
      merchantId: storeId,
      subscriptionId: expect.any(String),
      planCode: 'FREE',
      periodStartUtc: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
      periodEndUtc: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      meters: [
        { metric: 'ai', usage: 0, quota: 0 },
        { metric: 'media', usage: 0, quota: 20 },
        { metric: 'notifications', usage: 0, quota: 100 },
      ],
    });
    const subscriptionId = res.json().subscriptionId;
    expect(await countRows(t, 'merchant_subscription', 'store_id = $1 and id = $2', [storeId, subscriptionId])).toBe(1);
    expect(await countRows(t, 'consumption_meter', 'subscription_id = $1', [subscriptionId])).toBe(3);

    // A repeat writes nothing; the subscription read by id is the FREE one.
    expect((await consumption(owner, storeId)).json()).toEqual(res.json());
    expect(await countRows(t, 'consumption_meter', 'subscription_id = $1', [subscriptionId])).toBe(3);
    expect((await subscription(owner, subscriptionId)).json()).toMatchObject({ planCode: 'FREE', merchantId: storeId });

    // Subscribing afterwards changes the FREE subscription (200), and the quotas follow the plan.
    const pro = await subscribe(owner, storeId, { planId: (await plan('PRO')).id });
    expect(pro.statusCode).toBe(200);
    expect(pro.json().id).toBe(subscriptionId);
    expect((await consumption(owner, storeId)).json()).toMatchObject({
      subscriptionId,
      planCode: 'PRO',
      meters: [
        { metric: 'ai', usage: 0, quota: 1000 },
        { metric: 'media', usage: 0, quota: 2000 },
        { metric: 'notifications', usage: 0, quota: 10000 },
      ],
    });
  });

  it("counts media attached to the store's items and notifications generated for the store", async () => {
    const { owner, storeId } = await merchant();
    const mediaIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const upload = multipartBody([{ field: 'file', fileName: `p${i}.png`, contentType: 'image/png', bytes: TINY_PNG }]);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/media/upload',
        headers: { ...owner.headers, ...upload.headers },
        payload: upload.payload,
      });
      expect(res.statusCode).toBe(201);
      mediaIds.push(res.json().id);
    }
    const itemId = await listItem(t, owner, storeId, { mediaIds });
    await listItem(t, owner, storeId);
    const buyer = await newResident(t, territory);
    const inquiry = await t.app.inject({
      method: 'POST',
      url: `/api/v1/items/${itemId}/inquiries`,
      headers: buyer.headers,
      payload: { message: 'Still available?' },
    });
    expect(inquiry.statusCode).toBe(201);
    // Another store's activity does not count.
    const other = await merchant();
    await t.app.inject({
      method: 'POST',
      url: `/api/v1/items/${await listItem(t, other.owner, other.storeId)}/inquiries`,
      headers: buyer.headers,
      payload: { message: 'Hello' },
    });

    const res = await consumption(owner, storeId);
    expect(res.json().meters).toEqual([
      { metric: 'ai', usage: 0, quota: 0 },
      { metric: 'media', usage: 2, quota: 20 },
      { metric: 'notifications', usage: 1, quota: 100 },
    ]);
  });

  it('20 concurrent first reads create one subscription and three meters', async () => {
    const { owner, storeId } = await merchant();
    const answers = await Promise.all(Array.from({ length: 20 }, () => consumption(owner, storeId)));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.json().subscriptionId)).size).toBe(1);
    expect(await countRows(t, 'merchant_subscription', 'store_id = $1', [storeId])).toBe(1);
    expect(await countRows(t, 'consumption_meter', 'subscription_id = $1', [answers[0]!.json().subscriptionId])).toBe(3);
  });

  it('403 for anyone but the owner, 404 unknown store, 400 malformed id, 401 without a token; nothing written', async () => {
    const { storeId } = await merchant();
    for (const user of [await newAdmin(t), await newCurator(t, territory), await newUser(t)]) {
      expect((await consumption(user, storeId)).statusCode).toBe(403);
    }
    expect((await consumption(null, storeId)).statusCode).toBe(401);
    expect(await countRows(t, 'merchant_subscription', 'store_id = $1', [storeId])).toBe(0);
    const owner = await newUser(t);
    expect((await consumption(owner, UNKNOWN_ID)).statusCode).toBe(404);
    expect((await consumption(owner, 'not-a-store')).statusCode).toBe(400);
  });
});
