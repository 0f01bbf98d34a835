import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * The token endpoint's refusals: every one in the RFC 6749 section 5.2 body (DESIGN section 15), whatever layer
 * refuses it, and its lockout in the spec's 429 (DESIGN section 4). Client registration refuses unsafe redirect URIs.
 */
let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const FORM = 'application/x-www-form-urlencoded';
const post = (headers: Record<string, string>, payload: string) => t.app.inject({ method: 'POST', url: '/oauth/token', headers, payload });
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

async function newClient() {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/clients', headers: admin.headers, payload: { name: 'App', scopes: ['journeys:read'] } });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; clientId: string; clientSecret: string };
}

/** What a refused token request could have written: secret attempts and audit rows. */
const written = async () => ({ attempts: await countRows(t, 'credential_attempt'), audit: await countRows(t, 'audit_entry') });

function expectOAuthError(res: Awaited<ReturnType<typeof post>>, status: number, error: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.json()).toEqual({ error, error_description: expect.any(String) });
}

describe('POST /oauth/token: HTTP Basic credentials', () => {
  it.each([['%zz:x'], ['abc:%E0%A4%A'], ['%:%'], ['no-colon']])('%s: 401 invalid_client with WWW-Authenticate Basic, nothing written', async (credentials) => {
    const before = await written();
    const res = await post({ 'content-type': FORM, authorization: basic(credentials) }, 'grant_type=client_credentials');
    expectOAuthError(res, 401, 'invalid_client');
    expect(res.headers['www-authenticate']).toBe('Basic realm="oauth"');
    expect(await written()).toEqual(before);
  });

  it('form-urlencoded id and secret are decoded (RFC 6749 section 2.3.1)', async () => {
    const client = await newClient();
    const encoded = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
    const res = await post({ 'content-type': FORM, authorization: basic(encoded) }, 'grant_type=client_credentials');
    expect(res.statusCode, res.body).toBe(200);
  });

  it('one method per request (RFC 6749 section 2.3): Basic and a client_secret in the form is 400 invalid_request; a client_id beside Basic is fine', async () => {
    const client = await newClient();
    const auth = basic(`${client.clientId}:${client.clientSecret}`);
    const before = await written();
    const both = await post({ 'content-type': FORM, authorization: auth }, `grant_type=client_credentials&client_secret=${client.clientSecret}`);
    expectOAuthError(both, 400, 'invalid_request');
    expect(await written()).toEqual(before);
    const withId = await post({ 'content-type': FORM, authorization: auth }, `grant_type=client_credentials&client_id=${client.clientId}`);
    expect(withId.statusCode, withId.body).toBe(200);
  });
});

describe('POST /oauth/token: parameters (RFC 6749 section 3.2)', () => {
  it.each(['scope=journeys:read&scope=journeys:read', 'client_id={id}', 'grant_type=client_credentials'])(
    'a repeated parameter is 400 invalid_request, nothing written: %s beside one of each',
    async (repeated) => {
      const client = await newClient();
      const before = await written();
      const once = `grant_type=client_credentials&client_id=${client.clientId}&client_secret=${client.clientSecret}`;
      expectOAuthError(await post({ 'content-type': FORM }, `${once}&${repeated.replaceAll('{id}', client.clientId)}`), 400, 'invalid_request');
      expect(await written()).toEqual(before);
    },
  );

  it('a parameter sent without a value is omitted: an empty client_secret beside Basic, an empty scope (every scope the client holds)', async () => {
    const client = await newClient();
    const auth = basic(`${client.clientId}:${client.clientSecret}`);
    const res = await post({ 'content-type': FORM, authorization: auth }, 'grant_type=client_credentials&client_secret=&scope=');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().scope).toBe('journeys:read');
  });
});

