import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { ZodError } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { resolveBearer } from '../http/auth.js';
import { callerKey, type RateBucket } from '../http/rate-limit.js';
import { userWrote } from '../routers/journeys/answer-cache.js';
import { trackLiveStream } from './live-streams.js';
import {
  accountDeleted,
  AppError,
  concurrentUpdate,
  databaseUnavailable,
  invalidValue,
  isConcurrencyFailure,
  isDatabaseUnavailable,
  isDataException,
  isDeletedAccountWrite,
  tooManyRequests,
} from '../platform/problems.js';
import type { Context } from './context.js';
import { formatError } from './error-shape.js';

export { zodFieldErrors } from './error-shape.js';

export type AppMeta = OpenApiMeta<{
  /** HTTP status of a successful REST call when not 200 (201 created, 202 accepted for background work, 204 no content). */
  successStatus?: 201 | 202 | 204;
  /** With `successStatus: 201`: a repeat answers 200 with the existing resource (documented as such). */
  idempotentRepeat?: boolean;
  /** Defaults: GET -> global, other methods -> write. */
  rateLimit?: RateBucket;
  /**
   * A GET journey behind `journeyCache` (v2): its REST route answers a cache hit before the procedure runs
   * (`answerFromJourneyCache`). `actsForUser`: built on `journeyUserProcedure` (a signed-in user is required).
   */
  cachedJourney?: { actsForUser: boolean };
  /**
   * Input fields a write operation also reads from the query string (REST), where the spec puts them there (a user
   * report "may receive territoryId"); a value in the body wins. Documented as optional query parameters.
   */
  queryFields?: readonly string[];
}>;

/**
 * The one tRPC instance. No stack traces or internal messages ever leave the server (see `formatError`).
 */
const t = initTRPC.context<Context>().meta<AppMeta>().create({ isDev: false, errorFormatter: formatError });

/**
 * The one call pipeline, run by every single call whatever its transport (a REST request, one call of an HTTP
 * batch, one WebSocket message), folded into one middleware because each tRPC middleware copies the context again:
 * - a fresh EntityManager fork per call, so concurrent calls of one batch or socket never share a unit of work (a
 *   REST request, one call, has its own from createContext);
 * - on a WebSocket, the bearer the connection presented is verified again and the caller reloaded (expiry,
 *   deletion and revoked permissions take effect on the next message, not at reconnect);
 * - on /trpc, the call's rate-limit bucket (`meta.rateLimit`, else global for queries and write for mutations) is
 *   charged in the store the REST routes use (REST requests are charged by their Fastify route already);
 * - a subscription takes one of the connection's MAX_SUBSCRIPTIONS_PER_CONNECTION slots until its stream ends, and
 *   ends when its caller's token expires or their session or permissions are revoked (on SSE as on WebSocket);
 * - a data exception (a value PostgreSQL refuses) is a 400, never a 500, and a database that is down or restarting
 *   answers 503 DATABASE_UNAVAILABLE (with Retry-After), whether it failed in the procedure or in the pipeline.
 */
