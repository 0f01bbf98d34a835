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
