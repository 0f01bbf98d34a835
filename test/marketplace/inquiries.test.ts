import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newResident, newTerritory, newUser, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let territory: TestTerritory;
let owner: TestUser;
let storeId: string;
let itemId: string;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
  owner = await newResident(t, territory, { verified: true });
  storeId = await openStore(owner, territory, 'Private');
  itemId = await newItem(owner, storeId);
});
afterAll(() => t.close());

async function openStore(user: TestUser, where: { id: string }, contactVisibility = 'Public') {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/stores',
    headers: user.headers,
    payload: { territoryId: where.id, displayName: 'Store', contactVisibility, contact: { phone: '+55 11 5555-0000', email: 's@example.org' } },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

async function newItem(user: TestUser, store: string, title = 'Sourdough loaf') {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/items',
    headers: user.headers,
    payload: { storeId: store, type: 'PRODUCT', title, pricingType: 'FIXED', priceAmount: 12 },
  });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

const ask = (user: TestUser | null, item: string, payload: Record<string, unknown> = { message: 'Is it still available?' }) =>
  t.app.inject({ method: 'POST', url: `/api/v1/items/${item}/inquiries`, headers: user?.headers ?? {}, payload });
const get = (user: TestUser | null, url: string) => t.app.inject({ method: 'GET', url, headers: user?.headers ?? {} });
const writes = async () => ({ inquiries: await countRows(t, 'inquiry'), outbox: await countRows(t, 'outbox_message') });

describe('POST /api/v1/items/{itemId}/inquiries', () => {
  it("creates an OPEN inquiry (201) and notifies the store's owner through the outbox", async () => {
    const buyer = await newUser(t);
    const res = await ask(buyer, itemId);
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.any(String),
      itemId,
      storeId,
      territoryId: territory.id,
      fromUserId: buyer.id,
      message: 'Is it still available?',
      status: 'OPEN',
      createdAtUtc: expect.any(String),
      // The store's contact is Private.
      storeContact: null,
    });
    const outbox = await t.sql<{ type: string; recipient_user_ids: string[]; data: Record<string, unknown> }>(
      'select type, recipient_user_ids, data from outbox_message where source_key = $1',
      [`inquiry:${body.id}:received`],
    );
    expect(outbox).toEqual([
      { type: 'INQUIRY_RECEIVED', recipient_user_ids: [owner.id], data: { territoryId: territory.id, storeId, itemId, inquiryId: body.id } },
    ]);
  });

  it("shows a Public store's contact to the inquirer", async () => {
    const seller = await newResident(t, territory, { verified: true });
    const item = await newItem(seller, await openStore(seller, territory, 'Public'));
    const res = await ask(await newUser(t), item);
    expect(res.json().storeContact).toEqual({ phone: '+55 11 5555-0000', email: 's@example.org' });
  });

  it("400 for an empty or too long message and for inquiring about one's own item, writing nothing", async () => {
    const before = await writes();
    const buyer = await newUser(t);
    expect((await ask(buyer, itemId, { message: '' })).statusCode).toBe(400);
    expect((await ask(buyer, itemId, { message: '<b></b>' })).statusCode).toBe(400);
    expect((await ask(buyer, itemId, { message: 'x'.repeat(2001) })).statusCode).toBe(400);
    expect((await ask(buyer, itemId, {})).statusCode).toBe(400);
    const own = await ask(owner, itemId);
    expect(own.statusCode).toBe(400);
    expect(own.json().code).toBe('CANNOT_INQUIRE_OWN_ITEM');
    expect(await writes()).toEqual(before);
  });

  it('401 without a token; 404 unknown item; 409 for an archived item; 404 where the marketplace is disabled', async () => {
    const buyer = await newUser(t);
    expect((await ask(null, itemId)).statusCode).toBe(401);
    expect((await ask(buyer, UNKNOWN_ID)).statusCode).toBe(404);
    const archived = await newItem(owner, storeId, 'Gone');
    await t.app.inject({ method: 'POST', url: `/api/v1/items/${archived}/archive`, headers: owner.headers });
    const closed = await ask(buyer, archived);
    expect(closed.statusCode).toBe(409);
    expect(closed.json().code).toBe('ITEM_ARCHIVED');
    const off = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const seller = await newResident(t, off, { verified: true });
    const offItem = await newItem(seller, await openStore(seller, off));
    await t.sql(`update territory set enabled_flags = '{}' where id = $1`, [off.id]);
    const before = await writes();
    const res = await ask(buyer, offItem);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('MARKETPLACE_DISABLED');
    expect(await writes()).toEqual(before);
  });
});

