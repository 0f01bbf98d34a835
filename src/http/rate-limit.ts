import pg from 'pg';
import type { FastifyInstance, FastifyRequest, preHandlerHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { AppConfig } from '../config.js';
import { RATE_LIMIT_DETAIL } from '../platform/problems.js';

/** The rate-limit bucket an operation counts against (DESIGN section 9). */
export type RateBucket = 'auth' | 'feedRead' | 'write' | 'global';

type Hit = { current: number; ttl: number };

/**
 * Where counters live: hits of a key in the current fixed window, and how long the window has left. `limit` is the
 * bucket's limit, which a store may use to count ahead (see PostgresCounterStore).
 */
export interface CounterStore {
  hit(key: string, windowMs: number, limit: number): Promise<Hit>;
  /** The hit when the store can count it without I/O (in memory, a lease's permit), else null: `hit` then. */
  hitNow(key: string, windowMs: number, limit: number): Hit | null;
  close?(): Promise<void>;
}

/** One process's counters (tests of the limiter itself, a single-process deployment that opts in). */
export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, { current: number; iterationStartMs: number }>();
  async hit(key: string, windowMs: number): Promise<Hit> {
    return this.hitNow(key, windowMs);
  }
  hitNow(key: string, windowMs: number): Hit {
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
 * Counters in PostgreSQL, shared by every API process, so a caller's limit holds whichever instance a load balancer
 * sends them to (an UNLOGGED table; the window is the database's clock).
 *
 * A round trip per request would cost a busy caller as much as the request itself, so a process counts ahead: it
 * adds a lease of several hits to the shared counter at once and admits the next requests of that key from the lease
 * without asking again. The lease is counted before it is used, so the processes together never admit more than the
 * limit; unused permits of a lease only make the caller reach the limit a little early. Leases are small fractions of
 * what is left (1/8), and small limits (< 64) are counted one hit at a time, exactly.
 */
export class PostgresCounterStore implements CounterStore {
  /** Its own small pool and a named (server-side prepared) statement: the cheapest round trip pg offers. */
  private readonly pool: pg.Pool;
  private readonly leases = new Map<string, Lease>();
  private readonly refills = new Map<string, Promise<void>>();
  constructor(connectionString: string) {
    // Bounded waits: during a database outage a request is let through (the handler answers 503), not held.
    this.pool = new pg.Pool({ connectionString, max: 4, application_name: 'territory-rate-limit', connectionTimeoutMillis: 2000, query_timeout: 2000 });
    // A broken idle connection is replaced on the next query; the error must not crash the process.
    this.pool.on('error', () => undefined);
  }
  async hit(key: string, windowMs: number, limit: number): Promise<Hit> {
    // Concurrent requests of one key wait for the lease being counted rather than each counting one of their own.
    for (let inflight = this.refills.get(key); inflight; inflight = this.refills.get(key)) {
      await inflight.catch(() => undefined);
      const local = this.fromLease(key, limit);
      if (local) return local;
    }
    const local = this.fromLease(key, limit);
    if (local) return local;
    const refill = this.countLease(key, windowMs, limit);
    // What waiters wait for: its end, never its failure (which the caller below gets; a rejection left unheard here
    // was an unhandled rejection, fatal to the process, whenever the database refused a refill nobody else awaited).
    const settled = refill.then(
      () => undefined,
      () => undefined,
    );
    this.refills.set(key, settled);
    try {
      return await refill;
    } finally {
      if (this.refills.get(key) === settled) this.refills.delete(key);
    }
  }
  /** While a lease of the key is being counted, its waiters go first. */
  hitNow(key: string, _windowMs: number, limit: number): Hit | null {
    return this.refills.has(key) ? null : this.fromLease(key, limit);
  }
  /** A permit of the key's live lease, or its refusal once over the limit; null when the database must be asked. */
  private fromLease(key: string, limit: number): Hit | null {
    const now = Date.now();
    const lease = this.leases.get(key);
    if (!lease || now >= lease.windowEndsAtMs) return null;
    if (lease.left > 0) {
      lease.left -= 1;
      return { current: lease.counted - lease.left, ttl: lease.windowEndsAtMs - now };
    }
    // Over the limit until the window ends, whatever other processes do: refused without asking again.
    if (lease.counted >= limit) {
      lease.counted += 1;
      return { current: lease.counted, ttl: lease.windowEndsAtMs - now };
    }
    return null;
  }
  /** Adds a lease to the shared counter and takes its first permit. */
  private async countLease(key: string, windowMs: number, limit: number): Promise<Hit> {
    const now = Date.now();
    const lease = this.leases.get(key);
    const size = leaseSize(limit, lease && now < lease.windowEndsAtMs ? lease.counted : 0);
    const { rows } = await this.pool.query<{ hits: number; ttl_ms: number }>({
      name: 'rate-limit-hit',
      text: `insert into rate_limit_counter (key, window_started_at_utc, hits) values ($1, clock_timestamp(), $3)
             on conflict (key) do update set
               hits = case when rate_limit_counter.window_started_at_utc <= clock_timestamp() - make_interval(secs => $2) then $3
                           else rate_limit_counter.hits + $3 end,
               window_started_at_utc = case when rate_limit_counter.window_started_at_utc <= clock_timestamp() - make_interval(secs => $2)
                                            then excluded.window_started_at_utc else rate_limit_counter.window_started_at_utc end
             returning hits, greatest(0, extract(epoch from window_started_at_utc + make_interval(secs => $2) - clock_timestamp()) * 1000)::int as ttl_ms`,
      values: [key, windowMs / 1000, size],
    });
    const counted = rows[0]?.hits ?? size;
    const ttl = rows[0]?.ttl_ms ?? windowMs;
    if (this.leases.size > 100_000) this.sweep(now);
    this.leases.set(key, { counted, left: size - 1, windowEndsAtMs: now + ttl });
    return { current: counted - (size - 1), ttl };
  }
  private sweep(now: number) {
    for (const [key, lease] of this.leases) if (lease.windowEndsAtMs <= now) this.leases.delete(key);
  }
  close() {
    return this.pool.end();
  }
}

/** Hits counted ahead in the shared counter (`counted` includes them); `left` of them not used yet. */
type Lease = { counted: number; left: number; windowEndsAtMs: number };

const EXACT_BELOW = 64;
const MAX_LEASE = 256;

/** How many hits to count at once: one for small limits, else an eighth of what is left, at most MAX_LEASE. */
export function leaseSize(limit: number, counted: number): number {
  if (limit < EXACT_BELOW) return 1;
  return Math.max(1, Math.min(MAX_LEASE, Math.floor((limit - counted) / 8)));
}

/**
 * The one counter store of an app, shared by all its REST routes and by the tRPC call pipeline, so everything of one
 * bucket counts together whatever the transport. Keys are the caller key plus the bucket's suffix (`u:<id>:auth`;
 * none for the global bucket). A store failure lets the request through (the database being down fails it anyway).
 */
export class RateLimiter {
  constructor(private readonly store: CounterStore = new MemoryCounterStore()) {}
  /** Counts one request of `key`: at once when the store can, else after its round trip; null when the store failed. */
  count(key: string, windowMs: number, limit: number, then: (hit: Hit | null) => void) {
    const now = this.store.hitNow(key, windowMs, limit);
    if (now) return then(now);
    this.store.hit(key, windowMs, limit).then(then, () => then(null));
  }
  /** Counts one call of `callerKey` in the bucket; false when it is over the bucket's limit. */
  async charge(config: AppConfig, bucket: RateBucket, callerKey: string): Promise<boolean> {
    const windowMs = config.rateLimit.windowSeconds * 1000;
    try {
      const limit = bucketLimit(config, bucket);
      const res = await this.store.hit(`${callerKey}${bucketSuffix(bucket)}`, windowMs, limit);
      return res.current <= limit;
    } catch {
      return true;
    }
  }
  async close() {
    await this.store.close?.();
  }
}

export function bucketLimit(config: AppConfig, bucket: RateBucket) {
  return config.rateLimit[bucket];
}

const bucketSuffix = (bucket: RateBucket) => (bucket === 'global' ? '' : `:${bucket}`);

/** A route's bucket (its `config.rateLimit`): none is the global bucket, `false` no limit (health probes). */
export type RouteRateLimit = { limit: number; suffix: string } | false | undefined;

declare module 'fastify' {
  interface FastifyContextConfig {
    rateLimit?: RouteRateLimit;
  }
}

/** Route config for an operation in a bucket (the global bucket is the default). */
export function rateLimitRouteConfig(config: AppConfig, bucket: RateBucket): RouteRateLimit {
  if (bucket === 'global') return undefined;
  return { limit: bucketLimit(config, bucket), suffix: bucketSuffix(bucket) };
}

/** Per user when authenticated, else per client IP. */
export const callerKey = (user: { id: string } | null, ip: string) => (user ? `u:${user.id}` : `ip:${ip}`);

/** The 429 the error handler answers (src/http/errors.ts: problem details with `Retry-After`). */
function rateLimited(request: FastifyRequest) {
  const error = new Error(RATE_LIMIT_DETAIL) as Error & { statusCode: number; rateLimited: boolean; instance: string };
  error.statusCode = 429;
  error.rateLimited = true;
  error.instance = request.url.split('?')[0] ?? request.url;
  return error;
}

/**
 * Every REST route counts its caller (after authentication, so per user when signed in) in its bucket, one
 * preHandler per route with its limit decided when the route is added; the answer carries `X-RateLimit-Limit`,
 * `-Remaining` and `-Reset` (seconds left in the window), and past the limit the request is refused with 429.
 * `/trpc` requests are charged per call by the tRPC pipeline instead (each call of a batch, each WebSocket message).
 * A callback hook: a permit counted in memory (the usual case, see PostgresCounterStore) answers without a tick.
 */
export const rateLimitPlugin = fp(
  async (app: FastifyInstance, opts: { config: AppConfig; limiter: RateLimiter }) => {
    const { limiter } = opts;
    const windowMs = opts.config.rateLimit.windowSeconds * 1000;
    app.addHook('onRoute', (route) => {
      const setting = route.config?.rateLimit;
      if (setting === false || route.url.startsWith('/trpc')) return;
      const limit = setting?.limit ?? opts.config.rateLimit.global;
      const suffix = setting?.suffix ?? '';
      const limitHeader = String(limit);
      const countRequest: preHandlerHookHandler = (request, reply, done) => {
        const user = request.auth?.user ?? null;
        // The address only for anonymous callers: behind a trusted proxy, reading it parses X-Forwarded-For each time.
        limiter.count(`${callerKey(user, user ? '' : request.ip)}${suffix}`, windowMs, limit, (hit) => {
          // The store failed: let the request through, uncounted.
          if (!hit) return done();
          // Lower-case names: stored as they are (security-headers.ts).
          reply.header('x-ratelimit-limit', limitHeader);
          reply.header('x-ratelimit-remaining', String(Math.max(0, limit - hit.current)));
          reply.header('x-ratelimit-reset', String(Math.ceil(hit.ttl / 1000)));
          done(hit.current > limit ? rateLimited(request) : undefined);
        });
      };
      const own = route.preHandler;
      route.preHandler = own === undefined ? [countRequest] : [...(Array.isArray(own) ? own : [own]), countRequest];
    });
  },
  { name: 'rate-limit', dependencies: ['auth'] },
);
