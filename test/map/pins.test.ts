import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  addMembership,
  newAdmin,
  newModerator,
  newResident,
  newTerritory,
  newUser,
  newVisitor,
  type TestTerritory,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { block, insertAlert, insertAsset, insertEntity, insertEvent, insertMedia, insertPost } from './seed.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Pin {
  type: string;
  id: string;
  latitude: number;
  longitude: number;
  title: string;
  assetType: string | null;
  assetSubtype: string | null;
}

async function pins(user: TestUser, territory: { id: string }, query = '') {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/map/pins?territoryId=${territory.id}&take=100${query}`, headers: user.headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Pin[];
}
const keys = (list: Pin[]) => list.map((p) => `${p.type}:${p.id}`);

describe('GET /api/v1/map/pins', () => {
  let territory: TestTerritory;
  let author: TestUser;
  let blockedAuthor: TestUser;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    territory = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    author = await newResident(t, territory);
    blockedAuthor = await newResident(t, territory);

    ids.entity = await insertEntity(t, territory, author, { name: 'Bakery', latitude: -23.501, longitude: -46.601 });
    ids.residentsEntity = await insertEntity(t, territory, author, {
      name: 'Residents garden',
      visibility: 'RESIDENTS_ONLY',
      latitude: -23.502,
      longitude: -46.602,
    });
    ids.rejectedEntity = await insertEntity(t, territory, author, { status: 'REJECTED' });
    ids.blockedEntity = await insertEntity(t, territory, blockedAuthor, { name: 'Blocked bar' });

    ids.post = await insertPost(t, territory, author, { title: 'Fresh bread', mapEntityId: ids.entity });
    ids.residentsPost = await insertPost(t, territory, author, { title: 'For residents', mapEntityId: ids.entity, visibility: 'RESIDENTS_ONLY' });
    ids.postAtResidentsEntity = await insertPost(t, territory, author, { title: 'At the garden', mapEntityId: ids.residentsEntity });
    ids.pendingPost = await insertPost(t, territory, author, { mapEntityId: ids.entity, status: 'PENDING' });
    ids.unplacedPost = await insertPost(t, territory, author, { mapEntityId: null });
    ids.blockedPost = await insertPost(t, territory, blockedAuthor, { mapEntityId: ids.entity });

    ids.event = await insertEvent(t, territory, author, { title: 'Fair', latitude: -23.51, longitude: -46.61 });
    ids.cancelledEvent = await insertEvent(t, territory, author, { status: 'CANCELLED' });
    ids.blockedEvent = await insertEvent(t, territory, blockedAuthor);

    ids.asset = await insertAsset(t, territory, author, {
      name: 'Rio Verde',
      type: 'natural',
      subtype: 'river',
      anchors: [
        { latitude: -23.541, longitude: -46.641 },
        { latitude: -23.542, longitude: -46.642 },
      ],
    });
    ids.cultural = await insertAsset(t, territory, author, { name: 'Old church', type: 'cultural', subtype: null });
    ids.spring = await insertAsset(t, territory, author, { name: 'Spring', type: 'natural', subtype: 'spring' });
    ids.suggestedAsset = await insertAsset(t, territory, author, { status: 'Suggested' });
    ids.archivedAsset = await insertAsset(t, territory, author, { status: 'Archived' });
    ids.blockedAsset = await insertAsset(t, territory, blockedAuthor, { type: 'cultural', subtype: null });

    ids.alert = await insertAlert(t, territory, author, { title: 'Dengue outbreak', latitude: -23.53, longitude: -46.63 });
    ids.pendingAlert = await insertAlert(t, territory, author, { status: 'PENDING' });
    ids.unplacedAlert = await insertAlert(t, territory, author, { latitude: null, longitude: null });
    ids.blockedAlert = await insertAlert(t, territory, blockedAuthor);

    ids.postMedia = await insertMedia(t, { type: 'POST', id: ids.post }, author, { title: 'Bread photo' });
    ids.eventMedia = await insertMedia(t, { type: 'EVENT', id: ids.event }, author, { title: null });
    ids.deletedMedia = await insertMedia(t, { type: 'POST', id: ids.post }, author, { deleted: true });
    ids.unplacedMedia = await insertMedia(t, { type: 'POST', id: ids.unplacedPost }, author);
    ids.residentsPostMedia = await insertMedia(t, { type: 'POST', id: ids.residentsPost }, author);
  });

  it('gives a resident every kind of pin, grouped by type in the spec order, with its coordinates and title', async () => {
    const blocker = await newResident(t, territory);
    await block(t, blocker, blockedAuthor);
    const list = await pins(blocker, territory);
    expect(keys(list)).toEqual([
      `entity:${ids.residentsEntity}`,
      `entity:${ids.entity}`,
      `post:${ids.postAtResidentsEntity}`,
      `post:${ids.residentsPost}`,
      `post:${ids.post}`,
      `event:${ids.event}`,
      `asset:${ids.spring}`,
      `asset:${ids.cultural}`,
      `asset:${ids.asset}`,
      `asset:${ids.asset}`,
      `alert:${ids.alert}`,
      `media:${ids.residentsPostMedia}`,
      `media:${ids.eventMedia}`,
      `media:${ids.postMedia}`,
    ]);
    const byKey = (type: string, id: string | undefined) => list.filter((p) => p.type === type && p.id === id);
    expect(byKey('entity', ids.entity)[0]).toEqual({
      type: 'entity',
      id: ids.entity,
      latitude: -23.501,
      longitude: -46.601,
      title: 'Bakery',
      assetType: null,
      assetSubtype: null,
    });
    // A post is placed at its entity.
    expect(byKey('post', ids.post)[0]).toMatchObject({ latitude: -23.501, longitude: -46.601, title: 'Fresh bread' });
    expect(byKey('event', ids.event)[0]).toMatchObject({ latitude: -23.51, longitude: -46.61, title: 'Fair', assetType: null });
    // One pin per geo anchor, in the order given.
    expect(byKey('asset', ids.asset)).toEqual([
      { type: 'asset', id: ids.asset, latitude: -23.541, longitude: -46.641, title: 'Rio Verde', assetType: 'natural', assetSubtype: 'river' },
      { type: 'asset', id: ids.asset, latitude: -23.542, longitude: -46.642, title: 'Rio Verde', assetType: 'natural', assetSubtype: 'river' },
    ]);
    expect(byKey('asset', ids.cultural)[0]).toMatchObject({ assetType: 'cultural', assetSubtype: null });
    expect(byKey('alert', ids.alert)[0]).toMatchObject({ latitude: -23.53, longitude: -46.63, title: 'Dengue outbreak' });
    // Media is placed where its post's entity or its event is; titled by the media, else by its owner.
    expect(byKey('media', ids.postMedia)[0]).toMatchObject({ latitude: -23.501, longitude: -46.601, title: 'Bread photo' });
    expect(byKey('media', ids.eventMedia)[0]).toMatchObject({ latitude: -23.51, longitude: -46.61, title: 'Fair' });
  });

  it('shows a resident who blocked nobody the blocked author content too', async () => {
    const list = keys(await pins(await newResident(t, territory), territory));
    for (const [type, key] of [
      ['entity', 'blockedEntity'],
      ['post', 'blockedPost'],
      ['event', 'blockedEvent'],
      ['asset', 'blockedAsset'],
      ['alert', 'blockedAlert'],
    ] as const) {
      expect(list).toContain(`${type}:${ids[key]}`);
    }
  });

  it('gives a visitor PUBLIC content only: no RESIDENTS_ONLY entity, post, post at such an entity, or their media', async () => {
    const list = keys(await pins(await newVisitor(t, territory), territory));
    expect(list).toContain(`entity:${ids.entity}`);
    expect(list).toContain(`post:${ids.post}`);
    expect(list).toContain(`media:${ids.postMedia}`);
    for (const hidden of [
      `entity:${ids.residentsEntity}`,
      `post:${ids.residentsPost}`,
      `post:${ids.postAtResidentsEntity}`,
      `media:${ids.residentsPostMedia}`,
    ]) {
      expect(list).not.toContain(hidden);
    }
  });

  it("gives the territory's curators and moderators (residents or not) and system admins the residents' layer, as the feed does", async () => {
    const residentLayer = keys(await pins(await newResident(t, territory), territory));
    expect(residentLayer).toContain(`entity:${ids.residentsEntity}`);
    expect(residentLayer).toContain(`media:${ids.residentsPostMedia}`);
    const visitingCurator = await newUser(t);
    await addMembership(t, visitingCurator, territory, { role: 'VISITOR', capabilities: ['CURATOR'] });
    expect(keys(await pins(visitingCurator, territory))).toEqual(residentLayer);
    expect(keys(await pins(await newModerator(t, territory), territory))).toEqual(residentLayer);
    expect(keys(await pins(await newAdmin(t), territory))).toEqual(residentLayer);
  });

  it('gives a non-member the same PUBLIC layer as a visitor', async () => {
    const stranger = keys(await pins(await newUser(t), territory));
    const visitor = keys(await pins(await newVisitor(t, territory), territory));
    expect(stranger).toEqual(visitor);
  });

  it('filters by types (CSV, case-insensitive)', async () => {
    const resident = await newResident(t, territory);
    const list = await pins(resident, territory, '&types=Alert,%20event');
    // Events by start, latest first; the others newest first.
    expect(keys(list)).toEqual([`event:${ids.blockedEvent}`, `event:${ids.event}`, `alert:${ids.blockedAlert}`, `alert:${ids.alert}`]);
  });

  it('filters asset pins by assetId, assetTypes (type or subtype) and assetSubtypes (subtype only)', async () => {
    const resident = await newResident(t, territory);
    const assetPins = async (query: string) => [...new Set((await pins(resident, territory, `&types=asset${query}`)).map((p) => p.id))];
    expect(await assetPins(`&assetId=${ids.asset}`)).toEqual([ids.asset]);
    expect(await assetPins(`&assetId=${ids.suggestedAsset}`)).toEqual([]);
    expect((await assetPins('&assetTypes=cultural')).sort()).toEqual([ids.cultural, ids.blockedAsset].sort());
    // "spring" is a subtype: assetTypes matches it too.
    expect(await assetPins('&assetTypes=SPRING')).toEqual([ids.spring]);
    expect((await assetPins('&assetTypes=natural')).sort()).toEqual([ids.asset, ids.spring].sort());
    expect(await assetPins('&assetSubtypes=river')).toEqual([ids.asset]);
    // assetSubtypes compares the subtype only: the type "natural" matches nothing.
    expect(await assetPins('&assetSubtypes=natural')).toEqual([]);
    expect(await assetPins('&assetTypes=natural&assetSubtypes=spring')).toEqual([ids.spring]);
    // Other pin types are unaffected by asset filters.
    expect(keys(await pins(resident, territory, `&assetId=${ids.asset}`))).toContain(`entity:${ids.entity}`);
  });

  it('takes the territory from the X-Session-Id selection', async () => {
    const resident = await newResident(t, territory);
    await t.sql('insert into territory_selection (user_id, session_id, territory_id, updated_at_utc) values ($1, $2, $3, now())', [
      resident.id,
      'pins',
      territory.id,
    ]);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/map/pins?types=entity', headers: { ...resident.headers, 'x-session-id': 'pins' } });
    expect(res.statusCode).toBe(200);
    expect((res.json() as Pin[]).map((p) => p.id)).toContain(ids.entity);
  });

  it('pages with the envelope: same order as the plain list, totalCount of all pins', async () => {
    const resident = await newResident(t, territory);
    const all = keys(await pins(resident, territory));
    const seen: string[] = [];
    for (let pageNumber = 1; pageNumber <= 5; pageNumber++) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/map/pins/paged?territoryId=${territory.id}&pageSize=4&pageNumber=${pageNumber}`,
        headers: resident.headers,
      });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { items: Pin[]; totalCount: number; totalPages: number; hasNextPage: boolean; hasPreviousPage: boolean };
      expect(body.totalCount).toBe(all.length);
      expect(body.totalPages).toBe(Math.ceil(all.length / 4));
      expect(body.hasPreviousPage).toBe(pageNumber > 1);
      seen.push(...keys(body.items));
    }
    expect(seen).toEqual(all);
    const skipped = keys(await pins(resident, territory, '&skip=3&types=entity,post,event,asset,alert,media'));
    expect(skipped).toEqual(all.slice(3));
  });

  it('is 401 without a token, 400 for an unknown type or malformed ids, 404 for an unknown territory', async () => {
    const user = await newUser(t);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/map/pins?territoryId=${territory.id}` })).statusCode).toBe(401);
    const badType = await t.app.inject({ method: 'GET', url: `/api/v1/map/pins?territoryId=${territory.id}&types=entity,store`, headers: user.headers });
    expect(badType.statusCode).toBe(400);
    expect(badType.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'types' }] });
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/map/pins?territoryId=${territory.id}&assetId=x`, headers: user.headers })).statusCode).toBe(400);
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/v1/map/pins/paged?territoryId=${territory.id}&pageNumber=0`, headers: user.headers })).statusCode,
    ).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/map/pins?territoryId=${UNKNOWN_ID}`, headers: user.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/map/pins/paged?territoryId=${UNKNOWN_ID}`, headers: user.headers })).statusCode).toBe(404);
  });

  it('treats quotes, commas and braces in asset filters as data', async () => {
    const resident = await newResident(t, territory);
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/v1/map/pins?territoryId=${territory.id}&types=asset&assetTypes=${encodeURIComponent('"a}{b\\')}&assetSubtypes=${encodeURIComponent("x'y")}`,
      headers: resident.headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([]);
  });
});

