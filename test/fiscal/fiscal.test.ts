import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newCurator, newResident, newTerritory, newUser, newVisitor, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const packUrl = (id: string) => `/api/v1/territories/${id}/fiscal-pack`;
const methodsUrl = (id: string) => `/api/v1/territories/${id}/payment-methods`;
const put = (user: TestUser | null, url: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'PUT', url, headers: user?.headers ?? {}, payload });
const get = (user: TestUser | null, url: string) => t.app.inject({ method: 'GET', url, headers: user?.headers ?? {} });

describe('GET /api/v1/fiscal-packs', () => {
  it('lists brazil.v1 with its capabilities, without a token', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/fiscal-packs' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([{ id: 'brazil.v1', countryCode: 'BR', displayName: expect.any(String), capabilities: ['kyc', 'pix', 'nfse'] }]);
  });
});

describe('GET|PUT /api/v1/territories/{territoryId}/fiscal-pack', () => {
  it('without a binding: Off, the legacy default; a SYSTEM_ADMIN activates brazil.v1 (audited); members read it', async () => {
    const territory = await newTerritory(t);
    const visitor = await newVisitor(t, territory);
    expect((await get(visitor, packUrl(territory.id))).json()).toEqual({
      territoryId: territory.id,
      packId: null,
      status: 'Off',
      municipalityIbge: null,
      activatedByUserId: null,
      activatedAtUtc: null,
      isLegacyDefault: true,
    });

    const res = await put(admin, packUrl(territory.id), { packId: 'brazil.v1', status: 'active', municipalityIbge: '3550308' });
    expect(res.statusCode).toBe(200);
    const active = res.json();
    expect(active).toEqual({
      territoryId: territory.id,
      packId: 'brazil.v1',
      status: 'Active',
      municipalityIbge: '3550308',
      activatedByUserId: admin.id,
      activatedAtUtc: expect.any(String),
      isLegacyDefault: false,
    });
    expect((await get(visitor, packUrl(territory.id))).json()).toEqual(active);

    // Staying Active keeps who activated it and when; Off clears them.
    const other = await newAdmin(t);
    expect((await put(other, packUrl(territory.id), { packId: 'brazil.v1', status: 'Active' })).json()).toMatchObject({
      activatedByUserId: admin.id,
      activatedAtUtc: active.activatedAtUtc,
      municipalityIbge: null,
    });
    expect((await put(other, packUrl(territory.id), { packId: 'brazil.v1', status: 'Off' })).json()).toMatchObject({
      status: 'Off',
      activatedByUserId: null,
      activatedAtUtc: null,
      isLegacyDefault: false,
    });
    expect(await countRows(t, 'territory_fiscal_pack', 'territory_id = $1', [territory.id])).toBe(1);
    expect(await countRows(t, 'audit_entry', `action = 'fiscal-pack.updated' and territory_id = $1`, [territory.id])).toBe(3);
  });

  it('PUT: 403 for curators, residents and others; 401 without a token; nothing written', async () => {
    const territory = await newTerritory(t);
    for (const user of [await newCurator(t, territory), await newResident(t, territory, { verified: true }), await newUser(t)]) {
      expect((await put(user, packUrl(territory.id), { packId: 'brazil.v1', status: 'Active' })).statusCode).toBe(403);
    }
    expect((await put(null, packUrl(territory.id), { packId: 'brazil.v1', status: 'Active' })).statusCode).toBe(401);
    expect(await countRows(t, 'territory_fiscal_pack', 'territory_id = $1', [territory.id])).toBe(0);
  });

  it('PUT: 400 for an unknown pack, a bad status or a municipality that is not 7 digits; nothing written', async () => {
    const territory = await newTerritory(t);
    const audits = await countRows(t, 'audit_entry');
    for (const bad of [
      { packId: 'chile.v1', status: 'Active' },
      { status: 'Active' },
      { packId: 'brazil.v1', status: 'On' },
      { packId: 'brazil.v1', status: 'Active', municipalityIbge: '355030' },
      { packId: 'brazil.v1', status: 'Active', municipalityIbge: '35503080' },
      { packId: 'brazil.v1', status: 'Active', municipalityIbge: '35503O8' },
      { packId: 'brazil.v1', status: 'Active', municipalityIbge: 3550308 },
    ]) {
      expect((await put(admin, packUrl(territory.id), bad)).statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect(await countRows(t, 'territory_fiscal_pack', 'territory_id = $1', [territory.id])).toBe(0);
    expect(await countRows(t, 'audit_entry')).toBe(audits);
  });

  it('GET: 403 for non-members, 401 without a token, 400 malformed id, 404 unknown territory', async () => {
    const territory = await newTerritory(t);
    expect((await get(await newUser(t), packUrl(territory.id))).statusCode).toBe(403);
    expect((await get(admin, packUrl(territory.id))).statusCode).toBe(200);
    expect((await get(null, packUrl(territory.id))).statusCode).toBe(401);
    expect((await get(admin, packUrl('nope'))).statusCode).toBe(400);
    expect((await get(admin, packUrl(UNKNOWN_ID))).statusCode).toBe(404);
    expect((await put(admin, packUrl(UNKNOWN_ID), { packId: 'brazil.v1', status: 'Active' })).statusCode).toBe(404);
  });
});

describe('GET|PUT /api/v1/territories/{territoryId}/payment-methods', () => {
  it('never configured: all three; a SYSTEM_ADMIN sets them (any case, repeats ignored; audited); members read them', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    expect((await get(resident, methodsUrl(territory.id))).json()).toEqual({
      territoryId: territory.id,
      methods: ['PIX', 'CARD', 'BOLETO'],
      updatedAtUtc: null,
    });
    const res = await put(admin, methodsUrl(territory.id), { methods: ['card', 'PIX', 'CARD'] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ territoryId: territory.id, methods: ['PIX', 'CARD'], updatedAtUtc: expect.any(String) });
    expect((await get(resident, methodsUrl(territory.id))).json()).toEqual(res.json());
    expect(await countRows(t, 'audit_entry', `action = 'payment-methods.updated' and territory_id = $1`, [territory.id])).toBe(1);
  });

  it('PUT: 403 for non-admins, 401 without a token, 400 for bad methods; nothing written', async () => {
    const territory = await newTerritory(t);
    for (const user of [await newCurator(t, territory), await newVisitor(t, territory)]) {
      expect((await put(user, methodsUrl(territory.id), { methods: ['PIX'] })).statusCode).toBe(403);
    }
    expect((await put(null, methodsUrl(territory.id), { methods: ['PIX'] })).statusCode).toBe(401);
    for (const bad of [{}, { methods: [] }, { methods: ['CASH'] }, { methods: 'PIX' }, { methods: [1] }]) {
      expect((await put(admin, methodsUrl(territory.id), bad)).statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect(await countRows(t, 'territory_payment_methods', 'territory_id = $1', [territory.id])).toBe(0);
    expect((await get(await newUser(t), methodsUrl(territory.id))).statusCode).toBe(403);
    expect((await get(admin, methodsUrl(UNKNOWN_ID))).statusCode).toBe(404);
  });
});

describe('the PIX rule (brazil.v1 has the pix capability)', () => {
  it('activating the pack without PIX among the methods: 400, nothing written', async () => {
    const territory = await newTerritory(t);
    expect((await put(admin, methodsUrl(territory.id), { methods: ['CARD', 'BOLETO'] })).statusCode).toBe(200);
    const audits = await countRows(t, 'audit_entry');
    const res = await put(admin, packUrl(territory.id), { packId: 'brazil.v1', status: 'Active' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, code: 'PIX_REQUIRED_BY_FISCAL_PACK', detail: expect.stringContaining('PIX') });
    expect(await countRows(t, 'territory_fiscal_pack', 'territory_id = $1', [territory.id])).toBe(0);
    expect(await countRows(t, 'audit_entry')).toBe(audits);
    // Off is allowed without PIX; with PIX back, activation succeeds.
    expect((await put(admin, packUrl(territory.id), { packId: 'brazil.v1', status: 'Off' })).statusCode).toBe(200);
    expect((await put(admin, methodsUrl(territory.id), { methods: ['CARD', 'PIX'] })).statusCode).toBe(200);
    expect((await put(admin, packUrl(territory.id), { packId: 'brazil.v1', status: 'Active' })).statusCode).toBe(200);
  });

  it('removing PIX while the pack is Active: 400, the methods unchanged', async () => {
    const territory = await newTerritory(t);
    expect((await put(admin, packUrl(territory.id), { packId: 'brazil.v1', status: 'Active' })).statusCode).toBe(200);
    const res = await put(admin, methodsUrl(territory.id), { methods: ['CARD'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'PIX_REQUIRED_BY_FISCAL_PACK', detail: expect.stringContaining('PIX cannot be removed') });
    expect(await countRows(t, 'territory_payment_methods', 'territory_id = $1', [territory.id])).toBe(0);
    expect((await get(admin, methodsUrl(territory.id))).json().methods).toEqual(['PIX', 'CARD', 'BOLETO']);
    expect((await put(admin, methodsUrl(territory.id), { methods: ['PIX'] })).statusCode).toBe(200);
  });

  it('concurrent activation and PIX removal never leave the pack Active without PIX', async () => {
    for (let round = 0; round < 5; round++) {
      const territory = await newTerritory(t);
      await Promise.all([
        put(admin, packUrl(territory.id), { packId: 'brazil.v1', status: 'Active' }),
        put(admin, methodsUrl(territory.id), { methods: ['CARD'] }),
      ]);
      const pack = (await get(admin, packUrl(territory.id))).json();
      const methods = (await get(admin, methodsUrl(territory.id))).json().methods;
      expect(pack.status === 'Active' && !methods.includes('PIX')).toBe(false);
    }
  });
});
