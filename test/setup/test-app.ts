import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { buildApp, type BuildOptions, type BuiltApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { withCredentials } from '../../src/db/roles.js';

export interface TestApp extends BuiltApp {
  /** The URL the app connects with (as the least-privilege app role). */
  databaseUrl: string;
  /** Runs SQL against the test database as the superuser (set up state, assert what was or was not written). */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

let counter = 0;

/** The URL of a test database as the least-privilege app role, from its superuser URL. */
export const appDatabaseUrl = (adminUrl: string) => withCredentials(adminUrl, inject('pgAppRole'), inject('pgAppPassword'));

/** A fresh database cloned from the migrated template (~100 ms) for this test file; its superuser URL. */
export async function createTestDatabase(): Promise<string> {
  const server = inject('pgServerUrl');
  const name = `t_${process.pid}_${Date.now()}_${counter++}`;
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(`create database "${name}" template "${inject('templateDb')}"`);
  } finally {
    await client.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The test settings (rate limits raised unless `env` sets them) with a data directory of their own (uploads, media),
 * and its removal.
 */
function testConfig(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'territory-test-data-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    RateLimiting__PermitLimit: '100000',
    RateLimiting__Auth__PermitLimit: '100000',
    RateLimiting__FeedRead__PermitLimit: '100000',
    RateLimiting__Write__PermitLimit: '100000',
    ...env,
  });
  return { config, removeDataDir: () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** The app on `databaseUrl` with the test settings; closing it removes its data directory too. */
async function buildTestApp(env: Record<string, string>, databaseUrl: string, options?: BuildOptions): Promise<BuiltApp> {
  const { config, removeDataDir } = testConfig(env);
  const built = await buildApp(config, databaseUrl, options).catch((error: unknown) => {
    removeDataDir();
    throw error;
  });
  return {
    ...built,
    async close() {
      try {
        await built.close();
      } finally {
        removeDataDir();
      }
    },
  };
}

/**
 * A second API process on the database of `first` (its own data directory, no job workers): what crosses between
 * the two went through PostgreSQL (LISTEN/NOTIFY, shared counters). The caller closes it before `first`.
 */
export const createSecondInstance = (first: TestApp, env: Record<string, string> = {}): Promise<BuiltApp> =>
  buildTestApp({ JOBS__ENABLED: 'false', ...env }, first.databaseUrl);

/**
 * The real app (Fastify, tRPC, PostgreSQL, pg-boss) on its own database. Rate limits are raised unless a test
 * passes its own environment (the rate-limit tests do); `options.extend` registers routes before the app is sealed.
 */
export async function createTestApp(env: Record<string, string> = {}, options?: BuildOptions): Promise<TestApp> {
  const adminUrl = await createTestDatabase();
  // The app runs as in production: the least-privilege role, never the superuser.
  const databaseUrl = appDatabaseUrl(adminUrl);
  const built = await buildTestApp(env, databaseUrl, options);
  const pool = new pg.Pool({ connectionString: adminUrl, max: 2 });
  return {
    ...built,
    databaseUrl,
    async sql<T>(text: string, params: unknown[] = []) {
      const client = await pool.connect();
      try {
        return (await client.query(text, params)).rows as T[];
      } catch (error) {
        // `pg` rejects at PostgreSQL's error message, before the backend has aborted the statement's transaction and
        // released its row locks: a statement the test sends next on another connection could still find them held
        // (a `skip locked` then skips the row; fresh-clone CI, 2026-11-28). The next query on this connection runs
        // only once the backend is ready again, so the failure is over when this one answers.
        await client.query('select 1').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async close() {
      await built.close();
      await pool.end();
    },
  };
}
