import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

export interface TestApp extends BuiltApp {
  databaseUrl: string;
  /** Runs SQL against the test database (assert what was or was not written). */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

let counter = 0;

/** A fresh database cloned from the migrated template (~100 ms) for this test file. */
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
 * The real app (Fastify, tRPC, PostgreSQL, pg-boss) on its own database. Rate limits are raised unless a test
 * passes its own environment (the rate-limit tests do).
 */
export async function createTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const databaseUrl = await createTestDatabase();
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'territory-test-data-')),
    RateLimiting__PermitLimit: '100000',
    RateLimiting__Auth__PermitLimit: '100000',
    RateLimiting__FeedRead__PermitLimit: '100000',
    RateLimiting__Write__PermitLimit: '100000',
    ...env,
  });
  const built = await buildApp(config, databaseUrl);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  return {
    ...built,
    databaseUrl,
    async sql<T>(text: string, params: unknown[] = []) {
      return (await pool.query(text, params)).rows as T[];
    },
    async close() {
      await built.close();
      await pool.end();
    },
  };
}