describe('POST /oauth/token: bodies that are not form-urlencoded are 400 invalid_request', () => {
  it.each([
    ['JSON', 'application/json', '{"grant_type":"client_credentials"}'],
    ['malformed JSON', 'application/json', '{bad'],
    ['XML', 'application/xml', '<a/>'],
    ['text', 'text/plain', 'grant_type=client_credentials'],
    ['multipart', 'multipart/form-data; boundary=x', '--x--'],
    ['an unparsable Content-Type', 'not a media type', 'grant_type=client_credentials'],
  ])('%s', async (_label, contentType, payload) => {
    const before = await written();
    expectOAuthError(await post({ 'content-type': contentType }, payload), 400, 'invalid_request');
    expect(await written()).toEqual(before);
  });

  it('no body at all', async () => {
    expectOAuthError(await t.app.inject({ method: 'POST', url: '/oauth/token' }), 400, 'invalid_request');
  });

  it('a form body over the body limit: 413 invalid_request', async () => {
    expectOAuthError(await post({ 'content-type': FORM }, `grant_type=client_credentials&pad=${'a'.repeat(1024 * 1024)}`), 413, 'invalid_request');
  });

  it('a form Content-Type with parameters or in other case is still a form', async () => {
    const client = await newClient();
    const fields = new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }).toString();
    expect((await post({ 'content-type': `${FORM}; charset=UTF-8` }, fields)).statusCode).toBe(200);
    expect((await post({ 'content-type': 'Application/X-WWW-Form-Urlencoded' }, fields)).statusCode).toBe(200);
  });
});

describe('POST /oauth/token: client ids that cannot name a client never reach the database', () => {
  it.each([['%00abc'], ['cli_%00'], ['%C3%28'], ['%ED%A0%80'], ['a'.repeat(70)]])('client_id=%s: 401 invalid_client, nothing written', async (id) => {
    const before = await written();
    expectOAuthError(await post({ 'content-type': FORM }, `grant_type=client_credentials&client_id=${id}&client_secret=x`), 401, 'invalid_client');
    expect(await written()).toEqual(before);
  });

  it('a NUL byte in a Basic id: 401 invalid_client', async () => {
    expectOAuthError(await post({ 'content-type': FORM, authorization: basic('\0abc:x') }, 'grant_type=client_credentials'), 401, 'invalid_client');
  });

  it('a valid id followed by more characters is not that client', async () => {
    const client = await newClient();
    const res = await post(
      { 'content-type': FORM },
      new URLSearchParams({ grant_type: 'client_credentials', client_id: `${client.clientId}x`, client_secret: client.clientSecret }).toString(),
    );
    expectOAuthError(res, 401, 'invalid_client');
  });
});

describe('POST /oauth/token: the lockout after too many wrong secrets', () => {
  it("is the spec's 429 with Retry-After 60, keeping error and error_description", async () => {
    const client = await newClient();
    const form = (secret: string) =>
      post({ 'content-type': FORM }, new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: secret }).toString());
    for (let i = 0; i < 10; i++) expect((await form(`wrong-${i}`)).statusCode).toBe(401);
    const res = await form(client.clientSecret);
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      type: 'https://tools.ietf.org/html/rfc6585#section-4',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit exceeded. Please try again later.',
      instance: '/oauth/token',
      code: 'RATE_LIMIT_EXCEEDED',
      error: 'invalid_client',
      error_description: 'Too many failed attempts for this client; try again later.',
    });
  });

  it("the auth rate limit on the endpoint is the spec's 429 too", async () => {
    const limited = await createTestApp({ RateLimiting__Auth__PermitLimit: '1' });
    try {
      const send = () =>
        limited.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': FORM }, payload: 'grant_type=client_credentials' });
      expect((await send()).statusCode).toBe(401);
      const res = await send();
      expect(res.statusCode).toBe(429);
      expect(res.headers['retry-after']).toBe('60');
      expect(res.json()).toMatchObject({
        title: 'Too Many Requests',
        status: 429,
        detail: 'Rate limit exceeded. Please try again later.',
        instance: '/oauth/token',
      });
    } finally {
      await limited.close();
    }
  });
});

describe('POST /api/v1/admin/clients: redirect URIs (spec Authentication 11)', () => {
  it.each([['javascript:alert(1)'], [' JavaScript:alert(1)'], ['data:text/html,<script>alert(1)</script>'], ['vbscript:msgbox(1)'], ['ftp://example.org/cb']])(
    '%s: 400 VALIDATION_FAILED naming the field, nothing written',
    async (uri) => {
      const before = await countRows(t, 'client_application');
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/admin/clients',
        headers: admin.headers,
        payload: { name: 'App', scopes: ['journeys:read'], redirectUris: ['https://app.example.org/cb', uri] },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [{ field: 'redirectUris.1', message: expect.any(String) }] });
      expect(await countRows(t, 'client_application')).toBe(before);
    },
  );
});