describe('GET /api/v1/inquiries/me and /api/v1/inquiries/received (+ /paged)', () => {
  let buyer: TestUser;
  let seller: TestUser;
  let shopItem: string;
  const sent: string[] = [];
  beforeAll(async () => {
    buyer = await newUser(t);
    seller = await newResident(t, territory, { verified: true });
    shopItem = await newItem(seller, await openStore(seller, territory));
    for (const message of ['first', 'second', 'third']) sent.push((await ask(buyer, shopItem, { message })).json().id);
    await ask(await newUser(t), shopItem, { message: 'from someone else' });
  });

  it("the caller's sent inquiries, newest first", async () => {
    const res = await get(buyer, '/api/v1/inquiries/me');
    expect(res.statusCode).toBe(200);
    expect(res.json().map((i: { id: string }) => i.id)).toEqual([...sent].reverse());
    expect((await get(buyer, '/api/v1/inquiries/me?skip=1&take=1')).json().map((i: { id: string }) => i.id)).toEqual([sent[1]]);
    const paged = await get(buyer, `/api/v1/inquiries/me/paged?territoryId=${territory.id}&pageSize=2`);
    expect(paged.json()).toMatchObject({ totalCount: 3, totalPages: 2, hasNextPage: true, pageNumber: 1 });
    expect(paged.json().items.map((i: { id: string }) => i.id)).toEqual([sent[2], sent[1]]);
  });

  it("inquiries to the caller's stores, newest first; nobody else's", async () => {
    const res = await get(seller, '/api/v1/inquiries/received');
    expect(res.statusCode).toBe(200);
    expect(res.json().map((i: { message: string }) => i.message)).toEqual(['from someone else', 'third', 'second', 'first']);
    expect((await get(seller, '/api/v1/inquiries/received/paged?pageSize=1')).json()).toMatchObject({ totalCount: 4, pageSize: 1 });
    expect((await get(buyer, '/api/v1/inquiries/received')).json()).toEqual([]);
    expect((await get(seller, '/api/v1/inquiries/me')).json()).toEqual([]);
  });

  it('hides inquiries of territories whose marketplace is off; 404 MARKETPLACE_DISABLED when that territory is asked for', async () => {
    const off = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const offSeller = await newResident(t, off, { verified: true });
    const offItem = await newItem(offSeller, await openStore(offSeller, off));
    expect((await ask(buyer, offItem)).statusCode).toBe(201);
    expect((await get(buyer, '/api/v1/inquiries/me')).json()).toHaveLength(4);
    await t.sql(`update territory set enabled_flags = '{}' where id = $1`, [off.id]);
    expect((await get(buyer, '/api/v1/inquiries/me')).json()).toHaveLength(3);
    const res = await get(buyer, `/api/v1/inquiries/me?territoryId=${off.id}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('MARKETPLACE_DISABLED');
  });

  it('401 without a token, 400 for bad paging', async () => {
    for (const url of ['/api/v1/inquiries/me', '/api/v1/inquiries/me/paged', '/api/v1/inquiries/received', '/api/v1/inquiries/received/paged']) {
      expect((await get(null, url)).statusCode, url).toBe(401);
    }
    expect((await get(buyer, '/api/v1/inquiries/me?take=0')).statusCode).toBe(400);
    expect((await get(buyer, '/api/v1/inquiries/received/paged?pageNumber=0')).statusCode).toBe(400);
    expect((await get(buyer, '/api/v1/inquiries/me?territoryId=nope')).statusCode).toBe(400);
  });
});
