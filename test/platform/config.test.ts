import { describe, expect, it } from 'vitest';
import { ConfigError, DEVELOPMENT_SIGNING_KEY, loadConfig } from '../../src/config.js';
import { PRODUCTION_ENV, REFUSALS } from './support.js';

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('loadConfig accepted the environment');
}

describe('loadConfig in production', () => {
  it('accepts a complete production configuration', () => {
    const config = loadConfig({ ...PRODUCTION_ENV });
    expect(config.production).toBe(true);
    expect(config.jwt.signingKey).toBe(PRODUCTION_ENV.JWT__SIGNINGKEY);
    expect(config.cors.allowedOrigins).toEqual(['https://app.example.org', 'https://admin.example.org']);
    expect(config.auth.trustProviderClaims).toBe(false);
  });

  it('refuses an empty or missing JWT__SIGNINGKEY', () => {
    expect(refusal({ ...PRODUCTION_ENV, JWT__SIGNINGKEY: '' })).toBe(REFUSALS.keyMissing);
    const { JWT__SIGNINGKEY: _omitted, ...withoutKey } = PRODUCTION_ENV;
    expect(refusal(withoutKey)).toBe(REFUSALS.keyMissing);
  });

  it('refuses the development default key', () => {
    expect(refusal({ ...PRODUCTION_ENV, JWT__SIGNINGKEY: DEVELOPMENT_SIGNING_KEY })).toBe(REFUSALS.keyDefault);
  });

  it('refuses a key shorter than 32 characters, accepts exactly 32', () => {
    expect(refusal({ ...PRODUCTION_ENV, JWT__SIGNINGKEY: 'k'.repeat(20) })).toBe(REFUSALS.keyShort);
    expect(refusal({ ...PRODUCTION_ENV, JWT__SIGNINGKEY: 'k'.repeat(31) })).toBe(REFUSALS.keyShort);
    const key = 'p7Qk2LzW9xVb4TnR8mYc3HsJ6dFg1AeU';
    expect(loadConfig({ ...PRODUCTION_ENV, JWT__SIGNINGKEY: key }).jwt.signingKey).toHaveLength(32);
  });

  it('refuses empty CORS origins or a wildcard among them', () => {
    expect(refusal({ ...PRODUCTION_ENV, Cors__AllowedOrigins: '' })).toBe(REFUSALS.cors);
    expect(refusal({ ...PRODUCTION_ENV, Cors__AllowedOrigins: ' , ' })).toBe(REFUSALS.cors);
    expect(refusal({ ...PRODUCTION_ENV, Cors__AllowedOrigins: '*' })).toBe(REFUSALS.cors);
    expect(refusal({ ...PRODUCTION_ENV, Cors__AllowedOrigins: 'https://app.example.org,*' })).toBe(REFUSALS.cors);
    expect(refusal({ ...PRODUCTION_ENV, Cors__AllowedOrigins: 'https://*.example.org' })).toBe(REFUSALS.cors);
  });

  it('refuses trusting provider claims', () => {
    expect(refusal({ ...PRODUCTION_ENV, AUTH__TRUSTPROVIDERCLAIMS: 'true' })).toMatch(/AUTH__TRUSTPROVIDERCLAIMS/);
  });
});

describe('loadConfig outside production', () => {
  it('falls back to the development key and a CORS wildcard', () => {
    const config = loadConfig({ NODE_ENV: 'development' });
    expect(config.production).toBe(false);
    expect(config.jwt.signingKey).toBe(DEVELOPMENT_SIGNING_KEY);
    expect(config.cors.allowedOrigins).toEqual(['*']);
    expect(config.auth.trustProviderClaims).toBe(true);
  });

  it('reads the rate-limit buckets with the specification defaults', () => {
    expect(loadConfig({}).rateLimit).toEqual({ windowSeconds: 60, queueLimit: 0, global: 60, auth: 5, feedRead: 100, write: 30, store: 'postgres' });
    const custom = loadConfig({
      RateLimiting__PermitLimit: '7',
      RateLimiting__WindowSeconds: '30',
      RateLimiting__Auth__PermitLimit: '2',
      RateLimiting__FeedRead__PermitLimit: '9',
      RateLimiting__Write__PermitLimit: '4',
      RateLimiting__Store: 'memory',
    }).rateLimit;
    expect(custom).toEqual({ windowSeconds: 30, queueLimit: 0, global: 7, auth: 2, feedRead: 9, write: 4, store: 'memory' });
  });

  it('rejects a non-zero RateLimiting__QueueLimit: excess requests are never queued', () => {
    expect(refusal({ RateLimiting__QueueLimit: '5' })).toMatch(/^RateLimiting__QueueLimit must be 0/);
    expect(loadConfig({ RateLimiting__QueueLimit: '0' }).rateLimit.queueLimit).toBe(0);
  });

  it('treats an empty variable as unset', () => {
    const config = loadConfig({ PORT: '', AUTH__TRUSTPROVIDERCLAIMS: '', DATABASE_URL: '', RateLimiting__PermitLimit: '' });
    expect(config.port).toBe(3000);
    expect(config.auth.trustProviderClaims).toBe(true);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.rateLimit.global).toBe(60);
  });

  it('names the variable of an invalid value', () => {
    expect(refusal({ RateLimiting__PermitLimit: 'many' })).toMatch(/RateLimiting__PermitLimit/);
    expect(refusal({ ROLE: 'everything' })).toMatch(/ROLE/);
  });
});
