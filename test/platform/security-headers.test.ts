import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, UNKNOWN_ID } from '../factories/index.js';
import type { TestApp } from '../setup/test-app.js';
import { createAppWith, PRODUCTION_ENV } from './support.js';

const HSTS = 'max-age=31536000; includeSubDomains; preload';

/** The specification's headers (Authentication 10), expected on every response. */
function expectSecurityHeaders(res: LightMyRequestResponse) {
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-xss-protection']).toBe('1; mode=block');
  expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
  expect(res.headers['permissions-policy']).toBe('geolocation=(), microphone=(), camera=()');
  const csp = String(res.headers['content-security-policy'] ?? '');
  expect(csp).not.toBe('');
  // script-src falls back to default-src when absent: neither may allow inline or eval scripts.
  const directives = new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name, values]),
  );
  const scripts = directives.get('script-src') ?? directives.get('default-src') ?? [];
  expect(scripts).not.toContain("'unsafe-inline'");
  expect(scripts).not.toContain("'unsafe-eval'");
}

describe('security headers on every response (development, plain HTTP)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createAppWith({ RateLimiting__PermitLimit: '20' });
  });
  afterAll(() => t.close());

  it('200', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories' });
    expect(res.statusCode).toBe(200);
    expectSecurityHeaders(res);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });

  it('401', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/territories/${UNKNOWN_ID}` });
    expect(res.statusCode).toBe(401);
    expectSecurityHeaders(res);
  });

  it('404 of an unknown route', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/no-such-thing' });
    expect(res.statusCode).toBe(404);
    expectSecurityHeaders(res);
  });

  it('429', async () => {
    const user = await newUser(t);
    let res: LightMyRequestResponse | undefined;
    // A user's own counter: the other tests here count against the IP.
    for (let i = 0; i < 21; i++) res = await t.app.inject({ method: 'GET', url: '/api/v1/territories', headers: user.headers });
    expect(res?.statusCode).toBe(429);
    expectSecurityHeaders(res!);
  });

  it('the docs page (its own CSP still allows no inline or eval scripts)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expectSecurityHeaders(res);
  });

  it('the OpenAPI document and tRPC responses', async () => {
    expectSecurityHeaders(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    expectSecurityHeaders(await t.app.inject({ method: 'GET', url: '/trpc/territories.list?input=%7B%7D' }));
  });

  it('development CORS allows any origin', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health', headers: { origin: 'http://localhost:5173' } });
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
  });

  it('every answer that may echo an origin varies by it, tRPC answers too (they bring their own Vary)', async () => {
    const headers = { origin: 'http://localhost:5173' };
    const rest = await t.app.inject({ method: 'GET', url: '/api/v1/territories', headers });
    expect(rest.headers.vary).toBe('Origin');
    for (const url of ['/trpc/territories.list?input=%7B%7D', `/trpc/territories.byId?input=${encodeURIComponent(JSON.stringify({ id: UNKNOWN_ID }))}`]) {
      const res = await t.app.inject({ method: 'GET', url, headers });
      expect(res.headers['access-control-allow-origin'], url).toBe('http://localhost:5173');
      expect(String(res.headers.vary).split(', '), url).toEqual(expect.arrayContaining(['trpc-accept', 'accept', 'Origin']));
    }
  });
});

describe('production: HTTPS, HSTS and CORS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createAppWith({ ...PRODUCTION_ENV });
  });
  afterAll(() => t.close());

  it('sends HSTS over HTTPS (X-Forwarded-Proto from the trusted proxy)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories', headers: { 'x-forwarded-proto': 'https' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['strict-transport-security']).toBe(HSTS);
    expectSecurityHeaders(res);
  });

  it('HSTS also on HTTPS error responses', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nothing-here', headers: { 'x-forwarded-proto': 'https' } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['strict-transport-security']).toBe(HSTS);
  });

  it('redirects plain HTTP to HTTPS, without HSTS on the redirect', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories?take=5', headers: { host: 'api.example.org' } });
    expect(res.statusCode).toBe(308);
    expect(res.headers.location).toBe('https://api.example.org/api/v1/territories?take=5');
    expect(res.headers['strict-transport-security']).toBeUndefined();
    expectSecurityHeaders(res);
  });

  it('leaves health probes on plain HTTP alone, with a query string too (a load balancer cache-buster)', async () => {
    for (const url of ['/health', '/ready', '/health?probe=1', '/ready?lb=1']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
    }
  });

  it('echoes an allowed origin', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/territories',
      headers: { 'x-forwarded-proto': 'https', origin: 'https://admin.example.org' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://admin.example.org');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    // A browser script may read what the API's clients need: where a created thing is, when to retry, the limits.
    expect(res.headers['access-control-expose-headers']).toBe('Location, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset');
  });

  it('answers a preflight from an allowed origin', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/admin/territories',
      headers: {
        'x-forwarded-proto': 'https',
        origin: 'https://app.example.org',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.org');
    expect(String(res.headers['access-control-allow-methods'])).toContain('POST');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-allow-headers']).toBe('authorization,content-type');
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers['content-length']).toBe('0');
    expectSecurityHeaders(res);
  });

  it('a preflight allows every method the operations use (PUT, PATCH and DELETE too)', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const res = await t.app.inject({
        method: 'OPTIONS',
        url: '/api/v1/admin/territories',
        headers: { 'x-forwarded-proto': 'https', origin: 'https://app.example.org', 'access-control-request-method': method },
      });
      expect(res.statusCode).toBe(204);
      expect(String(res.headers['access-control-allow-methods']).split(', ')).toContain(method);
    }
  });

  it('a request without Origin (not a browser) varies by origin and carries no CORS grant', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories', headers: { 'x-forwarded-proto': 'https' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers.vary).toBe('Origin');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-expose-headers']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('does not echo a disallowed origin', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v1/territories',
      headers: { 'x-forwarded-proto': 'https', origin: 'https://evil.example.com' },
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/admin/territories',
      headers: { 'x-forwarded-proto': 'https', origin: 'https://evil.example.com', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });
});
