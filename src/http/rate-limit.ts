import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppConfig } from '../config.js';
import { RATE_LIMIT_DETAIL } from '../platform/problems.js';

/** The rate-limit bucket an operation counts against (DESIGN section 9). */
export type RateBucket = 'auth' | 'feedRead' | 'write' | 'global';

interface Counter {
  current: number;
  iterationStartMs: number;
}

/**
 * One in-memory store per app, shared by all its REST routes and by the tRPC call pipeline, so everything of one
 * bucket counts together whatever the transport (the plugin's own store gives each route its own counters). Keys
 * are the caller key plus the bucket's suffix (`u:<id>:auth`; none for the global bucket), as the plugin's
 * `groupId` builds them.
 */
export class RateLimiter {
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
  /** Counts one call of `callerKey` in the bucket; false when it is over the bucket's limit. */
  charge(config: AppConfig, bucket: RateBucket, callerKey: string): boolean {
    const windowMs = config.rateLimit.windowSeconds * 1000;
    let allowed = true;
    this.incr(`${callerKey}${bucket === 'global' ? '' : `:${bucket}`}`, (_err, res) => (allowed = res.current <= bucketLimit(config, bucket)), windowMs);
    return allowed;
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

/** Per user when authenticated, else per client IP. */
export const callerKey = (user: { id: string } | null, ip: string) => (user ? `u:${user.id}` : `ip:${ip}`);
const keyOf = (request: FastifyRequest) => callerKey(request.auth?.user ?? null, request.ip);

export const rateLimitPlugin = fp(
  async (app: FastifyInstance, opts: { config: AppConfig; limiter: RateLimiter }) => {
    const { limiter } = opts;
    await app.register(rateLimit, {
      global: true,
      hook: 'preHandler',
      max: opts.config.rateLimit.global,
      timeWindow: opts.config.rateLimit.windowSeconds * 1000,
      keyGenerator: keyOf,
      // /trpc requests are charged per call by the tRPC pipeline (each call of a batch, each WebSocket message).
      allowList: (request) => request.url.startsWith('/trpc'),
      store: class {
        incr = limiter.incr.bind(limiter);
        read = limiter.read.bind(limiter);
        child() {
          return this;
        }
      } as never,
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
