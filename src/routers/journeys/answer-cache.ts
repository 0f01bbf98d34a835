/**
 * The journeys read cache's store (DESIGN 15 "Cache"): a GET journey's answer is kept 60 s per (client, user, path,
 * query) in this process, in an LRU bounded in entries and in size (`AnswerCache`). Any write by a user, on v2 or
 * on v1 (a v1 like, block or cart change shows in that user's journeys at once), drops that user's entries (every
 * client): the call pipeline (src/trpc/init.ts) and the multipart journey call `userWrote`. Per process: another API
 * process keeps its own entries for at most the 60 s. The middleware that reads and fills it: journey-cache.ts.
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
  /** Each user's keys: a write drops them without a walk over everyone's entries (every write of every user does). */
  private readonly keysByUser = new Map<string, Set<string>>();
  private totalChars = 0;
  /**
   * Per user, a counter moved by every write: an answer computed while a write of its user ran is not stored (it may
   * predate the write and would outlive the invalidation).
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
    if (found.expiresAtMs <= nowMs) {
      this.remove(key);
      return undefined;
    }
    // Most recently used: to the end of the insertion order.
    this.entries.delete(key);
    this.entries.set(key, found);
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
    let keys = this.keysByUser.get(userKey);
    if (!keys) this.keysByUser.set(userKey, (keys = new Set()));
    keys.add(key);
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
    for (const key of this.keysByUser.get(userKey) ?? []) this.remove(key);
    // The counters only need to outlive the reads in flight: forget them once there are many.
    if (this.generations.size > this.bounds.maxEntries * 2) {
      this.generations.clear();
      this.epoch += 1;
    }
  }

  clear() {
    this.entries.clear();
    this.keysByUser.clear();
    this.generations.clear();
    this.epoch += 1;
    this.totalChars = 0;
  }

  private remove(key: string) {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.totalChars -= entry.chars;
    const keys = this.keysByUser.get(entry.userKey);
    keys?.delete(key);
    if (keys?.size === 0) this.keysByUser.delete(entry.userKey);
  }
}

/** This process's journeys cache. */
export const journeyAnswers = new AnswerCache({ maxEntries: MAX_ENTRIES, maxTotalChars: MAX_TOTAL_CHARS, maxEntryChars: MAX_ENTRY_CHARS });

/** A user wrote (or tried to: a failed write may have changed something too): their cached answers go, every client's. */
export function userWrote(userId: string) {
  journeyAnswers.invalidateUser(userId);
}

/** Empties the cache (tests). */
export function clearJourneyCache() {
  journeyAnswers.clear();
}
