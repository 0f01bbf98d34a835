import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { TestApp } from '../setup/test-app.js';
import { createAppWith, PRODUCTION_ENV } from '../platform/support.js';

describe('production configuration (findings 17, 19)', () => {
  it('refuses to start without PUBLIC_BASE_URL, or with a plain http one', () => {
    const { PUBLIC_BASE_URL: _omitted, ...without } = PRODUCTION_ENV;
    for (const env of [without, { ...PRODUCTION_ENV, PUBLIC_BASE_URL: 'http://api.example.org' }]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow('PUBLIC_BASE_URL must be configured in production as the https:// origin clients use');
    }
  });

  it('never seeds demo data in production, whatever SEED_DEMO_DATA says', () => {
    expect(loadConfig({ ...PRODUCTION_ENV, SEED_DEMO_DATA: 'true' }).seedDemoData).toBe(false);
    expect(loadConfig({ SEED_DEMO_DATA: 'true' }).seedDemoData).toBe(true);
  });
});

describe('production HTTP (findings 16, 17)', () => {
  let t: TestApp;
  let withToken: TestApp;
  beforeAll(async () => {
    t = await createAppWith({ ...PRODUCTION_ENV });
    withToken = await createAppWith({ ...PRODUCTION_ENV, METRICS__TOKEN: 'a-long-random-metrics-token' });
  });
  afterAll(async () => {
    await t.close();
    await withToken.close();
  });

  it('redirects to PUBLIC_BASE_URL, not to the Host a client sends', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories?take=5', headers: { host: 'evil.example' } });
    expect(res.statusCode).toBe(308);
    expect(res.headers.location).toBe('https://api.example.org/api/v1/territories?take=5');
  });

  it('/metrics is not served without METRICS__TOKEN, and needs that token when set', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    expect((await t.app.inject({ method: 'GET', url: '/metrics', headers: https })).statusCode).toBe(404);
    const none = await withToken.app.inject({ method: 'GET', url: '/metrics', headers: https });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const wrong = await withToken.app.inject({ method: 'GET', url: '/metrics', headers: { ...https, authorization: 'Bearer guess' } });
    expect(wrong.statusCode).toBe(401);
    const right = await withToken.app.inject({ method: 'GET', url: '/metrics', headers: { ...https, authorization: 'Bearer a-long-random-metrics-token' } });
    expect(right.statusCode).toBe(200);
    expect(right.body).toContain('http_requests_total');
  });
});

describe('production refuses weak keys and unsafe origins (hardening)', () => {
  it('a key of one repeated letter is refused, whatever its length', () => {
    expect(() => loadConfig({ ...PRODUCTION_ENV, JWT__SIGNINGKEY: 'k'.repeat(64) })).toThrow(
      'JWT SigningKey must be random (it repeats too few distinct characters)',
    );
  });

  it('http:// and null origins are refused', () => {
    for (const origin of ['http://app.example.org', 'null', 'https://app.example.org/path']) {
      expect(() => loadConfig({ ...PRODUCTION_ENV, Cors__AllowedOrigins: `https://ok.example.org, ${origin}` })).toThrow(
        `Cors:AllowedOrigins must list https:// origins only in production (got "${origin}")`,
      );
    }
  });
});

describe('only the configured proxies are believed (finding 6)', () => {
  let proxied: TestApp;
  const PROXY = '10.0.0.1';
  beforeAll(async () => {
    proxied = await createAppWith({ ...PRODUCTION_ENV, TRUST_PROXY: PROXY, RateLimiting__Auth__PermitLimit: '5' });
  });
  afterAll(() => proxied.close());

  /** A call through the proxy, which appends the address it saw to whatever X-Forwarded-For the client sent. */
  const viaProxy = (forwardedFor: string, n: number) =>
    proxied.app.inject({
      method: 'POST',
      url: '/api/v1/auth/2fa/verify',
      remoteAddress: PROXY,
      headers: { 'x-forwarded-for': forwardedFor, 'x-forwarded-proto': 'https' },
      payload: { challengeId: `0190a4f6-0000-7000-8000-0000000000${String(n).padStart(2, '0')}`, code: '123456' },
    });

  it('a client cannot rotate the X-Forwarded-For it sends to escape the per-IP limits', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await viaProxy(`198.51.100.${i}, 203.0.113.9`, i)).statusCode);
    expect(statuses.slice(0, 5)).not.toContain(429);
    expect(statuses.slice(5)).toEqual([429, 429]);
  });

  it('distinct clients behind the trusted proxy each have their own count', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await viaProxy(`203.0.113.${100 + i}`, i)).statusCode);
    expect(statuses).not.toContain(429);
  });

  it('a request that does not come from the proxy gets no say about its protocol either', async () => {
    const direct = await proxied.app.inject({
      method: 'GET',
      url: '/api/v1/territories',
      remoteAddress: '203.0.113.9',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(direct.statusCode).toBe(308);
  });
});
