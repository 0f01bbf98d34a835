import { middlewareMarker } from '@trpc/server/unstable-core-do-not-import';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type AppMeta, middleware } from '../../trpc/init.js';

/**
 * The journeys read cache (DESIGN 15 "Cache"): a GET journey's answer is kept 60 s per (client, user, path, query)
 * in this process, in an LRU bounded in entries and in size (`AnswerCache`); answers carry `Cache-Control: private,
 * max-age=60` and `X-Cache: HIT|MISS`. A v2 write by a user (whatever its outcome) drops that user's entries (every
 * client). Errors are never stored. Per process: another API process keeps its own entries for at most the 60 s.
 */
export const JOURNEY_CACHE_SECONDS = 60;
/** Bounds of the LRU: entries, and the total size of the answers (as JSON characters). */
const MAX_ENTRIES = 5000;
const MAX_TOTAL_CHARS = 64 * 1024 * 1024;
/** A larger answer is served but not kept. */
const MAX_ENTRY_CHARS = 1024 * 1024;

interface Entry {
  userKey: string;
  /** The answer as sent: serialized once, when stored, so a hit writes it as it is. */
  json: string;
  chars: number;
  expiresAtMs: number;
}

export interface AnswerCacheBounds {
  maxEntries: number;
  maxTotalChars: number;
  maxEntryChars: number;
}

/**
 * The answers kept, least recently used first (Map order is insertion order: re-inserting on a hit makes the first
 * key the least recently used), within its bounds: past either one, the least recently used entries go.
 */
export class AnswerCache {
  private readonly entries = new Map<string, Entry>();
  private totalChars = 0;
  /**
   * Per user, a counter moved by every v2 write: an answer computed while a write of its user ran is not stored (it
   * may predate the write and would outlive the invalidation).
   */
  private readonly generations = new Map<string, number>();
  /** Moved when the counters are forgotten, so a read in flight then is not stored either. */
  private epoch = 0;

  constructor(private readonly bounds: AnswerCacheBounds) {}

  get size() {
    return { entries: this.entries.size, chars: this.totalChars };
  }

  generationOf(userKey: string) {
    return `${this.epoch}:${this.generations.get(userKey) ?? 0}`;
  }

  /** The live answer of the key as JSON (now the most recently used), or undefined. */
  get(key: string, nowMs: number): { json: string } | undefined {
    const found = this.entries.get(key);
    if (!found) return undefined;
    this.remove(key);
    if (found.expiresAtMs <= nowMs) return undefined;
    this.entries.set(key, found);
    this.totalChars += found.chars;
    return { json: found.json };
  }

  /**
   * Keeps the answer unless it is too large or a write of its user ran since `generation` was read; either way
   * answers it as JSON, which the caller sends as it is (an answer serialized once).
   */
  set(key: string, userKey: string, data: unknown, generation: string, expiresAtMs: number): string {
    const json = JSON.stringify(data ?? null);
    const chars = key.length + json.length;
    if (chars > this.bounds.maxEntryChars || this.generationOf(userKey) !== generation) return json;
    this.remove(key);
    this.entries.set(key, { userKey, json, chars, expiresAtMs });
    this.totalChars += chars;
    while (this.entries.size > this.bounds.maxEntries || this.totalChars > this.bounds.maxTotalChars) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.remove(oldest.value);
    }
    return json;
  }

  /** Drops every answer of a user. */
  invalidateUser(userKey: string) {
    this.generations.set(userKey, (this.generations.get(userKey) ?? 0) + 1);
    for (const [key, entry] of this.entries) if (entry.userKey === userKey) this.remove(key);
    // The counters only need to outlive the reads in flight: forget them once there are many.
    if (this.generations.size > this.bounds.maxEntries * 2) {
      this.generations.clear();
      this.epoch += 1;
    }
  }

  clear() {
    this.entries.clear();
    this.generations.clear();
    this.epoch += 1;
    this.totalChars = 0;
  }

  private remove(key: string) {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.totalChars -= entry.chars;
  }
}

/** This process's journeys cache. */
const cache = new AnswerCache({ maxEntries: MAX_ENTRIES, maxTotalChars: MAX_TOTAL_CHARS, maxEntryChars: MAX_ENTRY_CHARS });

