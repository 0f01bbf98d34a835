/**
 * How the REST bridge (src/openapi/plugin.ts) and the shared id schema read what a client sends in a URL: an empty
 * number is absent (not `Number('') === 0`), and a UUID is the same id in either case.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTerritory, newVisitor } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
});
afterAll(() => t.close());

describe('empty numbers in the query', () => {
  it('are a 400 naming the field where the number is required (no events near 0,0 for an unset form field)', async () => {
    const territory = await newTerritory(t);
    const visitor = await newVisitor(t, territory);
    for (const url of ['/api/v1/events/nearby?lat=&lng=', '/api/v1/events/nearby?lat=&lng=0', '/api/v1/territories/nearby?lat=1&lng=']) {
      const res = await t.app.inject({ method: 'GET', url, headers: visitor.headers });
      expect([url, res.statusCode]).toEqual([url, 400]);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/events/nearby?lat=&lng=', headers: visitor.headers });
    expect(JSON.stringify(res.json())).toContain('lat');
  });

  it('take their default where the number is optional', async () => {
    const empty = await t.app.inject({ method: 'GET', url: '/api/v1/territories?skip=&take=' });
    const absent = await t.app.inject({ method: 'GET', url: '/api/v1/territories' });
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual(absent.json());
    const paged = await t.app.inject({ method: 'GET', url: '/api/v1/territories/paged?pageNumber=&pageSize=' });
    expect(paged.statusCode).toBe(200);
    expect(paged.json()).toMatchObject({ pageNumber: 1, pageSize: 20 });
  });

  it('a zero that was sent is still a zero', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories?take=0' });
    expect(res.statusCode).toBe(400);
  });
});

describe('UUIDs in upper case', () => {
  it("name the same territory as in lower case (a map entity's confirmation, compared with its row's territory)", async () => {
    const territory = await newTerritory(t);
    const visitor = await newVisitor(t, territory);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/v1/map/entities',
      headers: visitor.headers,
      payload: { territoryId: territory.id.toUpperCase(), name: 'Well', category: 'water', latitude: 1, longitude: 1 },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().territoryId).toBe(territory.id);
    const id = created.json().id as string;
    const url = `/api/v1/map/entities/${id.toUpperCase()}/confirmations?territoryId=${territory.id.toUpperCase()}`;
    const confirmed = await t.app.inject({ method: 'POST', url, headers: visitor.headers });
    expect(confirmed.statusCode).toBe(201);
    expect(confirmed.json()).toMatchObject({ id, territoryId: territory.id, confirmationCount: 1 });
  });
});
