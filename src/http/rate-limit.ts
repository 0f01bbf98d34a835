import rateLimit from '@fastify/rate-limit';
import pg from 'pg';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppConfig } from '../config.js';
import { RATE_LIMIT_DETAIL } from '../platform/problems.js';

/** The rate-limit bucket an operation counts against (DESIGN section 9). */
export type RateBucket = 'auth' | 'feedRead' | 'write' | 'global';

type Hit = { current: number; ttl: number };

/** Where counters live: hits of a key in the current fixed window, and how long the window has left. */
export interface CounterStore {
  hit(key: string, windowMs: number): Promise<Hit>;
  close?(): Promise<void>;
}

/** One process's counters (tests of the limiter itself, a single-process deployment that opts in). */
export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, { current: number; iterationStartMs: number }>();
  async hit(key: string, windowMs: number): Promise<Hit> {
    const now = Date.now();
    let c = this.counters.get(key);
    if (!c || c.iterationStartMs + windowMs <= now) {
      c = { current: 0, iterationStartMs: now };
      if (this.counters.size > 100_000) this.sweep(now, windowMs);
      this.counters.set(key, c);
    }
    c.current += 1;
    return { current: c.current, ttl: windowMs - (now - c.iterationStartMs) };
  }
  private sweep(now: number, windowMs: number) {
    for (const [key, c] of this.counters) if (c.iterationStartMs + windowMs <= now) this.counters.delete(key);
  }
}

/**
 * Counters in PostgreSQL, shared by every API process: one upsert per counted request (an UNLOGGED table), so a
 * caller's limit holds whichever instance a load balancer sends them to. The window is the database's clock.
 */
export class PostgresCounterStore implements CounterStore {
  /** Its own small pool and a named (server-side prepared) statement: the cheapest round trip pg offers. */
  private readonly pool: pg.Pool;
  constructor(connectionString: string) {
    // Bounded waits: during a database outage a request is let through (the handler answers 503), not held.
    this.pool = new pg.Pool({ connectionString, max: 4, application_name: 'territory-rate-limit', connectionTimeoutMillis: 2000, query_timeout: 2000 });
    // A broken idle connection is replaced on the next query; the error must not crash the process.
    this.pool.on('error', () => undefined);
  }
  async hit(key: string, windowMs: number): Promise<Hit> {
    const { rows } = await this.pool.query<{ hits: number; ttl_ms: number }>({
      name: 'rate-limit-hit',
      text: `insert into rate_limit_counter (key, window_started_at_utc, hits) values ($1, clock_timestamp(), 1)
             on conflict (key) do update set
               hits = case when rate_limit_counter.window_started_at_utc <= clock_timestamp() - make_interval(secs => $2) then 1
                           else rate_limit_counter.hits + 1 end,
               window_started_at_utc = case when rate_limit_counter.window_started_at_utc <= clock_timestamp() - make_interval(secs => $2)
                                            then excluded.window_started_at_utc else rate_limit_counter.window_started_at_utc end
             returning hits, greatest(0, extract(epoch from window_started_at_utc + make_interval(secs => $2) - clock_timestamp()) * 1000)::int as ttl_ms`,
      values: [key, windowMs / 1000],
    });
    const row = rows[0];
    return { current: row?.hits ?? 1, ttl: row?.ttl_ms ?? windowMs };
  }
  close() {
    return this.pool.end();
  }
}

/**
 * The one counter store of an app, shared by all its REST routes and by the tRPC call pipeline, so everything of one
 * bucket counts together whatever the transport (the plugin's own store gives each route its own counters). Keys
 * are the caller key plus the bucket's suffix (`u:<id>:auth`; none for the global bucket), as the plugin's
 * `groupId` builds them. A store failure lets the request through (the database being down fails it anyway).
 */
export class RateLimiter {
  constructor(private readonly store: CounterStore = new MemoryCounterStore()) {}
  incr(key: string, cb: (err: Error | null, res: Hit) => void, timeWindow: number) {
    this.store.hit(key, timeWindow).then(
      (res) => cb(null, res),
      (error: unknown) => cb(error instanceof Error ? error : new Error(String(error)), { current: 0, ttl: timeWindow }),
    );
  }
  /** Counts one call of `callerKey` in the bucket; false when it is over the bucket's limit. */
  async charge(config: AppConfig, bucket: RateBucket, callerKey: string): Promise<boolean> {
    const windowMs = config.rateLimit.windowSeconds * 1000;
    try {
      const res = await this.store.hit(`${callerKey}${bucket === 'global' ? '' : `:${bucket}`}`, windowMs);
      return res.current <= bucketLimit(config, bucket);
    } catch {
      return true;
    }
  }
  child() {
    return this;
  }
  async close() {
    await this.store.close?.();
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
        child() {
          return this;
        }
      } as never,
      skipOnError: true,
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