const stable = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, stable((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
};

const userKeyOf = (userId: string | null | undefined) => userId ?? '-';

/** The entry of one read: client, user, the operation's path and its raw input (key order does not matter). */
const keyOf = (clientId: string | undefined, userId: string | null | undefined, path: string, rawInput: unknown) =>
  `${clientId ?? '-'}\u0000${userKeyOf(userId)}\u0000${path}\u0000${canonicalInput(rawInput ?? null)}`;

const isPrimitive = (value: unknown) => value === null || typeof value !== 'object';

/**
 * The input as JSON with its keys sorted. A REST read's input is flat (query and path values: strings, or lists of
 * them): a copy with the keys inserted in order is written by JSON.stringify's fast path (a replacer list, the key
 * order's other way, takes the slow one; `stable` copies everything, ~2 us of a cache hit). Anything nested gets
 * `stable`.
 */
function canonicalInput(input: unknown): string {
  if (isPrimitive(input) || Array.isArray(input)) return JSON.stringify(stable(input));
  const keys = Object.keys(input as object).sort();
  const sorted: Record<string, unknown> = {};
  for (const key of keys) {
    const value = (input as Record<string, unknown>)[key];
    // `__proto__` would set the copy's prototype, not a key: `stable` defines it as one.
    if (key === '__proto__' || (!isPrimitive(value) && !(Array.isArray(value) && value.every(isPrimitive)))) return JSON.stringify(stable(input));
    sorted[key] = value;
  }
  return JSON.stringify(sorted);
}

/** Drops every cached answer of a user (all clients). */
export function invalidateUser(userId: string) {
  cache.invalidateUser(userId);
}

/** Empties the cache (tests). */
export function clearJourneyCache() {
  cache.clear();
}

const CACHE_CONTROL = `private, max-age=${JOURNEY_CACHE_SECONDS}`;

/**
 * Placed after the client (and user) checks, so a revoked client or a missing scope is refused before any hit. On a
 * GET: answers from the cache or stores the fresh answer. On any other method: the caller's entries are dropped
 * (before and after the write, whatever its outcome).
 */
export const journeyCache = middleware(async ({ ctx, meta, path, getRawInput, next }) => {
  const method = meta?.openapi?.method ?? 'GET';
  const userId = ctx.user?.id ?? null;
  if (method !== 'GET') {
    // Before and after: a failed write may have changed something too (a declined checkout keeps its orders).
    if (userId) invalidateUser(userId);
    try {
      return await next();
    } finally {
      if (userId) invalidateUser(userId);
    }
  }
  const key = keyOf(ctx.client.client?.id, userId, meta?.openapi?.path ?? path, await getRawInput());
  const now = Date.now();
  const found = cache.get(key, now);
  if (found) {
    ctx.resp.headers['Cache-Control'] = CACHE_CONTROL;
    ctx.resp.headers['X-Cache'] = 'HIT';
    return { ok: true as const, data: JSON.parse(found.json) as unknown, marker: middlewareMarker };
  }
  const generation = cache.generationOf(userKeyOf(userId));
  const result = await next();
  if (!result.ok) return result;
  ctx.resp.json = cache.set(key, userKeyOf(userId), result.data, generation, now + JOURNEY_CACHE_SECONDS * 1000);
  ctx.resp.headers['Cache-Control'] = CACHE_CONTROL;
  ctx.resp.headers['X-Cache'] = 'MISS';
  return result;
});

/**
 * A REST GET journey answered from the cache before its procedure runs: the hit of `journeyCache` without the
 * tRPC call around it (context, EntityManager fork, middleware chain), which on a hit does nothing but checks, and
 * writing the stored JSON as it is. It answers only when every check the procedure makes before `journeyCache`
 * passes: a client token whose client is active and holds `journeys:read` (read from the database on this very
 * request by the auth hook, so a deactivation or rotation still takes effect at once) and, for a journey acting for
 * a user, a valid `X-User-Token`. Anything else (a miss, an expired entry, any refusal) goes on to the procedure,
 * which answers exactly as before. Rate limiting and authentication ran already (Fastify hooks).
 */
export function answerFromJourneyCache(
  request: FastifyRequest,
  reply: FastifyReply,
  journey: NonNullable<AppMeta['cachedJourney']>,
  path: string,
  rawInput: Record<string, unknown>,
): boolean {
  const client = request.client.client;
  if (!client?.scopes.includes('journeys:read')) return false;
  const userId = request.auth.user?.id ?? null;
  if (journey.actsForUser && !userId) return false;
  const found = cache.get(keyOf(client.id, userId, path, rawInput), Date.now());
  if (!found) return false;
  void reply.status(200).header('cache-control', CACHE_CONTROL).header('x-cache', 'HIT').type('application/json').send(found.json);
  return true;
}
