import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppConfig } from '../config.js';
import { RATE_LIMIT_DETAIL } from '../platform/problems.js';
import type { RateBucket } from '../trpc/init.js';

interface Counter {
  current: number;
  iterationStartMs: number;
}

/**
 * One in-memory store per app, shared by all its routes, so routes of one bucket count together (the plugin's own store
 * gives each route its own counters). Keys carry the bucket as the plugin's `groupId` suffix.
 */
class SharedStore {
  private readonly counters = new Map<string, Counter>();
  incr(key: string, cb: (err: Error | null, res: { current: number; ttl: number }) => void, timeWindow: number) {
    const now = Date.now();
    let c = this.counters.get(key);
    if (!c || c.iterationStartMs + timeWindow <= now) {
      c = { current: 0, iterationStartMs: now };
      if (this.counters.size > 100_000) this.sweep(now, timeWindow);
      this.counters.set(key, c);
    }
    c.current += 1;
    cb(null, { current: c.current, ttl: timeWindow - (now - c.iterationStartMs) });
  }
  read(key: string, cb: (err: Error | null, res: { current: number; ttl: number }) => void, timeWindow: number) {
    const now = Date.now();
    const c = this.counters.get(key);
    if (!c || c.iterationStartMs + timeWindow <= now) cb(null, { current: 0, ttl: 0 });
    else cb(null, { current: c.current, ttl: timeWindow - (now - c.iterationStartMs) });
  }
  child() {
    return this;
  }
  private sweep(now: number, timeWindow: number) {
    for (const [key, c] of this.counters) if (c.iterationStartMs + timeWindow <= now) this.counters.delete(key);
  }
}

export function bucketLimit(config: AppConfig, bucket: RateBucket) {
  return config.rateLimit[bucket];
}

/** Route config for an operation in a bucket (the global bucket is the plugin default). */
export function rateLimitRouteConfig(config: AppConfig, bucket: RateBucket) {
  if (bucket === 'global') return undefined;
  return { max: bucketLimit(config, bucket), timeWindow: config.rateLimit.windowSeconds * 1000, groupId: `:${bucket}` };
}

/** Per user when authenticated, else per client IP. Runs after auth (preHandler). */
const keyOf = (request: FastifyRequest) => (request.auth?.user ? `u:${request.auth.user.id}` : `ip:${request.ip}`);

export const rateLimitPlugin = fp(
  async (app: FastifyInstance, opts: { config: AppConfig }) => {
    await app.register(rateLimit, {
      global: true,
      hook: 'preHandler',
      max: opts.config.rateLimit.global,
      timeWindow: opts.config.rateLimit.windowSeconds * 1000,
      keyGenerator: keyOf,
      store: SharedStore as never,
      addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
      addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': false },
      errorResponseBuilder: (request) => {
        const error = new Error(RATE_LIMIT_DETAIL) as Error & { statusCode: number; rateLimited: boolean; instance: string };
        error.statusCode = 429;
        error.rateLimited = true;
        error.instance = request.url.split('?')[0] ?? request.url;
        return error;
      },
    });
  },
  { name: 'rate-limit', dependencies: ['auth'] },
);
