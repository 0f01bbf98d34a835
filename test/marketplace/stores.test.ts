import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newCurator, newResident, newTerritory, newUser, newVisitor, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let territory: TestTerritory;
let disabled: TestTerritory;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  disabled = await newTerritory(t);
});
afterAll(() => t.close());

const storeBody = (territoryId: string, extra: Record<string, unknown> = {}) => ({
  territoryId,
  displayName: 'Corner Bakery',
  description: 'Fresh bread',
  contactVisibility: 'Public',
  contact: { phone: '+55 11 99999-0000', email: 'bakery@example.org' },
  ...extra,
});
const post = (user: TestUser | null, payload: unknown) =>
  t.app.inject({ method: 'POST', url: '/api/v1/stores', headers: user?.headers ?? {}, payload: payload as Record<string, unknown> });
const get = (user: TestUser | null, url: string) => t.app.inject({ method: 'GET', url, headers: user?.headers ?? {} });
const patch = (user: TestUser | null, storeId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'PATCH', url: `/api/v1/stores/${storeId}`, headers: user?.headers ?? {}, payload });

async function openStore(owner: TestUser, extra: Record<string, unknown> = {}) {
  const res = await post(owner, storeBody(territory.id, extra));
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string };
}

describe('POST /api/v1/stores', () => {
  it('opens the store of a verified resident: 201 + Location, ACTIVE, payments enabled', async () => {
    const owner = await newResident(t, territory, { verified: true });
    const res = await post(owner, storeBody(territory.id, { contactVisibility: 'public' }));
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(res.headers.location).toBe(`/api/v1/stores/${body.id}`);
    expect(body).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      ownerUserId: owner.id,
      displayName: 'Corner Bakery',
      description: 'Fresh bread',
      contactVisibility: 'Public',
      contact: { phone: '+55 11 99999-0000', email: 'bakery@example.org' },
      status: 'ACTIVE',
      paymentsEnabled: true,
      createdAtUtc: expect.any(String),
      updatedAtUtc: expect.any(String),
    });
  });

  it('a repeat updates the one store and answers 200; concurrent first calls create one store', async () => {
    const owner = await newResident(t, territory, { verified: true });
    const results = await Promise.all([1, 2, 3].map((n) => post(owner, storeBody(territory.id, { displayName: `Shop ${n}` }))));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 200, 201]);
    expect(new Set(results.map((r) => r.json().id)).size).toBe(1);
    const again = await post(owner, storeBody(territory.id, { displayName: 'Renamed', contactVisibility: 'PRIVATE', contact: null, description: null }));
    expect(again.statusCode).toBe(200);
    expect(again.headers.location).toBeUndefined();
    expect(again.json()).toMatchObject({
      id: results[0]!.json().id,
      displayName: 'Renamed',
      contactVisibility: 'Private',
      contact: { phone: null, email: null },
      description: null,
    });
    expect(await countRows(t, 'store', 'owner_user_id = $1', [owner.id])).toBe(1);
  });

  it('lets a curator open a store; takes the territory from the X-Session-Id selection', async () => {
    const curator = await newCurator(t, territory);
    const select = await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/selection',
      headers: { ...curator.headers, 'x-session-id': 'stores-session' },
      payload: { territoryId: territory.id },
    });
    expect(select.statusCode).toBe(200);
    const { territoryId: _omit, ...body } = storeBody(territory.id);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/stores', headers: { ...curator.headers, 'x-session-id': 'stores-session' }, payload: body });
    expect(res.statusCode).toBe(201);
    expect(res.json().territoryId).toBe(territory.id);
  });

  it('refuses visitors, unverified residents and non-members with 403, writing nothing', async () => {
    const before = await countRows(t, 'store');
    for (const user of [await newVisitor(t, territory), await newResident(t, territory), await newUser(t)]) {
      const res = await post(user, storeBody(territory.id));
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('NOT_VERIFIED_RESIDENT');
    }
    expect(await countRows(t, 'store')).toBe(before);
  });

  it('401 without a token', async () => {
    expect((await post(null, storeBody(territory.id))).statusCode).toBe(401);
  });

  it('400 for bad input, writing nothing', async () => {
    const owner = await newResident(t, territory, { verified: true });
    const before = await countRows(t, 'store');
    for (const bad of [
      storeBody(territory.id, { displayName: '' }),
      storeBody(territory.id, { displayName: 'x'.repeat(201) }),
      storeBody(territory.id, { description: 'x'.repeat(2001) }),
      storeBody(territory.id, { contactVisibility: 'Friends' }),
      storeBody(territory.id, { contact: { email: 'not-an-email' } }),
      storeBody(territory.id, { contact: { phone: 'call me' } }),
      storeBody('not-a-uuid'),
      { territoryId: territory.id },
    ]) {
      const res = await post(owner, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect(await countRows(t, 'store')).toBe(before);
  });

  it('404 MARKETPLACE_DISABLED where the flag is off, 404 for an unknown territory', async () => {
    const owner = await newResident(t, disabled, { verified: true });
    const off = await post(owner, storeBody(disabled.id));
    expect(off.statusCode).toBe(404);
    expect(off.json().code).toBe('MARKETPLACE_DISABLED');
    expect((await post(owner, storeBody(UNKNOWN_ID))).statusCode).toBe(404);
  });
});

