import { middlewareMarker } from '@trpc/server/unstable-core-do-not-import';
import { middleware } from '../../trpc/init.js';

/**
 * The journeys read cache (DESIGN 15 "Cache"): a GET journey's answer is kept 60 s per (client, user, path, query)
 * in this process, in an LRU bounded to MAX_ENTRIES; answers carry `Cache-Control: private, max-age=60` and
 * `X-Cache: HIT|MISS`. A successful v2 write by a user drops that user's entries (every client). Errors are never
 * stored. Per process: another API process keeps its own entries for at most the 60 s.
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

/** Map order is insertion order: re-inserting on a hit makes the first key the least recently used. */
const entries = new Map<string, Entry>();
let totalChars = 0;
/**
 * Per user, a counter moved by every v2 write: an answer computed while a write of its user ran is not stored (it may
 * predate the write and would outlive the invalidation).
 */
const generations = new Map<string, number>();
/** Moved when the counters are forgotten, so a read in flight then is not stored either. */
let epoch = 0;
const generationOf = (userKey: string) => `${epoch}:${generations.get(userKey) ?? 0}`;

function remove(key: string) {
  const entry = entries.get(key);
  if (!entry) return;
  entries.delete(key);
  totalChars -= entry.chars;
}

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
  generations.set(userId, (generations.get(userId) ?? 0) + 1);
  for (const [key, entry] of entries) if (entry.userKey === userId) remove(key);
  // The counters only need to outlive the reads in flight: forget them once there are many.
  if (generations.size > MAX_ENTRIES * 2) {
    generations.clear();
    epoch += 1;
  }
}

/** Empties the cache (tests). */
export function clearJourneyCache() {
  entries.clear();
  generations.clear();
  epoch += 1;
  totalChars = 0;
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
  const found = entries.get(key);
  if (found && found.expiresAtMs > now) {
    entries.delete(key);
    entries.set(key, found);
    ctx.resp.headers['Cache-Control'] = `private, max-age=${JOURNEY_CACHE_SECONDS}`;
    ctx.resp.headers['X-Cache'] = 'HIT';
    return { ok: true as const, data: found.data, marker: middlewareMarker };
  }
  if (found) remove(key);
  const generation = generationOf(userKey);
  const result = await next();
  if (!result.ok) return result;
  const chars = key.length + (JSON.stringify(result.data ?? null)?.length ?? 0);
  if (chars <= MAX_ENTRY_CHARS && generationOf(userKey) === generation) {
    remove(key);
    entries.set(key, { userKey, data: result.data, chars, expiresAtMs: now + JOURNEY_CACHE_SECONDS * 1000 });
    totalChars += chars;
    while (entries.size > MAX_ENTRIES || totalChars > MAX_TOTAL_CHARS) {
      const oldest = entries.keys().next();
      if (oldest.done) break;
      remove(oldest.value);
    }
  }
  ctx.resp.headers['Cache-Control'] = `private, max-age=${JOURNEY_CACHE_SECONDS}`;
  ctx.resp.headers['X-Cache'] = 'MISS';
  return result;
});
