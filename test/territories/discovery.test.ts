import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haversineKm } from '../../src/platform/geo.js';
import { escapeLike, nearbyBoxes } from '../../src/routers/territories/territories.queries.js';
import { newAdmin, newTerritory, newUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Item {
  id: string;
  name: string;
  status: string;
  distanceKm?: number;
  [key: string]: unknown;
}
const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });
const ids = (items: Item[]) => items.map((x) => x.id);

/** A point `km` due north of (lat, lng). */
const north = (lat: number, km: number) => lat + km / ((2 * Math.PI * 6371.0088) / 360);

describe('nearbyBoxes', () => {
  it('contains the whole circle, splits at the antimeridian and opens up at the poles', () => {
    const [box] = nearbyBoxes(-25.43, -49.27, 25);
    expect(box!.maxLat).toBeGreaterThanOrEqual(north(-25.43, 25));
    expect(nearbyBoxes(0, 179.95, 25)).toHaveLength(2);
    expect(nearbyBoxes(0, -179.95, 25)).toHaveLength(2);
    expect(nearbyBoxes(89.99, 10, 25)).toEqual([{ minLng: -180, maxLng: 180, minLat: expect.any(Number), maxLat: 90 }]);
  });
  it('escapes LIKE wildcards', () => {
    expect(escapeLike('50%_a\\b')).toBe('50\\%\\_a\\\\b');
  });
});

