import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newTerritory, newUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('GET /api/v1/territories', () => {
  it('lists ACTIVE territories only, without membership data', async () => {
    const active = await newTerritory(t, { name: 'Alpha' });
    await newTerritory(t, { name: 'Pending one', status: 'PENDING' });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories?take=100' });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { id: string; status: string }[];
    expect(body.map((x) => x.id)).toContain(active.id);
    expect(body.every((x) => x.status === 'ACTIVE')).toBe(true);
    expect(Object.keys(body[0] ?? {})).not.toContain('role');
  });

  it('rejects take above 100 with a problem body', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories?take=101' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'take' }] });
  });
});

describe('GET /api/v1/territories/{id}', () => {
  it('needs a token', async () => {
    const territory = await newTerritory(t);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/territories/${territory.id}` });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });
  it('returns the territory, 404 when unknown, 400 when malformed', async () => {
    const user = await newUser(t);
    const territory = await newTerritory(t);
    const ok = await t.app.inject({ method: 'GET', url: `/api/v1/territories/${territory.id}`, headers: user.headers });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ id: territory.id, name: territory.name, status: 'ACTIVE' });
    const missing = await t.app.inject({ method: 'GET', url: `/api/v1/territories/${UNKNOWN_ID}`, headers: user.headers });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'NOT_FOUND' });
    const malformed = await t.app.inject({ method: 'GET', url: `/api/v1/territories/not-a-uuid`, headers: user.headers });
    expect(malformed.statusCode).toBe(400);
  });
});

describe('POST /api/v1/admin/territories', () => {
  const body = { name: 'Centro', description: 'Downtown', city: 'Curitiba', state: 'PR', latitude: -25.43, longitude: -49.27 };
  it('creates an ACTIVE territory for a SYSTEM_ADMIN (201 + Location)', async () => {
    const admin = await newAdmin(t);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/territories', headers: admin.headers, payload: body });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ ...body, status: 'ACTIVE', radiusKm: 5 });
    expect(res.headers.location).toBe(`/api/v1/territories/${res.json().id}`);
  });
  it('is 403 for a non-admin and 400 on bad input, writing nothing', async () => {
    const before = await countRows(t, 'territory');
    const user = await newUser(t);
    const forbidden = await t.app.inject({ method: 'POST', url: '/api/v1/admin/territories', headers: user.headers, payload: body });
    expect(forbidden.statusCode).toBe(403);
    const admin = await newAdmin(t);
    const bad = await t.app.inject({ method: 'POST', url: '/api/v1/admin/territories', headers: admin.headers, payload: { ...body, latitude: 120 } });
    expect(bad.statusCode).toBe(400);
    expect(await countRows(t, 'territory')).toBe(before);
  });
});
