import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyError } from '../../src/http/errors.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * A transaction PostgreSQL aborts because it collided with a concurrent one (a deadlock, a serialization failure)
 * is the client's to retry: 409 CONCURRENT_UPDATE with Retry-After, never a 500. The error checked here is a real
 * deadlock between two connections, as `pg` reports it.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
});
afterAll(() => t.close());

async function realDeadlock(): Promise<unknown> {
  await t.sql('create table if not exists deadlock_probe (id int primary key, n int not null)');
  await t.sql('insert into deadlock_probe values (1, 0), (2, 0) on conflict do nothing');
  const a = new pg.Client({ connectionString: t.databaseUrl });
  const b = new pg.Client({ connectionString: t.databaseUrl });
  await Promise.all([a.connect(), b.connect()]);
  try {
    await a.query('begin');
    await b.query('begin');
    await a.query('update deadlock_probe set n = n + 1 where id = 1');
    await b.query('update deadlock_probe set n = n + 1 where id = 2');
    // Each now waits for the other: PostgreSQL aborts one of them (deadlock_timeout), the other goes on.
    const results = await Promise.allSettled([
      a.query('update deadlock_probe set n = n + 1 where id = 2'),
      b.query('update deadlock_probe set n = n + 1 where id = 1'),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    return failed?.reason;
  } finally {
    await Promise.allSettled([a.query('rollback'), b.query('rollback')]);
    await Promise.allSettled([a.end(), b.end()]);
  }
}

describe('a transaction aborted by a concurrent one', () => {
  it('a deadlock is a 409 CONCURRENT_UPDATE with Retry-After, also when wrapped', async () => {
    const error = await realDeadlock();
    expect((error as { code?: string }).code).toBe('40P01');
    for (const thrown of [error, new Error('the write failed', { cause: error })]) {
      expect(classifyError(thrown)).toMatchObject({ status: 409, code: 'CONCURRENT_UPDATE', headers: { 'Retry-After': '1' } });
    }
  });

  it('a serialization failure too; other database errors are not', () => {
    expect(classifyError(Object.assign(new Error('could not serialize access'), { code: '40001' }))).toMatchObject({ status: 409, code: 'CONCURRENT_UPDATE' });
    expect(classifyError(Object.assign(new Error('duplicate key'), { code: '23505' })).code).not.toBe('CONCURRENT_UPDATE');
  });
});
