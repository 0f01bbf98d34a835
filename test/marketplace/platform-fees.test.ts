import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countRows,
  newAdmin,
  newCurator,
  newResident,
  newTerritory,
  newUser,
  newVisitor,
  type TestTerritory,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let territory: TestTerritory;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
});
afterAll(() => t.close());

const url = (id: string) => `/api/v1/territories/${id}/platform-fees`;
const put = (user: TestUser | null, payload: Record<string, unknown>, id = territory.id) =>
  t.app.inject({ method: 'PUT', url: url(id), headers: user?.headers ?? {}, payload });
const get = (user: TestUser | null, id = territory.id) => t.app.inject({ method: 'GET', url: url(id), headers: user?.headers ?? {} });

describe('PUT /api/v1/territories/{territoryId}/platform-fees', () => {
  it('a curator sets the fee of an item type (200), a repeat replaces it; audited', async () => {
    const curator = await newCurator(t, territory);
    const res = await put(curator, { itemType: 'Product', feeMode: 'percentage', feeBasisPoints: 500, isActive: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      itemType: 'PRODUCT',
      feeMode: 'PERCENTAGE',
      feeBasisPoints: 500,
      feeFixedInCents: null,
      isActive: true,
      createdAtUtc: expect.any(String),
      updatedAtUtc: expect.any(String),
    });
    const again = await put(curator, { itemType: 'PRODUCT', feeMode: 'FIXED', feeFixedInCents: 250 });
    expect(again.json()).toMatchObject({ id: res.json().id, feeMode: 'FIXED', feeBasisPoints: null, feeFixedInCents: 250, isActive: true });
    expect(await countRows(t, 'platform_fee_config', 'territory_id = $1', [territory.id])).toBe(1);
    expect(await countRows(t, 'audit_entry', `action = 'platform-fee.updated' and territory_id = $1`, [territory.id])).toBe(2);
  });

  it('SYSTEM_ADMIN and FINANCIAL_MANAGER may set fees too', async () => {
    expect((await put(await newAdmin(t), { itemType: 'SERVICE', feeMode: 'PERCENTAGE', feeBasisPoints: 0 })).statusCode).toBe(200);
    const finance = await newUser(t, { permissions: ['FINANCIAL_MANAGER'] });
    expect((await put(finance, { itemType: 'SERVICE', feeMode: 'PERCENTAGE', feeBasisPoints: 10000, isActive: false })).json()).toMatchObject({
      feeBasisPoints: 10000,
      isActive: false,
    });
  });

  it('403 for residents and visitors, 401 without a token, writing nothing', async () => {
    const before = await countRows(t, 'platform_fee_config');
    for (const user of [await newResident(t, territory, { verified: true }), await newVisitor(t, territory), await newUser(t)]) {
      expect((await put(user, { itemType: 'PRODUCT', feeMode: 'FIXED', feeFixedInCents: 1 })).statusCode).toBe(403);
    }
    expect((await put(null, { itemType: 'PRODUCT', feeMode: 'FIXED', feeFixedInCents: 1 })).statusCode).toBe(401);
    expect(await countRows(t, 'platform_fee_config')).toBe(before);
  });

  it('400 for bad input, writing nothing', async () => {
    const curator = await newCurator(t, territory);
    const before = await countRows(t, 'audit_entry');
    for (const bad of [
      { itemType: 'GIFT', feeMode: 'FIXED', feeFixedInCents: 1 },
      { itemType: 'PRODUCT', feeMode: 'PERCENTAGE' },
      { itemType: 'PRODUCT', feeMode: 'PERCENTAGE', feeBasisPoints: 10001 },
      { itemType: 'PRODUCT', feeMode: 'PERCENTAGE', feeBasisPoints: 2.5 },
      { itemType: 'PRODUCT', feeMode: 'PERCENTAGE', feeBasisPoints: 100, feeFixedInCents: 5 },
      { itemType: 'PRODUCT', feeMode: 'FIXED', feeFixedInCents: -1 },
      { itemType: 'PRODUCT', feeMode: 'SLIDING', feeBasisPoints: 1 },
    ]) {
      expect((await put(curator, bad)).statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect(await countRows(t, 'audit_entry')).toBe(before);
  });

  it('404 MARKETPLACE_DISABLED where the flag is off, 404 for an unknown territory', async () => {
    const off = await newTerritory(t);
    const res = await put(await newAdmin(t), { itemType: 'PRODUCT', feeMode: 'FIXED', feeFixedInCents: 1 }, off.id);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('MARKETPLACE_DISABLED');
    expect((await put(await newAdmin(t), { itemType: 'PRODUCT', feeMode: 'FIXED', feeFixedInCents: 1 }, UNKNOWN_ID)).statusCode).toBe(404);
  });
});

describe('GET /api/v1/territories/{territoryId}/platform-fees', () => {
  it('members read the configured fees per item type', async () => {
    const res = await get(await newVisitor(t, territory));
    expect(res.statusCode).toBe(200);
    expect(res.json().territoryId).toBe(territory.id);
    expect(res.json().fees.map((f: { itemType: string }) => f.itemType)).toEqual(['PRODUCT', 'SERVICE']);
    const fresh = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    expect((await get(await newVisitor(t, fresh), fresh.id)).json()).toEqual({ territoryId: fresh.id, fees: [] });
  });

  it('403 for non-members, 401 without a token, 400 malformed id, 404 disabled or unknown', async () => {
    const res = await get(await newUser(t));
    expect(res.statusCode).toBe(403);
    expect((await get(null)).statusCode).toBe(401);
    expect((await get(await newUser(t), 'nope')).statusCode).toBe(400);
    const off = await newTerritory(t);
    expect((await get(await newVisitor(t, off), off.id)).json().code).toBe('MARKETPLACE_DISABLED');
    expect((await get(await newAdmin(t), UNKNOWN_ID)).statusCode).toBe(404);
  });
});
