import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketOf, restOperations } from '../../src/openapi/plugin.js';
import { appRouter } from '../../src/routers/index.js';
import { countRows, newAdmin, newUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

// Distinct small limits, so a test also shows which bucket answered.
const LIMITS = { global: 3, write: 2, auth: 2, feedRead: 4 };

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    RateLimiting__PermitLimit: String(LIMITS.global),
    RateLimiting__Write__PermitLimit: String(LIMITS.write),
    RateLimiting__Auth__PermitLimit: String(LIMITS.auth),
    RateLimiting__FeedRead__PermitLimit: String(LIMITS.feedRead),
    JOBS__ENABLED: 'false',
  });
});
afterAll(() => t.close());

/** The specification's 429, exactly (plus our type and code). */
function expectRateLimited(res: LightMyRequestResponse, path: string) {
  expect(res.statusCode).toBe(429);
  expect(res.headers['retry-after']).toBe('60');
  expect(res.headers['content-type']).toContain('application/problem+json');
  expect(res.json()).toEqual({
    type: expect.any(String),
    title: 'Too Many Requests',
    status: 429,
    detail: 'Rate limit exceeded. Please try again later.',
    instance: path,
    code: 'RATE_LIMIT_EXCEEDED',
  });
}

const get = (url: string, extra: { headers?: Record<string, string>; remoteAddress?: string } = {}) => t.app.inject({ method: 'GET', url, ...extra });

describe('global bucket (GET /api/v1/territories)', () => {
  it('allows the limit per IP, then answers the 429 of the specification; instance is the path without query', async () => {
    const remoteAddress = '10.0.0.1';
    for (let i = 0; i < LIMITS.global; i++) expect((await get('/api/v1/territories?take=5', { remoteAddress })).statusCode).toBe(200);
    expectRateLimited(await get('/api/v1/territories?take=5', { remoteAddress }), '/api/v1/territories');
    // Another client address has its own counter.
    expect((await get('/api/v1/territories', { remoteAddress: '10.0.0.2' })).statusCode).toBe(200);
  });

  it('counts per user when authenticated: users behind one IP do not share a counter', async () => {
    const remoteAddress = '10.0.1.1';
    const [a, b] = [await newUser(t), await newUser(t)];
    for (let i = 0; i < LIMITS.global; i++) expect((await get('/api/v1/territories', { remoteAddress, headers: a.headers })).statusCode).toBe(200);
    expectRateLimited(await get('/api/v1/territories', { remoteAddress, headers: a.headers }), '/api/v1/territories');
    expect((await get('/api/v1/territories', { remoteAddress, headers: b.headers })).statusCode).toBe(200);
    // Nor does the anonymous traffic of that IP.
    expect((await get('/api/v1/territories', { remoteAddress })).statusCode).toBe(200);
  });

  it('two routes of the same bucket share one counter', async () => {
    const user = await newUser(t);
    expect((await get('/api/v1/territories', { headers: user.headers })).statusCode).toBe(200);
    expect((await get('/api/v1/territories/paged', { headers: user.headers })).statusCode).toBe(200);
    expect((await get('/api/v1/territories', { headers: user.headers })).statusCode).toBe(200);
    expectRateLimited(await get('/api/v1/territories/paged?pageSize=5', { headers: user.headers }), '/api/v1/territories/paged');
  });
});

describe('write bucket (POST /api/v1/admin/territories)', () => {
  let n = 0;
  const create = (headers: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/territories',
      headers,
      payload: { name: `Rate ${++n}`, description: 'Downtown', city: 'Curitiba', state: 'PR', latitude: -25.43, longitude: -49.27 },
    });

  it('has its own limit, writes nothing once limited and leaves the global counter alone', async () => {
    const admin = await newAdmin(t);
    const before = await countRows(t, 'territory');
    for (let i = 0; i < LIMITS.write; i++) expect((await create(admin.headers)).statusCode).toBe(201);
    expectRateLimited(await create(admin.headers), '/api/v1/admin/territories');
    expect(await countRows(t, 'territory')).toBe(before + LIMITS.write);
    for (let i = 0; i < LIMITS.global; i++) expect((await get('/api/v1/territories', { headers: admin.headers })).statusCode).toBe(200);
    // Another admin still may write.
    expect((await create((await newAdmin(t)).headers)).statusCode).toBe(201);
  });
});

