import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { countRows, newCurator, newResident, newTerritory, newUser, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let territory: TestTerritory;
let owner: TestUser;
let storeId: string;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  owner = await newResident(t, territory, { verified: true });
  storeId = await openStore(owner, territory);
});
afterAll(() => t.close());

async function openStore(user: TestUser, where: { id: string }) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/stores',
    headers: user.headers,
    payload: { territoryId: where.id, displayName: 'Store', contactVisibility: 'Public', contact: { email: 's@example.org' } },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

const itemBody = (extra: Record<string, unknown> = {}) => ({
  storeId,
  type: 'Product',
  title: 'Ceramic Mug',
  description: 'Hand-made stoneware',
  category: 'Ceramics',
  tags: 'kitchen, handmade,, kitchen',
  pricingType: 'Fixed',
  priceAmount: 10.5,
  unit: 'piece',
  latitude: -23.55,
  longitude: -46.63,
  ...extra,
});
const post = (user: TestUser | null, url: string, payload?: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url, headers: user?.headers ?? {}, ...(payload ? { payload } : {}) });
const get = (user: TestUser | null, url: string) => t.app.inject({ method: 'GET', url, headers: user?.headers ?? {} });
const patch = (user: TestUser | null, itemId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'PATCH', url: `/api/v1/items/${itemId}`, headers: user?.headers ?? {}, payload });

async function createItem(extra: Record<string, unknown> = {}, user: TestUser = owner) {
  const res = await post(user, '/api/v1/items', itemBody(extra));
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; [k: string]: unknown };
}

/** An image asset owned by the user, as the media upload would have stored it. */
async function ownedImage(user: TestUser) {
  const id = newId();
  await t.sql(
    `insert into media_asset (id, created_at_utc, uploaded_by_user_id, media_type, mime_type, size_bytes, duration_seconds, storage_key)
     values ($1, now(), $2, 'IMAGE', 'image/png', 68, null, $3)`,
    [id, user.id, `test/${id}`],
  );
  return id;
}

const writes = async () => ({ items: await countRows(t, 'item'), attachments: await countRows(t, 'media_attachment') });

describe('POST /api/v1/items', () => {
  it("lists an ACTIVE item in the owner's store: 201 + Location, both spellings in, canonical out, price in cents", async () => {
    const media = [await ownedImage(owner), await ownedImage(owner)];
    const res = await post(owner, '/api/v1/items', itemBody({ mediaIds: media, currency: 'brl' }));
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(res.headers.location).toBe(`/api/v1/items/${body.id}`);
    expect(body).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      storeId,
      createdByUserId: owner.id,
      type: 'PRODUCT',
      title: 'Ceramic Mug',
      description: 'Hand-made stoneware',
      category: 'Ceramics',
      tags: 'kitchen, handmade',
      pricingType: 'FIXED',
      priceAmount: 10.5,
      priceInCents: 1050,
      currency: 'BRL',
      unit: 'piece',
      latitude: -23.55,
      longitude: -46.63,
      mediaIds: media,
      primaryImageUrl: `/api/v1/media/${media[0]}`,
      imageUrls: media.map((m) => `/api/v1/media/${m}`),
      status: 'ACTIVE',
      createdAtUtc: expect.any(String),
      updatedAtUtc: expect.any(String),
    });
  });

  it('FREE costs 0, NEGOTIABLE may have no price; a string amount is exact; a curator may list in any store', async () => {
    expect(await createItem({ pricingType: 'FREE', priceAmount: null })).toMatchObject({ pricingType: 'FREE', priceAmount: 0, priceInCents: 0 });
    expect(await createItem({ pricingType: 'NEGOTIABLE', priceAmount: undefined, type: 'service' })).toMatchObject({ type: 'SERVICE', priceAmount: null });
    expect(await createItem({ priceAmount: '19.99' })).toMatchObject({ priceInCents: 1999 });
    const curator = await newCurator(t, territory);
    expect(await createItem({}, curator)).toMatchObject({ storeId, createdByUserId: curator.id });
  });

  it("403 NOT_STORE_OWNER for someone else's store, 401 without a token, writing nothing", async () => {
    const before = await writes();
    const other = await newResident(t, territory, { verified: true });
    const res = await post(other, '/api/v1/items', itemBody());
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('NOT_STORE_OWNER');
    expect((await post(null, '/api/v1/items', itemBody())).statusCode).toBe(401);
    expect(await writes()).toEqual(before);
  });

  it('400 for bad input (pricing, decimals, currency, media, territory), writing nothing', async () => {
    const stranger = await newUser(t);
    const foreign = await ownedImage(stranger);
    const other = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const before = await writes();
    const cases: Array<[Record<string, unknown>, string?]> = [
      [{ pricingType: 'FIXED', priceAmount: null }],
      [{ pricingType: 'FIXED', priceAmount: 0 }],
      [{ pricingType: 'FREE', priceAmount: 5 }],
      [{ priceAmount: 1.234 }],
      [{ priceAmount: -3 }],
      [{ priceAmount: 1e12 }],
      [{ currency: 'XYZ1' }],
      [{ currency: 'ABC' }],
      [{ type: 'Gift' }],
      [{ pricingType: 'Auction' }],
      [{ title: '' }],
      [{ title: 'x'.repeat(201) }],
      [{ latitude: 95 }],
      [{ latitude: -23.5, longitude: null }],
      [{ mediaIds: Array.from({ length: 11 }, () => newId()) }],
      [{ mediaIds: [foreign] }, 'MEDIA_NOT_OWNED'],
      [{ mediaIds: [UNKNOWN_ID] }, 'MEDIA_NOT_FOUND'],
      [{ territoryId: other.id }],
      [{ storeId: 'nope' }],
    ];
    for (const [extra, code] of cases) {
      const res = await post(owner, '/api/v1/items', itemBody(extra));
      expect(res.statusCode, JSON.stringify(extra)).toBe(400);
      if (code) expect(res.json().code).toBe(code);
    }
    expect(await writes()).toEqual(before);
  });

  it("applies the territory's active MarketplacePolicy rules (400 naming the word or category)", async () => {
    await t.sql(
      `insert into territory_moderation_rule (id, created_at_utc, territory_id, rule_type, name, config, is_active, updated_at_utc)
       values ($1, now(), $2, 'MarketplacePolicy', 'No weapons', $3, true, now())`,
      [newId(), territory.id, JSON.stringify({ words: ['rifle'], blockedCategories: ['Tobacco'] })],
    );
    const before = await writes();
    const res = await post(owner, '/api/v1/items', itemBody({ description: 'An old Rifle, works' }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'MODERATION_RULE_VIOLATION' });
    expect(res.json().detail).toContain('"rifle"');
    expect(res.json().detail).toContain('No weapons');
    expect((await post(owner, '/api/v1/items', itemBody({ category: 'tobacco' }))).statusCode).toBe(400);
    expect(await writes()).toEqual(before);
    // Whole words only: "Trifle" does not contain the word "rifle".
    expect((await post(owner, '/api/v1/items', itemBody({ title: 'Trifle bowl' }))).statusCode).toBe(201);
  });

  it('404 for an unknown store and MARKETPLACE_DISABLED where the flag is off', async () => {
    expect((await post(owner, '/api/v1/items', itemBody({ storeId: UNKNOWN_ID }))).statusCode).toBe(404);
    const off = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const seller = await newResident(t, off, { verified: true });
    const offStore = await openStore(seller, off);
    await t.sql(`update territory set enabled_flags = '{}' where id = $1`, [off.id]);
    const res = await post(seller, '/api/v1/items', itemBody({ storeId: offStore }));
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('MARKETPLACE_DISABLED');
  });
});

