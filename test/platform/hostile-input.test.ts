import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdmin, newUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

// Values a client can send that once reached PostgreSQL unchecked: none may answer 500.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('paging far beyond any list', () => {
  it.each(['/api/v1/territories?skip=2147483648', '/api/v1/territories/paged?pageNumber=99999999999', '/api/v1/territories/search?q=vila&skip=10000001'])(
    '%s is a 400',
    async (url) => {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    },
  );
});

describe('NUL bytes, lone surrogates and bidi overrides', () => {
  it('strips NUL from a social-login externalId instead of failing in the database', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/social',
      payload: { authProvider: 'test', externalId: 'x\u0000y', displayName: 'Nul', foreignDocument: 'P1234567' },
    });
    expect(res.statusCode).toBe(200);
    expect(await t.sql(`select 1 from app_user where external_id = 'xy'`)).toHaveLength(1);
  });

  it('stores a suggestion whose name holds a lone surrogate (it goes into a jsonb payload)', async () => {
    const user = await newUser(t);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/suggestions',
      headers: { ...user.headers, 'content-type': 'application/json' },
      payload: '{"name":"Vila \\ud800 Nova","description":"x","city":"Surrogate City","state":"SC","latitude":1,"longitude":2}',
    });
    expect(res.statusCode).toBe(201);
  });

  it('sanitizes admin territory tags like any free text', async () => {
    const admin = await newAdmin(t);
    const ok = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/territories',
      headers: admin.headers,
      payload: { name: 'Tagged', city: 'Tag City', state: 'TC', latitude: 3, longitude: 4, tags: ['\u202eevil', 'Nature'] },
    });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().tags).toEqual(['evil', 'nature']);
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/territories',
      headers: admin.headers,
      payload: { name: 'Tagged 2', city: 'Tag City', state: 'TC', latitude: 3, longitude: 4, tags: ['<script>x</script>'] },
    });
    expect(bad.statusCode).toBe(201);
    expect(bad.json().tags).toEqual(['x']);
  });

  it('answers a NUL in a query parameter without a 500', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories/search?q=ab%00cd' });
    expect(res.statusCode).toBeLessThan(500);
  });
});

describe('tRPC parse errors', () => {
  it('do not echo the parser message', async () => {
    const user = await newUser(t);
    const res = await t.app.inject({ method: 'GET', url: '/trpc/territories.byId?input=notjson', headers: user.headers });
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('Unexpected token');
  });
});