const operations = restOperations(appRouter);
const authSocial = operations.find((op) => op.method === 'POST' && op.path === '/api/v1/auth/social');
const feedRead = operations.find((op) => bucketOf(op) === 'feedRead' && op.method === 'GET' && op.path.startsWith('/api/v1/') && !op.path.includes('{'));

describe('auth bucket', () => {
  it.skipIf(!authSocial)('POST /api/v1/auth/social counts in the auth bucket, per IP (skipped while the route does not exist)', async () => {
    const remoteAddress = '10.0.2.1';
    const login = (n: number) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/auth/social',
        remoteAddress,
        payload: { authProvider: 'google', externalId: `rate-${n}`, displayName: `Rate ${n}`, foreignDocument: `P${n}` },
      });
    for (let i = 0; i < LIMITS.auth; i++) expect((await login(i)).statusCode).not.toBe(429);
    expectRateLimited(await login(99), '/api/v1/auth/social');
    // The auth bucket is separate from the global one.
    expect((await get('/api/v1/territories', { remoteAddress })).statusCode).toBe(200);
  });
});

describe('feed-read bucket', () => {
  it.skipIf(!feedRead)('a feedRead operation has the feed limit (skipped while no such operation exists)', async () => {
    const user = await newUser(t);
    const path = feedRead!.path;
    for (let i = 0; i < LIMITS.feedRead; i++) expect((await get(path, { headers: user.headers })).statusCode).not.toBe(429);
    expectRateLimited(await get(path, { headers: user.headers }), path);
  });
});

describe('what a limited caller is told', () => {
  it('every REST answer carries the bucket limit, what is left of it and the seconds until the window ends', async () => {
    const remoteAddress = '10.0.3.1';
    const seen: LightMyRequestResponse[] = [];
    for (let i = 0; i <= LIMITS.global; i++) seen.push(await get('/api/v1/territories', { remoteAddress }));
    expect(seen.map((res) => res.statusCode)).toEqual([200, 200, 200, 429]);
    expect(seen.map((res) => res.headers['x-ratelimit-limit'])).toEqual(['3', '3', '3', '3']);
    expect(seen.map((res) => res.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    for (const res of seen) {
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(t.deps.config.rateLimit.windowSeconds);
    }
    // Another bucket states its own limit.
    const user = await newUser(t);
    const write = await t.app.inject({ method: 'POST', url: '/api/v1/admin/territories', headers: user.headers, payload: {}, remoteAddress });
    expect(write.headers['x-ratelimit-limit']).toBe(String(LIMITS.write));
  });

  it('a plain route (outside the procedures: POST /oauth/token, auth bucket) is limited in its bucket too', async () => {
    const remoteAddress = '10.0.3.4';
    const token = () =>
      t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        remoteAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=client_credentials&client_id=nobody&client_secret=wrong',
      });
    const answers = [await token(), await token(), await token()];
    expect(answers.map((res) => res.statusCode)).toEqual([401, 401, 429]);
    expect(answers.map((res) => res.headers['x-ratelimit-limit'])).toEqual(['2', '2', '2']);
  });

  it('health probes and the OpenAPI document are not limited; a /trpc request is charged per call, not by the REST limit', async () => {
    const remoteAddress = '10.0.3.2';
    for (let i = 0; i <= LIMITS.global + 1; i++) {
      for (const url of ['/health', '/openapi.json']) {
        const res = await get(url, { remoteAddress });
        expect(res.statusCode, url).toBe(200);
        expect(res.headers['x-ratelimit-limit'], url).toBeUndefined();
      }
    }
    const call = await get('/trpc/territories.list?input=%7B%7D', { remoteAddress: '10.0.3.3' });
    expect(call.statusCode).toBe(200);
    expect(call.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('the payment gateway webhook is not limited: a busy gateway address is never held back by a 429', async () => {
    for (let i = 0; i <= LIMITS.global + 1; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/payments/webhooks/fake',
        remoteAddress: '10.0.3.4',
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      // Unsigned: refused by the signature check, the gateway's own authentication, each time.
      expect(res.statusCode).toBe(400);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});
