import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newTerritory, newUser, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/** Client applications of the journeys API and the OAuth 2.0 client-credentials token endpoint (RFC 6749 4.4). */
let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const register = (headers: Record<string, string>, payload: Record<string, unknown> = { name: 'Mobile app', scopes: ['journeys:read', 'journeys:write'] }) =>
  t.app.inject({ method: 'POST', url: '/api/v1/admin/clients', headers, payload });
const token = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(fields).toString(),
  });
const journey = (accessToken: string | null, query = 'latitude=-23.55&longitude=-46.63') =>
  t.app.inject({
    method: 'GET',
    url: `/api/v2/journeys/onboarding/suggested-territories?${query}`,
    headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {},
  });

async function newClient(scopes = ['journeys:read', 'journeys:write']) {
  const res = await register(admin.headers, { name: 'App', scopes });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; clientId: string; clientSecret: string };
}
async function accessTokenOf(client: { clientId: string; clientSecret: string }, scope?: string) {
  const res = await token({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, ...(scope ? { scope } : {}) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { access_token: string; token_type: string; expires_in: number; scope: string };
}

describe('POST /api/v1/admin/clients', () => {
  it('201 (no Location: no URL reads one client); the secret is shown once and stored only as a hash', async () => {
    const res = await register(admin.headers, {
      name: 'Mobile app',
      description: 'iOS',
      scopes: ['journeys:read'],
      redirectUris: ['https://app.example.org/cb'],
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      name: 'Mobile app',
      description: 'iOS',
      scopes: ['journeys:read'],
      redirectUris: ['https://app.example.org/cb'],
      isActive: true,
    });
    expect(body.clientId).toMatch(/^cli_[0-9a-f]{24}$/);
    expect(body.clientSecret.length).toBeGreaterThanOrEqual(40);
    expect(res.headers.location).toBeUndefined();
    const [row] = await t.sql<{ secret_hash: string }>('select secret_hash from client_application where id = $1', [body.id]);
    expect(row!.secret_hash).toMatch(/^scrypt\$/);
    expect(row!.secret_hash).not.toContain(body.clientSecret);
    const listed = await t.app.inject({ method: 'GET', url: '/api/v1/admin/clients', headers: admin.headers });
    expect(listed.statusCode).toBe(200);
    expect(JSON.stringify(listed.json())).not.toContain(body.clientSecret);
  });

  it('401 without a token, 403 for a non-admin, 400 for bad input with nothing written', async () => {
    const before = await countRows(t, 'client_application');
    expect((await register({})).statusCode).toBe(401);
    expect((await register((await newUser(t)).headers)).statusCode).toBe(403);
    for (const payload of [
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['admin:everything'] },
      { scopes: ['journeys:read'] },
      { name: 'x', scopes: ['journeys:read'], redirectUris: ['not a url'] },
    ]) {
      expect((await register(admin.headers, payload)).statusCode).toBe(400);
    }
    expect(await countRows(t, 'client_application')).toBe(before);
  });
});

describe('POST /oauth/token', () => {
  it('issues a client token with the requested scopes it holds (none requested: all), not cached', async () => {
    const client = await newClient();
    const res = await token({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, scope: 'journeys:read' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'journeys:read' });
    expect((await accessTokenOf(client)).scope).toBe('journeys:read journeys:write');
  });

  it('HTTP Basic client authentication works too', async () => {
    const client = await newClient();
    const basic = Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64');
    const res = await token({ grant_type: 'client_credentials' }, { authorization: `Basic ${basic}` });
    expect(res.statusCode).toBe(200);
  });

  it('RFC 6749 errors: invalid_client 401, invalid_scope, unsupported_grant_type, non-form body 400', async () => {
    const client = await newClient(['journeys:read']);
    const wrong = await token({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: 'nope' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    expect((await token({ grant_type: 'client_credentials', client_id: 'cli_unknown', client_secret: 'x' })).json().error).toBe('invalid_client');
    const scope = await token({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, scope: 'journeys:write' });
    expect(scope.statusCode).toBe(400);
    expect(scope.json().error).toBe('invalid_scope');
    expect((await token({ grant_type: 'password', client_id: client.clientId, client_secret: client.clientSecret })).json().error).toBe(
      'unsupported_grant_type',
    );
    const json = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials' } });
    expect(json.statusCode).toBe(400);
    expect(json.json().error).toBe('invalid_request');
  });

  it('secret guessing is bounded per client: after 10 wrong secrets even the right one is refused (429)', async () => {
    const client = await newClient();
    for (let i = 0; i < 10; i++) {
      expect((await token({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: `wrong-${i}` })).statusCode).toBe(401);
    }
    const locked = await token({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret });
    expect(locked.statusCode).toBe(429);
  });
});

describe('client tokens on the journeys API', () => {
  it('a read token answers the onboarding journey; the v2 error body without or with a wrong token', async () => {
    const territory = await newTerritory(t);
    const { access_token } = await accessTokenOf(await newClient(['journeys:read']));
    const res = await journey(access_token, `latitude=${territory.latitude}&longitude=${territory.longitude}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().territories[0]).toMatchObject({ id: territory.id, distanceKm: expect.any(Number) });
    const anonymous = await journey(null);
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ code: 'UNAUTHORIZED', error: expect.any(String), timestamp: expect.any(String) });
    // A user JWT is not a client token, and a client token is not a user token.
    expect((await journey((await newUser(t)).token)).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: `Bearer ${access_token}` } })).statusCode).toBe(401);
    const bad = await journey(access_token, 'latitude=abc&longitude=1');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('INVALID_REQUEST');
  });

  it('a token without the scope: 403', async () => {
    const client = await newClient(['journeys:write']);
    expect((await journey((await accessTokenOf(client)).access_token)).statusCode).toBe(403);
  });

  it('rotation and deactivation take effect at once', async () => {
    const client = await newClient();
    const before = (await accessTokenOf(client)).access_token;
    const rotated = await t.app.inject({ method: 'POST', url: `/api/v1/admin/clients/${client.id}/rotate-secret`, headers: admin.headers });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().clientSecret).not.toBe(client.clientSecret);
    expect((await journey(before)).statusCode).toBe(401);
    expect((await token({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret })).statusCode).toBe(401);
    const after = (await accessTokenOf({ clientId: client.clientId, clientSecret: rotated.json().clientSecret })).access_token;
    expect((await journey(after)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/clients/${client.id}`, headers: admin.headers })).statusCode).toBe(204);
    expect((await journey(after)).statusCode).toBe(401);
    expect((await token({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: rotated.json().clientSecret })).statusCode).toBe(401);
  });

  it('two rotations at once are two in turn: the secret version moves twice, the later secret is the live one, no token of the one between survives', async () => {
    const client = await newClient();
    const rotate = () => t.app.inject({ method: 'POST', url: `/api/v1/admin/clients/${client.id}/rotate-secret`, headers: admin.headers });
    const answers = await Promise.all([rotate(), rotate()]);
    expect(answers.map((res) => res.statusCode)).toEqual([200, 200]);
    expect(await t.sql('select secret_version from client_application where id = $1', [client.id])).toEqual([{ secret_version: 3 }]);
    const issued = await Promise.all(
      answers.map((res) => token({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: res.json().clientSecret })),
    );
    expect(issued.map((res) => res.statusCode).sort()).toEqual([200, 401]);
  });

  it('rotate and deactivate: 404 for an unknown client, 403 for a non-admin', async () => {
    const other = await newUser(t);
    expect(
      (await t.app.inject({ method: 'POST', url: '/api/v1/admin/clients/0190a4f6-0000-7000-8000-000000000000/rotate-secret', headers: admin.headers }))
        .statusCode,
    ).toBe(404);
    expect(
      (await t.app.inject({ method: 'DELETE', url: '/api/v1/admin/clients/0190a4f6-0000-7000-8000-000000000000', headers: other.headers })).statusCode,
    ).toBe(403);
  });
});
