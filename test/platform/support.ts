import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { appDatabaseUrl, createTestDatabase, type TestApp } from '../setup/test-app.js';

/** A configuration that passes every production refusal (tests of production behaviour: HTTPS, HSTS, CORS). */
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  JWT__SIGNINGKEY: 'a-production-signing-key-of-more-than-32-characters',
  Cors__AllowedOrigins: 'https://app.example.org, https://admin.example.org',
  AUTH__TRUSTPROVIDERCLAIMS: 'false',
  PUBLIC_BASE_URL: 'https://api.example.org',
} as const;

/** The specification's exact startup messages (section "Errors"). */
export const REFUSALS = {
  keyMissing: 'JWT SigningKey must be configured via environment variable JWT__SIGNINGKEY',
  keyDefault: 'JWT SigningKey must be configured via environment variable JWT__SIGNINGKEY in production',
  keyShort: 'JWT SigningKey must be at least 32 characters long in production',
  cors: 'Cors:AllowedOrigins must be configured',
} as const;

/**
 * Like createTestApp, plus routes registered before the app is sealed (`extend`): tests of the platform add
 * throwing or CSRF-protected routes to the real app. Limits are raised unless `env` sets them; jobs are off.
 */
export async function createAppWith(env: Record<string, string> = {}, extend?: (app: FastifyInstance) => void): Promise<TestApp> {
  const databaseUrl = await createTestDatabase();
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'territory-test-data-')),
    JOBS__ENABLED: 'false',
    RateLimiting__PermitLimit: '100000',
    RateLimiting__Auth__PermitLimit: '100000',
    RateLimiting__FeedRead__PermitLimit: '100000',
    RateLimiting__Write__PermitLimit: '100000',
    ...env,
  });
  const built = await buildApp(config, appDatabaseUrl(databaseUrl), { extend });
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