describe('alert pins and the AlertPosts flag', () => {
  it('show only where alerts are enabled (the spec: "alerts work only when enabled")', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    await insertAlert(t, territory, resident, { title: 'Flooded street', status: 'VALIDATED', latitude: -23.5, longitude: -46.6 });
    const pins = async () => {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/map/pins/paged?territoryId=${territory.id}&types=alert`, headers: resident.headers });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { items: Pin[]; totalCount: number };
    };
    expect(await pins()).toMatchObject({ items: [], totalCount: 0 });
    await t.sql(`update territory set enabled_flags = array['ALERTPOSTS'] where id = $1`, [territory.id]);
    const shown = await pins();
    expect(shown.totalCount).toBe(1);
    expect(shown.items.map((p) => [p.type, p.title])).toEqual([['alert', 'Flooded street']]);
    const list = await t.app.inject({ method: 'GET', url: `/api/v1/map/pins?territoryId=${territory.id}`, headers: resident.headers });
    expect((list.json() as Pin[]).filter((p) => p.type === 'alert')).toHaveLength(1);
  });
});

describe('the hidden posts of the map pins', () => {
  it("run only for a reader who has HIDDEN posts here (found with the access), who sees theirs; everyone else's statements carry no hidden branch", async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const reader = await newResident(t, territory);
    const entity = await insertEntity(t, territory, author, { name: 'Square' });
    const shown = await insertPost(t, territory, author, { mapEntityId: entity });
    const hidden = await insertPost(t, territory, author, { mapEntityId: entity, status: 'HIDDEN' });
    const pool = (await (t.deps.orm.em as EntityManager).getConnection().getNativeClient()) as pg.Pool;
    const query = vi.spyOn(pool, 'query');
    try {
      const read = async (user: TestUser) => {
        query.mockClear();
        const res = await t.app.inject({ method: 'GET', url: `/api/v1/map/pins/paged?territoryId=${territory.id}&types=post,media`, headers: user.headers });
        expect(res.statusCode, res.body).toBe(200);
        const texts = query.mock.calls.map(([config]) => (typeof config === 'string' ? config : (config as { text: string }).text));
        const mapStatements = texts.filter((text) => /map_pin_counter|map_pin_owner/.test(text));
        expect(mapStatements, texts.join('\n')).toHaveLength(2);
        return { ids: res.json().items.map((p: { id: string }) => p.id), hiddenBranch: mapStatements.some((text) => text.includes(`'HIDDEN'`)) };
      };
      expect(await read(reader)).toEqual({ ids: [shown], hiddenBranch: false });
      expect(await read(author)).toEqual({ ids: [hidden, shown], hiddenBranch: true });
    } finally {
      query.mockRestore();
    }
  });
});