const callPipeline = t.middleware(async ({ ctx, meta, type, next }) => {
  let result: Awaited<ReturnType<typeof next>>;
  try {
    let { auth } = ctx;
    if (ctx.transport === 'ws') auth = await resolveBearer(ctx.bearer, ctx.config, ctx.deps.orm.em as EntityManager);
    if (ctx.transport !== 'rest') {
      const bucket: RateBucket = meta?.rateLimit ?? (type === 'mutation' ? 'write' : 'global');
      if (!(await ctx.deps.rateLimiter.charge(ctx.config, bucket, callerKey(auth.user, ctx.ip)))) throw tooManyRequests();
    }
    // A user's write (whatever its outcome: a failed one may have changed something too) drops their cached journeys
    // answers, before (a read then in flight is not stored) and after.
    const writer = type === 'mutation' ? auth.user?.id : undefined;
    if (writer) userWrote(writer);
    try {
      if (ctx.transport === 'rest') {
        // A REST request is one call: its context was made for it (with its own EntityManager fork), so it goes
        // on as it is, without one more copy of the context.
        result = await next();
      } else {
        const callCtx = { em: ctx.deps.orm.em.fork() as EntityManager, auth, user: auth.user, authSession: auth.session ?? null };
        result = type === 'subscription' ? await subscribe(ctx.connection, auth, () => next({ ctx: callCtx })) : await next({ ctx: callCtx });
      }
    } finally {
      if (writer) userWrote(writer);
    }
  } catch (error) {
    if (!(error instanceof AppError) && isDatabaseUnavailable(error)) throw databaseUnavailable();
    throw error;
  }
  if (!result.ok) {
    if (isDataException(result.error.cause)) throw invalidValue();
    if (isConcurrencyFailure(result.error.cause)) throw concurrentUpdate();
    if (isDeletedAccountWrite(result.error.cause)) throw accountDeleted();
    if (!(result.error instanceof AppError) && !(result.error.cause instanceof ZodError) && isDatabaseUnavailable(result.error)) throw databaseUnavailable();
  }
  return result;
});

/** Each open subscription holds a listener and a buffer: one connection holds a bounded number of them. */
async function subscribe<R extends { ok: boolean; data?: unknown }>(
  connection: { subscriptions: number },
  auth: { user: { id: string } | null; session?: { id: string } | null; expiresAtMs?: number | undefined },
  start: () => Promise<R>,
): Promise<R> {
  if (connection.subscriptions >= MAX_SUBSCRIPTIONS_PER_CONNECTION) {
    throw new AppError('TOO_MANY_REQUESTS', 'TOO_MANY_SUBSCRIPTIONS', `A connection holds at most ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions.`);
  }
  connection.subscriptions += 1;
  const release = () => (connection.subscriptions -= 1);
  let result: R;
  try {
    result = await start();
  } catch (error) {
    release();
    throw error;
  }
  if (!result.ok || !isAsyncIterable(result.data)) {
    release();
    return result;
  }
  // A revocation of the caller ends the stream (src/trpc/live-streams.ts); no caller, nothing to revoke.
  let revoke: () => void = () => undefined;
  const revoked = new Promise<'ended'>((resolve) => (revoke = () => resolve('ended')));
  const untrack = auth.user ? trackLiveStream(auth.user.id, auth.session?.id ?? null, revoke) : () => undefined;
  const releaseAll = () => {
    untrack();
    release();
  };
  return { ...result, data: releasedAtEnd(result.data, releaseAll, auth.expiresAtMs, revoked) };
}

const MAX_SUBSCRIPTIONS_PER_CONNECTION = 20;

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> => typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/**
 * The same stream, ended when the caller's token expires (the client re-subscribes with a fresh one) or `revoked`
 * settles (the caller's session or permissions were revoked), with `release` run once when it ends for any reason
 * (completion, error, unsubscribe, expiry, revocation).
 */
async function* releasedAtEnd<T>(source: AsyncIterable<T>, release: () => void, expiresAtMs: number | undefined, revoked: Promise<'ended'>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    if (expiresAtMs !== undefined) timer = setTimeout(() => resolve('expired'), Math.max(0, expiresAtMs - Date.now()));
  });
  try {
    for (;;) {
      const pending = iterator.next();
      // Left behind at expiry, it settles when the source winds down: never an unhandled rejection.
      pending.catch(() => undefined);
      const next = await Promise.race([pending, expired, revoked]);
      if (next === 'expired' || next === 'ended' || next.done) return;
      yield next.value;
    }
  } finally {
    clearTimeout(timer);
    // Not awaited: a source waiting for its next item finishes only once tRPC aborts it, after this stream ends.
    void iterator.return?.()?.catch(() => undefined);
    release();
  }
}

export const router = t.router;

export const middleware = t.middleware;
export const baseProcedure = t.procedure.use(callPipeline);
export const createCallerFactory = t.createCallerFactory;
