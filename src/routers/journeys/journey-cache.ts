import { middlewareMarker } from '@trpc/server/unstable-core-do-not-import';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type AppMeta, middleware } from '../../trpc/init.js';
import { JOURNEY_CACHE_SECONDS, journeyAnswers as cache } from './answer-cache.js';

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

const CACHE_CONTROL = `private, max-age=${JOURNEY_CACHE_SECONDS}`;
/**
 * An answer is the client's and the user's: a device's HTTP cache (one client token, one URL, several users signing
 * in and out) must not hand one user's answer to the next. Replaces the CORS hook's `Vary: Origin` (no header more).
 */
const VARY = 'Origin, Authorization, X-User-Token';

/**
 * The journeys read cache (store: answer-cache.ts). Placed after the client (and user) checks, so a revoked client
 * or a missing scope is refused before any hit. On a GET: answers from the cache or stores the fresh answer, with
 * `Cache-Control: private, max-age=60` and `X-Cache: HIT|MISS`. Errors are never stored. Writes (v1 and v2) drop
 * the writer's entries in the call pipeline.
 */
export const journeyCache = middleware(async ({ ctx, meta, path, getRawInput, next }) => {
  if ((meta?.openapi?.method ?? 'GET') !== 'GET') return next();
  const userId = ctx.user?.id ?? null;
  const key = keyOf(ctx.client.client?.id, userId, meta?.openapi?.path ?? path, await getRawInput());
  const now = Date.now();
  const found = cache.get(key, now);
  if (found) {
    ctx.resp.headers['Cache-Control'] = CACHE_CONTROL;
    ctx.resp.headers['X-Cache'] = 'HIT';
    ctx.resp.headers.vary = VARY;
    return { ok: true as const, data: JSON.parse(found.json) as unknown, marker: middlewareMarker };
  }
  const generation = cache.generationOf(userKeyOf(userId));
  const result = await next();
  if (!result.ok) return result;
  ctx.resp.json = cache.set(key, userKeyOf(userId), result.data, generation, now + JOURNEY_CACHE_SECONDS * 1000);
  ctx.resp.headers['Cache-Control'] = CACHE_CONTROL;
  ctx.resp.headers['X-Cache'] = 'MISS';
  ctx.resp.headers.vary = VARY;
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
  void reply.status(200).header('cache-control', CACHE_CONTROL).header('x-cache', 'HIT').header('vary', VARY).type('application/json').send(found.json);
  return true;
}
