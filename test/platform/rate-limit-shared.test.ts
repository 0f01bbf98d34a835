import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BuiltApp } from '../../src/app.js';
import { leaseSize, PostgresCounterStore } from '../../src/http/rate-limit.js';
import { runAuthCleanup } from '../../src/routers/auth/auth-cleanup.job.js';
import { newUser } from '../factories/index.js';
import { createSecondInstance, createTestApp, type TestApp } from '../setup/test-app.js';

/** Two API processes on one database: a caller's limit holds across them (counters in PostgreSQL). */
const LIMITS = {
  RateLimiting__PermitLimit: '6',
  RateLimiting__Write__PermitLimit: '4',
  RateLimiting__Auth__PermitLimit: '100',
  RateLimiting__FeedRead__PermitLimit: '100',
};
let a: TestApp;
let b: BuiltApp;
beforeAll(async () => {
  a = await createTestApp(LIMITS);
  b = await createSecondInstance(a, LIMITS);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

describe('rate limits across API instances', () => {
  it('a user alternating between two instances gets the bucket once, not once per instance', async () => {
    const user = await newUser(a);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const app = i % 2 === 0 ? a.app : b.app;
      statuses.push((await app.inject({ method: 'GET', url: '/api/v1/users/me/interests', headers: user.headers })).statusCode);
    }
    expect(statuses.filter((s) => s === 200).length).toBe(6);
    expect(statuses.slice(6)).toEqual([429, 429, 429, 429]);
  });

  it('tRPC calls and REST requests on either instance draw on the same bucket', async () => {
    const user = await newUser(a);
    const codes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const app = i % 2 === 0 ? a.app : b.app;
      const res = await app.inject({
        method: 'POST',
        url: i % 3 === 0 ? '/trpc/interests.add' : '/api/v1/users/me/interests',
        headers: { ...user.headers, 'content-type': 'application/json' },
        payload: { interestTag: `tag${i}` },
      });
      codes.push(res.statusCode < 300 ? 'ok' : String(res.statusCode));
    }
    expect(codes).toEqual(['ok', 'ok', 'ok', 'ok', '429', '429']);
  });

  it('the counter is one row per caller and bucket, and is cleaned once its window is long over', async () => {
    const rows = await a.sql<{ key: string }>('select key from rate_limit_counter');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => /^(u|ip):/.test(r.key))).toBe(true);
    expect(new Set(rows.map((r) => r.key)).size).toBe(rows.length);
    const [stale] = rows;
    await a.sql(`update rate_limit_counter set window_started_at_utc = now() - interval '2 hours' where key = $1`, [stale!.key]);
    await runAuthCleanup(a.deps.orm.em.fork() as EntityManager);
    const left = await a.sql<{ key: string }>('select key from rate_limit_counter');
    expect(left.map((r) => r.key)).not.toContain(stale!.key);
    expect(left.length).toBe(rows.length - 1);
  });

  it('large limits are counted ahead in leases: two processes together admit at most the limit, with few round trips', async () => {
    const limit = 2000;
    const stores = [new PostgresCounterStore(a.databaseUrl), new PostgresCounterStore(a.databaseUrl)];
    const roundTrips = stores.map((store) => vi.spyOn((store as unknown as { pool: { query: () => unknown } }).pool, 'query'));
    try {
      let admitted = 0;
      for (let i = 0; i < 2600; i++) {
        const res = await stores[i % 2]!.hit('u:lease-test', 60_000, limit);
        if (res.current <= limit) admitted += 1;
      }
      const [row] = await a.sql<{ hits: number }>(`select hits from rate_limit_counter where key = 'u:lease-test'`);
      // Never more than the limit; unused permits of the last leases are at most two leases of an almost spent bucket.
      expect(admitted).toBeLessThanOrEqual(limit);
      expect(admitted).toBeGreaterThan(limit - 2 * leaseSize(limit, limit - 16));
      // Every admitted hit is in the shared counter, yet 2600 hits took a few dozen round trips, not 2600 (once over
      // the limit, a process refuses until the window ends without asking again).
      expect(row!.hits).toBeGreaterThanOrEqual(admitted);
      const calls = roundTrips.reduce((n, spy) => n + spy.mock.calls.length, 0);
      expect(calls).toBeLessThan(200);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('concurrent requests of one caller share the lease being counted: 50 at once under a limit of 100 are all admitted', async () => {
    const store = new PostgresCounterStore(a.databaseUrl);
    try {
      const hits = await Promise.all(Array.from({ length: 50 }, () => store.hit('u:concurrent-lease', 60_000, 100)));
      expect(hits.filter((h) => h.current <= 100)).toHaveLength(50);
      const [row] = await a.sql<{ hits: number }>(`select hits from rate_limit_counter where key = 'u:concurrent-lease'`);
      expect(row!.hits).toBeLessThanOrEqual(100);
    } finally {
      await store.close();
    }
  });

  it('lease sizes: exact below 64, an eighth of what is left above, at most 256', () => {
    expect(leaseSize(6, 0)).toBe(1);
    expect(leaseSize(63, 0)).toBe(1);
    expect(leaseSize(80, 0)).toBe(10);
    expect(leaseSize(80, 75)).toBe(1);
    expect(leaseSize(100_000, 0)).toBe(256);
  });
});

describe('the shared counter store when the database refuses', () => {
  it('a failed count rejects for its caller only: no unhandled rejection (fatal to a Node process)', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    // Nothing listens on port 1: every count fails at once.
    const store = new PostgresCounterStore('postgres://nobody@127.0.0.1:1/none');
    try {
      await expect(store.hit('k', 60_000, 100)).rejects.toThrow();
      // Rejections are reported after the microtasks of their turn: one more turn of the event loop.
      await new Promise(setImmediate);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
      await store.close();
    }
  });
});
