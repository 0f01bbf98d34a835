import type { FastifyInstance } from 'fastify';
import { createTestApp, type TestApp } from '../setup/test-app.js';

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
export const createAppWith = (env: Record<string, string> = {}, extend?: (app: FastifyInstance) => void): Promise<TestApp> =>
  createTestApp({ JOBS__ENABLED: 'false', ...env }, { extend });