describe('GET /api/v1/stores and /api/v1/stores/{storeId}', () => {
  let publicStore: { id: string };
  let privateStore: { id: string };
  let privateOwner: TestUser;
  beforeAll(async () => {
    publicStore = await openStore(await newResident(t, territory, { verified: true }), { displayName: 'AAA Public' });
    privateOwner = await newResident(t, territory, { verified: true });
    privateStore = await openStore(privateOwner, { displayName: 'AAB Private', contactVisibility: 'Private' });
  });

  it('lists ACTIVE stores by name to any signed-in user, with skip and take', async () => {
    const stranger = await newUser(t);
    const res = await get(stranger, `/api/v1/stores?territoryId=${territory.id}&take=2`);
    expect(res.statusCode).toBe(200);
    expect(res.json().map((s: { id: string }) => s.id)).toEqual([publicStore.id, privateStore.id]);
    const skipped = await get(stranger, `/api/v1/stores?territoryId=${territory.id}&skip=1&take=1`);
    expect(skipped.json().map((s: { id: string }) => s.id)).toEqual([privateStore.id]);
  });

  it('hides a Private contact from others, shows it to the owner and curators', async () => {
    const stranger = await newUser(t);
    const res = await get(stranger, `/api/v1/stores/${privateStore.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: privateStore.id, contactVisibility: 'Private', contact: null });
    expect((await get(privateOwner, `/api/v1/stores/${privateStore.id}`)).json().contact).toEqual({ phone: '+55 11 99999-0000', email: 'bakery@example.org' });
    expect((await get(await newCurator(t, territory), `/api/v1/stores/${privateStore.id}`)).json().contact).not.toBeNull();
    expect((await get(stranger, `/api/v1/stores/${publicStore.id}`)).json().contact).not.toBeNull();
  });

  it('401 without a token; 400 for a bad take; 404 unknown id or disabled marketplace', async () => {
    const user = await newUser(t);
    expect((await get(null, `/api/v1/stores?territoryId=${territory.id}`)).statusCode).toBe(401);
    expect((await get(null, `/api/v1/stores/${publicStore.id}`)).statusCode).toBe(401);
    expect((await get(user, `/api/v1/stores?territoryId=${territory.id}&take=1000`)).statusCode).toBe(400);
    expect((await get(user, `/api/v1/stores/${UNKNOWN_ID}`)).statusCode).toBe(404);
    const off = await get(user, `/api/v1/stores?territoryId=${disabled.id}`);
    expect(off.statusCode).toBe(404);
    expect(off.json().code).toBe('MARKETPLACE_DISABLED');
  });

  it('a store whose territory turns the marketplace off answers 404 MARKETPLACE_DISABLED', async () => {
    const other = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const owner = await newResident(t, other, { verified: true });
    const res = await post(owner, storeBody(other.id));
    await t.sql(`update territory set enabled_flags = '{}' where id = $1`, [other.id]);
    const gone = await get(owner, `/api/v1/stores/${res.json().id}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.json().code).toBe('MARKETPLACE_DISABLED');
  });
});

describe('PATCH /api/v1/stores/{storeId}', () => {
  let owner: TestUser;
  let store: { id: string };
  beforeAll(async () => {
    owner = await newResident(t, territory, { verified: true });
    store = await openStore(owner, { displayName: 'Patch me' });
  });

  it('the owner edits fields; omitted ones stay', async () => {
    const res = await patch(owner, store.id, { displayName: 'Patched', contact: { email: 'new@example.org' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      displayName: 'Patched',
      description: 'Fresh bread',
      contact: { phone: null, email: 'new@example.org' },
      status: 'ACTIVE',
    });
  });

  it('a curator pauses it (audited): it leaves the list; the owner reactivates it', async () => {
    const curator = await newCurator(t, territory);
    const res = await patch(curator, store.id, { status: 'paused' });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('PAUSED');
    expect(await countRows(t, 'audit_entry', `action = 'store.status.updated' and subject_id = $1`, [store.id])).toBe(1);
    const listed = await get(owner, `/api/v1/stores?territoryId=${territory.id}&take=100`);
    expect(listed.json().map((s: { id: string }) => s.id)).not.toContain(store.id);
    expect((await patch(owner, store.id, { status: 'ACTIVE' })).json().status).toBe('ACTIVE');
  });

  it('403 NOT_STORE_OWNER for others, 401 without a token, 404 for an unknown store', async () => {
    const other = await newResident(t, territory, { verified: true });
    const res = await patch(other, store.id, { displayName: 'Mine now' });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('NOT_STORE_OWNER');
    expect((await patch(null, store.id, { displayName: 'x' })).statusCode).toBe(401);
    expect((await patch(owner, UNKNOWN_ID, { displayName: 'x' })).statusCode).toBe(404);
    expect((await get(owner, `/api/v1/stores/${store.id}`)).json().displayName).not.toBe('Mine now');
  });

  it('400 for bad input, changing nothing', async () => {
    const before = (await get(owner, `/api/v1/stores/${store.id}`)).json();
    for (const bad of [{ status: 'CLOSED' }, { displayName: '' }, { contactVisibility: 'Nobody' }, { description: 'x'.repeat(2001) }]) {
      expect((await patch(owner, store.id, bad)).statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect((await get(owner, `/api/v1/stores/${store.id}`)).json()).toEqual(before);
  });
});
