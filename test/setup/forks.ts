import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from '@mikro-orm/postgresql';
import { expect } from 'vitest';
import type { TestUser } from '../factories/index.js';
import type { TestApp } from './test-app.js';

/** A GET and what its answer must hold. */
export type Read = [url: string, check: (body: unknown) => void];

/**
 * Counts the forks of a test app's root EntityManager. A REST request's manager is forked when first read
 * (src/db/request-manager.ts): a read on the pool (`runHotRead(ctx, ...)`) makes none, anything through the ORM one.
 * Only the forks made inside `run` count: the app's own jobs (outbox dispatch, schedules) fork the root manager at
 * any moment, and counting them made these checks fail now and then (fresh-clone CI, 2026-11-28).
 */
export function countForks(t: TestApp) {
  let forks = 0;
  const counting = new AsyncLocalStorage<true>();
  const root = t.deps.orm.em as EntityManager;
  const fork = root.fork.bind(root);
  root.fork = ((...args: Parameters<typeof root.fork>) => {
    if (counting.getStore()) forks += 1;
    return fork(...args);
  }) as typeof root.fork;

  /** What `run` answers, and how many forks of the root manager it made. */
  const withForks = async <T>(run: () => Promise<T>) => {
    const before = forks;
    // Awaited inside the context: `inject` answers a thenable that starts the request only when its `then` is called.
    const value = await counting.run(true, async () => await run());
    return { value, forks: forks - before };
  };

  /** Each read answers 200 with what its check expects, and makes no fork. */
  async function expectReadsWithoutFork(user: TestUser, reads: Read[]) {
    for (const [url, check] of reads) {
      const read = await withForks(() => t.app.inject({ method: 'GET', url, headers: user.headers }));
      expect(read.value.statusCode, `${url}: ${read.value.body}`).toBe(200);
      check(read.value.json());
      expect(read.forks, url).toBe(0);
    }
  }

  return { withForks, expectReadsWithoutFork };
}