describe('GET /api/v1/items and /api/v1/items/paged', () => {
  let place: TestTerritory;
  let seller: TestUser;
  let shop: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    place = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    seller = await newResident(t, place, { verified: true });
    shop = await openStore(seller, place);
    const make = async (key: string, extra: Record<string, unknown>, store = shop, user = seller) => {
      const res = await post(user, '/api/v1/items', { ...itemBody(extra), storeId: store });
      expect(res.statusCode, res.body).toBe(201);
      ids[key] = res.json().id;
    };
    await make('mug', { title: 'Blue Mug', category: 'Ceramics' });
    await make('bowl', { title: 'Salad bowl', description: 'Large BLUE glaze', category: 'ceramics' });
    await make('repair', { title: 'Bike repair', type: 'SERVICE', category: 'Repairs', pricingType: 'NEGOTIABLE', priceAmount: null });
    await make('archived', { title: 'Old blue vase' });
    expect((await post(seller, `/api/v1/items/${ids.archived}/archive`)).statusCode).toBe(200);
    const pausedSeller = await newResident(t, place, { verified: true });
    const pausedShop = await openStore(pausedSeller, place);
    await make('paused', { title: 'Blue paused thing' }, pausedShop, pausedSeller);
    await t.app.inject({ method: 'PATCH', url: `/api/v1/stores/${pausedShop}`, headers: pausedSeller.headers, payload: { status: 'PAUSED' } });
  });

  const list = async (query: string, user: TestUser | null = seller) => {
    const res = await get(user, `/api/v1/items?territoryId=${place.id}${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().map((i: { id: string }) => i.id);
  };

  it('lists only ACTIVE items of ACTIVE stores, newest first, to any signed-in user', async () => {
    expect(await list('', await newUser(t))).toEqual([ids.repair, ids.bowl, ids.mug]);
  });

  it('filters by type, category (case-insensitive), store and q (partial, case-insensitive, title or description)', async () => {
    expect(await list('&type=service')).toEqual([ids.repair]);
    expect(await list('&category=CERAMICS')).toEqual([ids.bowl, ids.mug]);
    expect(await list(`&storeId=${shop}&take=1`)).toEqual([ids.repair]);
    expect(await list('&q=blu')).toEqual([ids.bowl, ids.mug]);
    expect(await list('&q=bi')).toEqual([ids.repair]);
    expect(await list('&q=%25')).toEqual([]);
  });

  it('pages with the envelope', async () => {
    const res = await get(seller, `/api/v1/items/paged?territoryId=${place.id}&pageSize=2&pageNumber=2`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ pageNumber: 2, pageSize: 2, totalCount: 3, totalPages: 2, hasPreviousPage: true, hasNextPage: false });
    expect(res.json().items.map((i: { id: string }) => i.id)).toEqual([ids.mug]);
  });

  it('totalCount stays exact under concurrent writes of one store (stored counters)', async () => {
    const market = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const seller2 = await newResident(t, market, { verified: true });
    const store2 = await openStore(seller2, market);
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(seller2, '/api/v1/items', { ...itemBody({ title: `Jar ${i}`, category: i % 2 ? 'Jars' : 'JARS' }), storeId: store2 }),
      ),
    );
    expect(created.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    await Promise.all(created.slice(0, 3).map((r) => post(seller2, `/api/v1/items/${r.json().id}/archive`)));
    const page = await get(seller2, `/api/v1/items/paged?territoryId=${market.id}&category=jars&pageSize=2`);
    expect(page.json()).toMatchObject({ totalCount: 5, totalPages: 3 });
  });

  it('401 without a token, 400 for bad filters, 404 where the marketplace is disabled', async () => {
    expect((await get(null, `/api/v1/items?territoryId=${place.id}`)).statusCode).toBe(401);
    expect((await get(null, `/api/v1/items/paged?territoryId=${place.id}`)).statusCode).toBe(401);
    expect((await get(seller, `/api/v1/items?territoryId=${place.id}&type=GIFT`)).statusCode).toBe(400);
    expect((await get(seller, `/api/v1/items/paged?territoryId=${place.id}&pageSize=500`)).statusCode).toBe(400);
    const off = await newTerritory(t);
    const res = await get(seller, `/api/v1/items?territoryId=${off.id}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('MARKETPLACE_DISABLED');
  });

  it('GET by id: any signed-in user (an archived item with its status); 404 unknown; 401', async () => {
    const res = await get(await newUser(t), `/api/v1/items/${ids.archived}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: ids.archived, status: 'ARCHIVED' });
    expect((await get(seller, `/api/v1/items/${UNKNOWN_ID}`)).statusCode).toBe(404);
    expect((await get(null, `/api/v1/items/${ids.mug}`)).statusCode).toBe(401);
  });
});

describe('PATCH /api/v1/items/{itemId} and POST .../archive', () => {
  it('the owner edits; omitted fields stay; the pricing rules apply to the merged item', async () => {
    const item = await createItem();
    const res = await patch(owner, item.id, { title: 'Big mug', priceAmount: '12.00', category: null });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ title: 'Big mug', priceInCents: 1200, category: null, description: 'Hand-made stoneware', pricingType: 'FIXED' });
    expect((await patch(owner, item.id, { pricingType: 'free', priceAmount: null })).json()).toMatchObject({ pricingType: 'FREE', priceInCents: 0 });
    const refused = await patch(owner, item.id, { pricingType: 'FIXED' });
    expect(refused.statusCode).toBe(400);
    expect((await get(owner, `/api/v1/items/${item.id}`)).json().pricingType).toBe('FREE');
  });

  it('403 for others, 401 without a token, 404 unknown, 400 bad input changing nothing', async () => {
    const item = await createItem();
    const other = await newResident(t, territory, { verified: true });
    const res = await patch(other, item.id, { title: 'Mine' });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('NOT_STORE_OWNER');
    expect((await patch(null, item.id, { title: 'x' })).statusCode).toBe(401);
    expect((await patch(owner, UNKNOWN_ID, { title: 'x' })).statusCode).toBe(404);
    for (const bad of [{ title: '' }, { priceAmount: 1.001 }, { currency: 'EURO' }, { latitude: null }]) {
      expect((await patch(owner, item.id, bad)).statusCode, JSON.stringify(bad)).toBe(400);
    }
    expect((await get(owner, `/api/v1/items/${item.id}`)).json()).toEqual(item);
  });

  it('archive: the owner or a curator; idempotent; archived items are not editable (409)', async () => {
    const item = await createItem();
    const other = await newResident(t, territory, { verified: true });
    expect((await post(other, `/api/v1/items/${item.id}/archive`)).statusCode).toBe(403);
    expect((await post(null, `/api/v1/items/${item.id}/archive`)).statusCode).toBe(401);
    expect((await post(owner, `/api/v1/items/${UNKNOWN_ID}/archive`)).statusCode).toBe(404);
    const curator = await newCurator(t, territory);
    const res = await post(curator, `/api/v1/items/${item.id}/archive`);
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('ARCHIVED');
    expect((await post(owner, `/api/v1/items/${item.id}/archive`)).json().status).toBe('ARCHIVED');
    const edit = await patch(owner, item.id, { title: 'Back' });
    expect(edit.statusCode).toBe(409);
    expect(edit.json().code).toBe('ITEM_ARCHIVED');
  });
});