describe('GET /api/v1/territories/nearby', () => {
  const centre = { lat: -25.43, lng: -49.27 };
  let near: { id: string }, mid: { id: string }, edge: { id: string }, far: { id: string }, pending: { id: string };
  beforeAll(async () => {
    near = await newTerritory(t, { name: 'Near', latitude: -25.435, longitude: -49.275 });
    mid = await newTerritory(t, { name: 'Mid', latitude: -25.5, longitude: -49.2 });
    // 24.9 km due north: inside the default 25 km, near the prefilter box edge.
    edge = await newTerritory(t, { name: 'Edge', latitude: north(centre.lat, 24.9), longitude: centre.lng });
    far = await newTerritory(t, { name: 'Far', latitude: -25.73, longitude: -49.27 });
    pending = await newTerritory(t, { name: 'Pending near', latitude: -25.431, longitude: -49.271, status: 'PENDING' });
  });

  it('is public and lists ACTIVE territories within 25 km by default, nearest first, with distanceKm', async () => {
    const res = await get(`/api/v1/territories/nearby?lat=${centre.lat}&lng=${centre.lng}`);
    expect(res.statusCode).toBe(200);
    const body = res.json() as Item[];
    expect(ids(body)).toEqual([near.id, mid.id, edge.id]);
    expect(ids(body)).not.toContain(pending.id);
    expect(ids(body)).not.toContain(far.id);
    expect(body[0]!.distanceKm).toBeCloseTo(haversineKm(centre.lat, centre.lng, -25.435, -49.275), 2);
    expect(body[2]!.distanceKm).toBeCloseTo(24.9, 1);
    expect(body[0]).toMatchObject({ name: 'Near', status: 'ACTIVE', description: null, parentTerritoryId: null, tags: [] });
    expect(Object.keys(body[0]!)).not.toEqual(expect.arrayContaining(['role']));
    expect(Object.keys(body[0]!).sort()).toEqual(
      [
        'id',
        'name',
        'description',
        'city',
        'state',
        'latitude',
        'longitude',
        'radiusKm',
        'parentTerritoryId',
        'status',
        'tags',
        'createdAtUtc',
        'distanceKm',
      ].sort(),
    );
  });

  it('honours radiusKm and limit', async () => {
    const wide = (await get(`/api/v1/territories/nearby?lat=${centre.lat}&lng=${centre.lng}&radiusKm=50`)).json() as Item[];
    expect(ids(wide)).toEqual([near.id, mid.id, edge.id, far.id]);
    const one = (await get(`/api/v1/territories/nearby?lat=${centre.lat}&lng=${centre.lng}&limit=1`)).json() as Item[];
    expect(ids(one)).toEqual([near.id]);
    const small = (await get(`/api/v1/territories/nearby?lat=${centre.lat}&lng=${centre.lng}&radiusKm=1`)).json() as Item[];
    expect(ids(small)).toEqual([near.id]);
  });

  it('finds territories across the antimeridian and around a pole', async () => {
    const east = await newTerritory(t, { name: 'Date line east', latitude: 0, longitude: 179.9 });
    const west = await newTerritory(t, { name: 'Date line west', latitude: 0, longitude: -179.9 });
    const fromEast = (await get('/api/v1/territories/nearby?lat=0&lng=179.95')).json() as Item[];
    expect(ids(fromEast)).toEqual([east.id, west.id]);
    const fromWest = (await get('/api/v1/territories/nearby?lat=0&lng=-179.99')).json() as Item[];
    expect(ids(fromWest)).toEqual([west.id, east.id]);

    const a = await newTerritory(t, { name: 'Pole A', latitude: 89.95, longitude: 0 });
    const b = await newTerritory(t, { name: 'Pole B', latitude: 89.95, longitude: 180 });
    const polar = (await get('/api/v1/territories/nearby?lat=89.99&lng=-90')).json() as Item[];
    expect(ids(polar).sort()).toEqual([a.id, b.id].sort());
  });

  it('answers 400 on missing or out-of-range parameters', async () => {
    for (const query of [
      'lng=-49.27',
      'lat=-25.43',
      'lat=91&lng=0',
      'lat=0&lng=-181',
      'lat=abc&lng=0',
      'lat=0&lng=0&radiusKm=0',
      'lat=0&lng=0&radiusKm=501',
      'lat=0&lng=0&limit=0',
      'lat=0&lng=0&limit=101',
    ]) {
      const res = await get(`/api/v1/territories/nearby?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
  });
});

describe('GET /api/v1/territories/search', () => {
  let alpha: { id: string }, beta: { id: string }, gamma: { id: string }, percent: { id: string }, pending: { id: string };
  beforeAll(async () => {
    alpha = await newTerritory(t, { name: 'Xylo Centro', city: 'Quixote Falls', state: 'QQ' });
    beta = await newTerritory(t, { name: 'Xylo Norte', city: 'Quixote Falls', state: 'QW' });
    gamma = await newTerritory(t, { name: 'Praia Xylo', city: 'Vimtown', state: 'QQ' });
    percent = await newTerritory(t, { name: 'Feira 100% Xylo', city: 'Vimtown', state: 'VV' });
    pending = await newTerritory(t, { name: 'Xylo Pending', city: 'Quixote Falls', state: 'QQ', status: 'PENDING' });
  });

  it('is public; q matches name, city or state partially and case-insensitively; ACTIVE only, by relevance then name', async () => {
    const res = await get('/api/v1/territories/search?q=xYLo');
    expect(res.statusCode).toBe(200);
    const body = res.json() as Item[];
    // Names starting with q first, then names containing it, each by name.
    expect(ids(body)).toEqual([alpha.id, beta.id, percent.id, gamma.id]);
    expect(ids(body)).not.toContain(pending.id);
    expect(body.every((x) => x.status === 'ACTIVE' && !('role' in x))).toBe(true);
    const byCity = (await get('/api/v1/territories/search?q=vimtown')).json() as Item[];
    expect(ids(byCity)).toEqual([percent.id, gamma.id]);
  });

  it('combines q, city and state with AND', async () => {
    const cityOnly = (await get('/api/v1/territories/search?city=quixote')).json() as Item[];
    expect(ids(cityOnly)).toEqual([alpha.id, beta.id]);
    const cityAndState = (await get('/api/v1/territories/search?city=QUIXOTE%20falls&state=qq')).json() as Item[];
    expect(ids(cityAndState)).toEqual([alpha.id]);
    const all = (await get('/api/v1/territories/search?q=centro&city=Quixote&state=QQ')).json() as Item[];
    expect(ids(all)).toEqual([alpha.id]);
    const none = (await get('/api/v1/territories/search?q=norte&state=qq')).json() as Item[];
    expect(none).toEqual([]);
  });

  it('treats LIKE wildcards in the input literally', async () => {
    expect(ids((await get('/api/v1/territories/search?q=0%25%20xylo')).json())).toEqual([percent.id]);
    expect((await get('/api/v1/territories/search?q=%25%25%25')).json()).toEqual([]);
    expect((await get('/api/v1/territories/search?q=xyl_%20centro')).json()).toEqual([]);
    expect((await get('/api/v1/territories/search?city=_')).json()).toEqual([]);
  });

  it('matches non-ASCII text case-insensitively', async () => {
    const sao = await newTerritory(t, { name: 'Vila Água', city: 'São Tomé', state: 'ST' });
    expect(ids((await get(`/api/v1/territories/search?city=${encodeURIComponent('SÃO TO')}`)).json())).toEqual([sao.id]);
    expect(ids((await get(`/api/v1/territories/search?q=${encodeURIComponent('ÁGUA')}`)).json())).toEqual([sao.id]);
  });

  it('pages with skip/take; take above 100 is a 400', async () => {
    const second = (await get('/api/v1/territories/search?q=xylo&skip=1&take=2')).json() as Item[];
    expect(ids(second)).toEqual([beta.id, percent.id]);
    const bad = await get('/api/v1/territories/search?q=xylo&take=101');
    expect(bad.statusCode).toBe(400);
    expect((await get('/api/v1/territories/search?skip=-1')).statusCode).toBe(400);
  });

  it('has a /paged variant with the page envelope', async () => {
    const res = await get('/api/v1/territories/search/paged?q=xylo&pageNumber=2&pageSize=3');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      items: [expect.objectContaining({ id: gamma.id })],
      pageNumber: 2,
      pageSize: 3,
      totalCount: 4,
      totalPages: 2,
      hasPreviousPage: true,
      hasNextPage: false,
    });
    expect((await get('/api/v1/territories/search/paged?pageSize=0')).statusCode).toBe(400);
    expect((await get('/api/v1/territories/search/paged?pageNumber=0')).statusCode).toBe(400);
  });
});

describe('GET /api/v1/territories and /paged', () => {
  it('list ACTIVE territories only, by name, with the page envelope on /paged', async () => {
    const res = await get('/api/v1/territories/paged?pageSize=100');
    expect(res.statusCode).toBe(200);
    const page = res.json() as { items: Item[]; totalCount: number; pageNumber: number };
    const [{ n }] = (await t.sql<{ n: number }>(`select count(*)::int as n from territory where status = 'ACTIVE'`)) as [{ n: number }];
    expect(page.totalCount).toBe(n);
    expect(page.items.every((x) => x.status === 'ACTIVE')).toBe(true);
    const names = page.items.map((x) => x.name);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const plain = (await get('/api/v1/territories?take=100')).json() as Item[];
    expect(ids(plain)).toEqual(ids(page.items));
  });
});

describe('GET /api/v1/territories/{id} visibility', () => {
  it('shows PENDING and REJECTED territories only to their suggester and to SYSTEM_ADMIN', async () => {
    const suggester = await newUser(t);
    const other = await newUser(t);
    const admin = await newAdmin(t);
    for (const status of ['PENDING', 'REJECTED']) {
      const territory = await newTerritory(t, { status });
      await t.sql('update territory set suggested_by_user_id = $1 where id = $2', [suggester.id, territory.id]);
      const url = `/api/v1/territories/${territory.id}`;
      expect((await get(url, suggester.headers)).json()).toMatchObject({ id: territory.id, status });
      expect((await get(url, admin.headers)).statusCode).toBe(200);
      const hidden = await get(url, other.headers);
      expect(hidden.statusCode).toBe(404);
      expect(hidden.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
    const active = await newTerritory(t, { tags: ['arts'] });
    expect((await get(`/api/v1/territories/${active.id}`, other.headers)).json()).toMatchObject({ id: active.id, tags: ['arts'] });
  });
});
