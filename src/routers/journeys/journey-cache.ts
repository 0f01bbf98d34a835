import { middlewareMarker } from '@trpc/server/unstable-core-do-not-import';
import { middleware } from '../../trpc/init.js';

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
  data: unknown;
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

  /** The live answer of the key (now the most recently used), or undefined. */
  get(key: string, nowMs: number): { data: unknown } | undefined {
    const found = this.entries.get(key);
    if (!found) return undefined;
    this.remove(key);
    if (found.expiresAtMs <= nowMs) return undefined;
    this.entries.set(key, found);
    this.totalChars += found.chars;
    return { data: found.data };
  }

  /** Keeps the answer unless it is too large or a write of its user ran since `generation` was read. */
  set(key: string, userKey: string, data: unknown, generation: string, expiresAtMs: number) {
    const chars = key.length + (JSON.stringify(data ?? null)?.length ?? 0);
    if (chars > this.bounds.maxEntryChars || this.generationOf(userKey) !== generation) return;
    this.remove(key);
    this.entries.set(key, { userKey, data, chars, expiresAtMs });
    this.totalChars += chars;
    while (this.entries.size > this.bounds.maxEntries || this.totalChars > this.bounds.maxTotalChars) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.remove(oldest.value);
    }
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

/** Drops every cached answer of a user (all clients). */
export function invalidateUser(userId: string) {
  cache.invalidateUser(userId);
}

/** Empties the cache (tests). */
export function clearJourneyCache() {
  cache.clear();
}

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
  const clientId = ctx.client.client?.id ?? '-';
  const userKey = userKeyOf(userId);
  const key = JSON.stringify([clientId, userKey, meta?.openapi?.path ?? path, stable((await getRawInput()) ?? null)]);
  const now = Date.now();
  const found = cache.get(key, now);
  if (found) {
    ctx.resp.headers['Cache-Control'] = `private, max-age=${JOURNEY_CACHE_SECONDS}`;
    ctx.resp.headers['X-Cache'] = 'HIT';
    return { ok: true as const, data: found.data, marker: middlewareMarker };
  }
  const generation = cache.generationOf(userKey);
  const result = await next();
  if (!result.ok) return result;
  cache.set(key, userKey, result.data, generation, now + JOURNEY_CACHE_SECONDS * 1000);
  ctx.resp.headers['Cache-Control'] = `private, max-age=${JOURNEY_CACHE_SECONDS}`;
  ctx.resp.headers['X-Cache'] = 'MISS';
  return result;
});
