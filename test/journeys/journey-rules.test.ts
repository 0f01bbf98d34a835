import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, setActingClient } from '../../src/entities/audit.entity.js';
import { newId } from '../../src/platform/ids.js';
import { AnswerCache } from '../../src/routers/journeys/answer-cache.js';
import { newAdmin, newTerritory, newVisitor, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { clientToken, expectV2Error, v2 } from './helpers.js';

/** Rules of issue 13 that hold across the journeys API: error bodies, rate limits, tokens, the cache's bounds. */
let t: TestApp;
let admin: TestUser;
let territory: TestTerritory;
let client: string;
const GLOBAL_LIMIT = 5;
beforeAll(async () => {
  // Low limits: this file runs out of its global (GET) bucket on purpose.
  t = await createTestApp({
    JOBS__ENABLED: 'false',
    RateLimiting__PermitLimit: String(GLOBAL_LIMIT),
    RateLimiting__Auth__PermitLimit: '1000',
    RateLimiting__Write__PermitLimit: '1000',
    RateLimiting__FeedRead__PermitLimit: '1000',
  });
  admin = await newAdmin(t);
  territory = await newTerritory(t);
  client = await clientToken(t, admin);
});
afterAll(() => t.close());

const part = (token: string, i: number) => JSON.parse(Buffer.from(token.split('.')[i]!, 'base64url').toString()) as Record<string, unknown>;

describe('v2 error bodies', () => {
  it('an unknown v2 path is a 404 with the v2 body, whatever the method', async () => {
    for (const [method, url] of [
      ['GET', '/api/v2/journeys/no-such-journey'],
      ['POST', '/api/v2/journeys/feed/no-such-thing'],
      ['GET', '/api/v2/other'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: { authorization: `Bearer ${client}` } });
      const body = expectV2Error(res, 404, 'NOT_FOUND');
      expect(body.details).toBeNull();
    }
  });

  it('429: Retry-After 60, the v2 fields and the spec’s 429 fields in one body', async () => {
    const user = await newVisitor(t, territory);
    const url = `/events/territory-events?territoryId=${territory.id}`;
    let res = await v2(t, 'GET', url, { client, user });
    for (let i = 0; i < GLOBAL_LIMIT + 1 && res.statusCode !== 429; i++) res = await v2(t, 'GET', url, { client, user });
    expect(res.statusCode, res.body).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
    const body = res.json();
    expect(body).toEqual({
      error: 'Rate limit exceeded. Please try again later.',
      code: 'RATE_LIMIT_EXCEEDED',
      details: null,
      timestamp: expect.any(String),
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit exceeded. Please try again later.',
      instance: '/api/v2/journeys/events/territory-events',
    });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
  });
});

describe('rate-limit buckets', () => {
  it('the feed screen is a feed read (spec Limits): it counts with GET /api/v1/feed, not in the global bucket', async () => {
    const user = await newVisitor(t, territory);
    const remaining = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-ratelimit-remaining']);
    const v1 = await t.app.inject({ method: 'GET', url: `/api/v1/feed?territoryId=${territory.id}`, headers: user.headers });
    expect(v1.statusCode).toBe(200);
    const screen = await v2(t, 'GET', `/feed/territory-feed?territoryId=${territory.id}`, { client, user });
    expect(screen.statusCode, screen.body).toBe(200);
    expect(screen.headers['x-ratelimit-limit']).toBe('1000');
    expect(remaining(screen)).toBe(remaining(v1) - 1);
    // Far past the global bucket's 5: every screen is still served.
    for (let i = 0; i < GLOBAL_LIMIT + 1; i++)
      expect((await v2(t, 'GET', `/feed/territory-feed?territoryId=${territory.id}&pageNumber=${i + 2}`, { client, user })).statusCode).toBe(200);
  });
});

describe('tokens', () => {
  it('a client token carries only the scopes its client holds, and is never a user token (X-User-Token: 401)', async () => {
    const readOnly = await clientToken(t, admin, ['journeys:read']);
    expect(part(readOnly, 1).scope).toBe('journeys:read');
    expect(part(readOnly, 0).typ).toBe('client+jwt');
    const user = await newVisitor(t, territory);
    expectV2Error(await v2(t, 'POST', '/feed/interact', { client: readOnly, user, payload: {} }), 403, 'FORBIDDEN');
    // A client token where the user's belongs.
    const res = await v2(t, 'POST', '/feed/interact', { client, headers: { 'x-user-token': client }, payload: {} });
    expectV2Error(res, 401, 'UNAUTHORIZED');
  });
});

describe('the cache is bounded', () => {
  const generation = (cache: AnswerCache, user: string) => cache.generationOf(user);
  it('past its entry bound the least recently used answers go', () => {
    const cache = new AnswerCache({ maxEntries: 3, maxTotalChars: 1_000_000, maxEntryChars: 1000 });
    const later = Date.now() + 60_000;
    for (const key of ['a', 'b', 'c']) cache.set(key, 'u', { key }, generation(cache, 'u'), later);
    expect(cache.get('a', Date.now())).toEqual({ json: '{"key":"a"}' });
    cache.set('d', 'u', { key: 'd' }, generation(cache, 'u'), later);
    expect(cache.size.entries).toBe(3);
    expect(cache.get('b', Date.now())).toBeUndefined();
    expect(cache.get('a', Date.now())).toBeDefined();
    expect(cache.get('d', Date.now())).toBeDefined();
  });

  it('past its size bound too; an answer over the entry size is not kept; expired answers are not served', () => {
    const cache = new AnswerCache({ maxEntries: 100, maxTotalChars: 100, maxEntryChars: 60 });
    const later = Date.now() + 60_000;
    // Kept or not, the answer comes back as JSON, for the caller to send as it is.
    expect(cache.set('big', 'u', 'x'.repeat(80), generation(cache, 'u'), later)).toBe(JSON.stringify('x'.repeat(80)));
    expect(cache.size.entries).toBe(0);
    for (const key of ['k1', 'k2', 'k3']) cache.set(key, 'u', 'x'.repeat(40), generation(cache, 'u'), later);
    expect(cache.size.chars).toBeLessThanOrEqual(100);
    expect(cache.get('k1', Date.now())).toBeUndefined();
    expect(cache.get('k3', Date.now())).toBeDefined();
    cache.set('old', 'u', 1, generation(cache, 'u'), Date.now() - 1);
    expect(cache.get('old', Date.now())).toBeUndefined();
  });

  it('a user’s write drops their answers and refuses to keep an answer computed across it', () => {
    const cache = new AnswerCache({ maxEntries: 10, maxTotalChars: 10_000, maxEntryChars: 1000 });
    const later = Date.now() + 60_000;
    cache.set('mine', 'u', 1, generation(cache, 'u'), later);
    cache.set('theirs', 'v', 1, generation(cache, 'v'), later);
    const before = generation(cache, 'u');
    cache.invalidateUser('u');
    expect(cache.get('mine', Date.now())).toBeUndefined();
    expect(cache.get('theirs', Date.now())).toBeDefined();
    cache.set('stale', 'u', 1, before, later);
    expect(cache.get('stale', Date.now())).toBeUndefined();
  });
});

describe('audit rows record the client application a call acts through', () => {
  it("set once on the call's EntityManager, inherited by its forks and transactions; none otherwise", async () => {
    const clientApplicationId = newId();
    const subject = newId();
    const acting = t.deps.orm.em.fork() as EntityManager;
    setActingClient(acting, clientApplicationId);
    await acting.transactional(async (tx) => {
      audit(tx, { actorUserId: null, action: 'test.audited', subjectType: 'Test', subjectId: `${subject}:client` });
    });
    const plain = t.deps.orm.em.fork() as EntityManager;
    await plain.transactional(async (tx) => {
      audit(tx, { actorUserId: null, action: 'test.audited', subjectType: 'Test', subjectId: `${subject}:none` });
    });
    const rows = await t.sql<{ subject_id: string; client_application_id: string | null }>(
      'select subject_id, client_application_id from audit_entry where subject_id like $1 order by subject_id',
      [`${subject}:%`],
    );
    expect(rows).toEqual([
      { subject_id: `${subject}:client`, client_application_id: clientApplicationId },
      { subject_id: `${subject}:none`, client_application_id: null },
    ]);
  });
});
