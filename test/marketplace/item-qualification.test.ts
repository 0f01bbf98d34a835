/**
 * Listing and editing items, and editing a store, take what opening a store takes (spec Marketplace: `POST
 * /api/v1/items` is for verified residents; curators may manage others' stores), checked on every write and not only
 * when the store was opened: an owner who has lost it gets the 403 NOT_VERIFIED_RESIDENT of `POST /api/v1/stores`,
 * with nothing written, and may still take items and the store down.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMembership, countRows, newAdmin, newCurator, newResident, newTerritory, newUser, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { listItem, openStore } from './money-helpers.js';

let t: TestApp;
let admin: TestUser;
let territory: TestTerritory;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
});
afterAll(() => t.close());

const itemBody = (storeId: string, extra: Record<string, unknown> = {}) => ({
  storeId,
  type: 'PRODUCT',
  title: 'Honey jar',
  pricingType: 'FIXED',
  priceAmount: '8.00',
  ...extra,
});
const post = (user: TestUser, url: string, payload?: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url, headers: user.headers, ...(payload ? { payload } : {}) });
const patch = (user: TestUser, itemId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'PATCH', url: `/api/v1/items/${itemId}`, headers: user.headers, payload });
const itemRow = async (itemId: string) =>
  (
    await t.sql<{ title: string; price_in_cents: string; status: string; updated_at_utc: Date }>(
      'select title, price_in_cents::text as price_in_cents, status, updated_at_utc from item where id = $1',
      [itemId],
    )
  )[0];
const storeItems = (storeId: string) => countRows(t, 'item', 'store_id = $1', [storeId]);

function expectNotVerified(res: { statusCode: number; json: () => Record<string, unknown> }) {
  expect(res.statusCode).toBe(403);
  expect(res.json()).toMatchObject({ status: 403, code: 'NOT_VERIFIED_RESIDENT' });
}

describe('items need a verified resident (or a curator), as stores do', () => {
  it('an owner no longer a verified resident: POST and PATCH 403 NOT_VERIFIED_RESIDENT writing nothing; archive still works', async () => {
    const owner = await newResident(t, territory, { verified: true });
    const storeId = await openStore(t, owner, territory);
    const itemId = await listItem(t, owner, storeId, { priceAmount: '8.00' });
    // The owner moved out: a visitor now, the residency verification gone.
    await t.sql(
      `update territory_membership set role = 'VISITOR', geo_verified_at_utc = null, document_verified_at_utc = null where user_id = $1 and territory_id = $2`,
      [owner.id, territory.id],
    );
    const before = { items: await storeItems(storeId), row: await itemRow(itemId) };

    // The same refusal as opening a store.
    expectNotVerified(await post(owner, '/api/v1/stores', { territoryId: territory.id, displayName: 'Again', contactVisibility: 'Public' }));
    const created = await post(owner, '/api/v1/items', itemBody(storeId));
    expectNotVerified(created);
    expect(created.json().detail).toBe('Only verified residents or curators of this territory can add items to this store.');
    expectNotVerified(await patch(owner, itemId, { title: 'Cheaper honey', priceAmount: '1.00' }));
    expectNotVerified(await patch(owner, itemId, { currency: 'USD' }));
    expect(await storeItems(storeId)).toBe(before.items);
    expect(await itemRow(itemId)).toEqual(before.row);

    // Taking an item down stays open to its owner.
    const archived = await post(owner, `/api/v1/items/${itemId}/archive`);
    expect(archived.statusCode).toBe(200);
    expect(archived.json()).toMatchObject({ id: itemId, status: 'ARCHIVED' });
  });

  it('the store of an owner no longer a verified resident: edits 403 NOT_VERIFIED_RESIDENT writing nothing; pausing still works', async () => {
    const owner = await newResident(t, territory, { verified: true });
    const storeId = await openStore(t, owner, territory);
    await t.sql(`update territory_membership set geo_verified_at_utc = null, document_verified_at_utc = null where user_id = $1 and territory_id = $2`, [
      owner.id,
      territory.id,
    ]);
    const storeRow = async () => (await t.sql('select display_name, description, status, updated_at_utc from store where id = $1', [storeId]))[0];
    const before = await storeRow();
    const edit = (payload: Record<string, unknown>) => t.app.inject({ method: 'PATCH', url: `/api/v1/stores/${storeId}`, headers: owner.headers, payload });
    const refused = await edit({ displayName: 'Renamed' });
    expectNotVerified(refused);
    expect(refused.json().detail).toBe('Only verified residents or curators of this territory can edit this store.');
    expectNotVerified(await edit({ status: 'PAUSED', description: 'Closed for good' }));
    expectNotVerified(await edit({ status: 'ACTIVE' }));
    expect(await storeRow()).toEqual(before);

    const paused = await edit({ status: 'PAUSED' });
    expect(paused.statusCode).toBe(200);
    expect(paused.json()).toMatchObject({ id: storeId, status: 'PAUSED' });
    // Reopening it is an edit like any other.
    expectNotVerified(await edit({ status: 'ACTIVE' }));
    // A curator still manages it.
    const curator = await newCurator(t, territory);
    const reopened = await t.app.inject({ method: 'PATCH', url: `/api/v1/stores/${storeId}`, headers: curator.headers, payload: { status: 'ACTIVE' } });
    expect(reopened.statusCode).toBe(200);
  });

  it('a resident who is not verified (any more) is refused too; verified again, they list', async () => {
    const owner = await newResident(t, territory, { verified: true });
    const storeId = await openStore(t, owner, territory);
    await t.sql(`update territory_membership set geo_verified_at_utc = null where user_id = $1 and territory_id = $2`, [owner.id, territory.id]);
    const before = await storeItems(storeId);
    expectNotVerified(await post(owner, '/api/v1/items', itemBody(storeId)));
    expect(await storeItems(storeId)).toBe(before);
    await t.sql(`update territory_membership set document_verified_at_utc = now() where user_id = $1 and territory_id = $2`, [owner.id, territory.id]);
    const res = await post(owner, '/api/v1/items', itemBody(storeId));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ storeId, createdByUserId: owner.id, priceInCents: 800, status: 'ACTIVE' });
  });

  it('an ex-curator visitor who opened a store: once the capability is revoked, 403 NOT_VERIFIED_RESIDENT, nothing written', async () => {
    const curator = await newUser(t);
    await addMembership(t, curator, territory, { role: 'VISITOR', capabilities: ['CURATOR'] });
    const storeId = await openStore(t, curator, territory);
    const itemId = await listItem(t, curator, storeId);
    const revoked = await t.app.inject({
      method: 'DELETE',
      url: `/api/v1/territories/${territory.id}/capabilities/${curator.id}/CURATOR`,
      headers: admin.headers,
    });
    expect(revoked.statusCode).toBeLessThan(300);
    const before = { items: await storeItems(storeId), row: await itemRow(itemId) };
    expectNotVerified(await post(curator, '/api/v1/items', itemBody(storeId)));
    expectNotVerified(await patch(curator, itemId, { title: 'Still mine' }));
    expect(await storeItems(storeId)).toBe(before.items);
    expect(await itemRow(itemId)).toEqual(before.row);
  });

  it("a curator (verified or not) still lists and edits in others' stores; a stranger still gets NOT_STORE_OWNER", async () => {
    const owner = await newResident(t, territory, { verified: true });
    const storeId = await openStore(t, owner, territory);
    const visitingCurator = await newUser(t);
    await addMembership(t, visitingCurator, territory, { role: 'VISITOR', capabilities: ['CURATOR'] });
    for (const curator of [await newCurator(t, territory), visitingCurator]) {
      const res = await post(curator, '/api/v1/items', itemBody(storeId));
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ storeId, createdByUserId: curator.id });
      const edited = await patch(curator, res.json().id, { title: 'Curated honey' });
      expect(edited.statusCode).toBe(200);
      expect(edited.json().title).toBe('Curated honey');
    }
    // Not the owner and not qualified: the ownership refusal comes first, as before.
    const stranger = await newUser(t);
    const before = await storeItems(storeId);
    const res = await post(stranger, '/api/v1/items', itemBody(storeId));
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('NOT_STORE_OWNER');
    expect(await storeItems(storeId)).toBe(before);
  });
});
