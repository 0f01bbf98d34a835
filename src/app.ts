import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import type { EntityManager } from '@mikro-orm/postgresql';
import Fastify, { type FastifyInstance } from 'fastify';
import type { WebSocket } from 'ws';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { AppConfig } from './config.js';
import { createOrm } from './db/orm.js';
import { authPlugin, resolveBearer } from './http/auth.js';
import { csrfOpenApiPaths, csrfPlugin } from './http/csrf.js';
import { bodyDrainPlugin } from './http/body-drain.js';
import { corsPlugin, VARY_ORIGIN } from './http/cors.js';
import { clientErrorHandler, frameworkError } from './http/edge-errors.js';
import { errorsPlugin, headersOfErrors } from './http/errors.js';
import { MemoryCounterStore, PostgresCounterStore, RateLimiter, rateLimitPlugin } from './http/rate-limit.js';
import { httpsRedirectPlugin, securityHeadersPlugin } from './http/security-headers.js';
import { systemPlugin } from './http/system.js';
import { WebSocketGuard } from './http/websocket-guard.js';
import { JobRunner } from './jobs/boss.js';
import { listenForOutboxSignals, outboxDispatchJob } from './routers/notifications/outbox-dispatch.job.js';
import { buildOpenApiDocument } from './openapi/document.js';
import { mountRestOperations } from './openapi/plugin.js';
import { LocalDiskStorage } from './platform/storage.js';
import { API_VERSION } from './platform/version.js';
import { CALLER_CHANGED_CHANNEL, forgetCachedUser, parseCallerChange } from './policy/caller.js';
import { Realtime } from './realtime/realtime.js';
import { appRouter, type AppRouter } from './routers/index.js';
import { OutboxNotifySubscriber } from './routers/notifications/outbox.js';
import { plainRoutes } from './routers/plain-routes.js';
import { type AppDeps, createContext } from './trpc/context.js';
import { endLiveStreams } from './trpc/live-streams.js';

/** Calls in one HTTP batch at most; a larger batch is a 400. */
const MAX_BATCH_SIZE = 10;

export { API_VERSION };

let cachedDocument: ReturnType<typeof buildOpenApiDocument> | undefined;
/** The OpenAPI document: the same for every app instance of this process, so built once. */
export function openApiDocument() {
  cachedDocument ??= buildOpenApiDocument(appRouter, Object.assign({}, csrfOpenApiPaths, ...plainRoutes.map((r) => r.openapi)), API_VERSION);
  return cachedDocument;
}

export interface BuiltApp {
  app: FastifyInstance;
  deps: AppDeps;
  /** Drains HTTP, stops the job runner, closes the ORM pool. */
  close(): Promise<void>;
}

export interface BuildOptions {
  /** Registers extra routes before the app is sealed (tests add throwing or CSRF-protected routes). */
  extend?: (app: FastifyInstance) => void | Promise<void>;
}

/**
 * Registers plugins in a fixed order: external (errors, headers, CORS, body parsers) -> app (auth, rate limit,
 * health) -> routes (tRPC, REST, plain routes, docs).
 */
export async function buildApp(config: AppConfig, databaseUrl: string, options: BuildOptions = {}): Promise<BuiltApp> {
  const orm = await createOrm(databaseUrl);
  // Commits that write outbox rows signal the dispatcher (NOTIFY outbox_pending).
  orm.em.getEventManager().registerSubscriber(new OutboxNotifySubscriber());
  const runWorkers = config.jobsEnabled && config.role !== 'api';
  const storage = new LocalDiskStorage(join(config.dataDir, 'files'));
  const jobs = new JobRunner(databaseUrl, orm, runWorkers, storage, config);
  const realtime = new Realtime(databaseUrl, (message, error) => app.log.warn({ err: error }, message));
  const rateLimiter = new RateLimiter(config.rateLimit.store === 'postgres' ? new PostgresCounterStore(databaseUrl) : new MemoryCounterStore());
  const websockets = new WebSocketGuard();
  const deps: AppDeps = { config, orm, storage, jobs, realtime, rateLimiter, websockets };

  const app = Fastify({
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
    // Outside production the server is reached directly; in production only the configured proxies are believed, so a
    // client cannot pick its own IP (and rate-limit key) with X-Forwarded-For.
    trustProxy: config.production ? config.trustProxy : false,
    bodyLimit: 1024 * 1024,
    // Ids are UUIDs; long garbage in a path should not reach the router's regexes.
    routerOptions: { maxParamLength: 200 },
    // What fails before routing, or before HTTP parsing completes, still answers problem details (src/http/edge-errors.ts).
    frameworkErrors: frameworkError,
    clientErrorHandler,
  });

  // External
  await app.register(errorsPlugin);
  await app.register(securityHeadersPlugin);
  await app.register(bodyDrainPlugin);
  if (config.production) await app.register(httpsRedirectPlugin, { publicBaseUrl: config.publicBaseUrl! });
  await app.register(corsPlugin, { allowedOrigins: config.cors.allowedOrigins });
  // JSON only (multipart on the upload routes, a form on /oauth/token): Fastify's default text/plain parser would hand
  // a string to a JSON operation, a 400 where any other media type is a 415.
  app.removeContentTypeParser('text/plain');
  // An empty JSON body on POST counts as `{}`: body-less actions (enter, approve...) must not fail on it.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      const error = new Error('The request body is not valid JSON.') as Error & { statusCode: number };
      error.statusCode = 400;
      done(error, undefined);
    }
  });
  // Cookies are parsed where they are read (the CSRF routes), not on every request.
  await app.register(cookie, { hook: false });

  // App
  await app.register(authPlugin, { config, em: orm.em as EntityManager });
  await app.register(rateLimitPlugin, { config, limiter: rateLimiter });
  await app.register(systemPlugin, { deps });
  await app.register(csrfPlugin);

  // Routes
  // Messages are bounded like HTTP bodies (the library's default is 100 MiB).
  await app.register(websocket, { options: { maxPayload: 1024 * 1024 } });
  // The WebSocket admission hook in the scope of the tRPC routes only: REST requests never open a socket.
  await app.register(async (trpc) => {
    websockets.register(trpc, '/trpc');
    await trpc.register(fastifyTRPCPlugin, {
      prefix: '/trpc',
      useWSS: true,
      trpcOptions: {
        router: appRouter,
        // Batches are capped: each call costs a check and a rate-limit charge, but not unboundedly many per request.
        maxBatchSize: MAX_BATCH_SIZE,
        createContext: async ({ req, res, info }) => {
          // WebSocket connections authenticate with connection params ({ token }) or the upgrade's header; the call
          // pipeline re-checks that bearer on every message (src/trpc/init.ts).
          // Only authenticated sockets are kept (src/http/websocket-guard.ts); `req` is then the raw upgrade request.
          if (!req.auth) {
            const token = info.connectionParams?.token;
            const bearer = typeof token === 'string' && token ? `Bearer ${token}` : req.headers.authorization;
            const auth = await resolveBearer(bearer, config, orm.em as EntityManager);
            websockets.admit(req.raw ?? (req as unknown as IncomingMessage), res as unknown as WebSocket, auth.user, auth.session?.id ?? null);
            return createContext(deps, req, { transport: 'ws', bearer, auth, socket: res as unknown as WebSocket });
          }
          return createContext(deps, req, { transport: 'http' });
        },
        // tRPC's answer carries its own `Vary` (trpc-accept, accept), which replaces the CORS hook's: Origin is added.
        // A failed call's headers are its errors' own (a 429's `Retry-After: 60`, as on REST).
        responseMeta: ({ ctx, errors }) => ({
          headers: ctx && errors.length === 0 ? { ...ctx.resp.headers, vary: VARY_ORIGIN } : { ...headersOfErrors(errors), vary: VARY_ORIGIN },
        }),
        onError: ({ error, path }) => {
          if (error.code === 'INTERNAL_SERVER_ERROR') app.log.error({ err: error.cause ?? error, path }, 'trpc call failed');
        },
      } satisfies FastifyTRPCPluginOptions<AppRouter>['trpcOptions'],
    });
  });
  mountRestOperations(app, deps, appRouter);
  // Multipart parsing only where uploads arrive: the plugin adds three async hooks (and a listener) to every request
  // of its scope, a few microseconds each request; the plain routes are its scope, the REST operations are not.
  await app.register(async (uploads) => {
    await uploads.register(multipart, { limits: { fileSize: 100 * 1024 * 1024, files: 10, fields: 20 } });
    for (const routes of plainRoutes) routes.register(uploads, deps);
  });

  app.get('/openapi.json', { config: { rateLimit: false }, schema: { hide: true } }, async () => openApiDocument());
  await app.register(swagger, { mode: 'static', specification: { document: openApiDocument() as never } });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: false, uiConfig: { persistAuthorization: true, deepLinking: true } });
  await options.extend?.(app);

  await app.ready();
  // Revocations announced by any process (src/policy/caller.ts) reach this one's cache and sockets.
  realtime.on(CALLER_CHANGED_CHANNEL, (payload) => {
    const change = parseCallerChange(payload);
    if (!change) return;
    forgetCachedUser(change.userId);
    if (change.closeSockets) {
      websockets.close(change);
      endLiveStreams(change);
    }
  });
  await realtime.start();
  if (runWorkers) {
    listenForOutboxSignals(
      realtime,
      async () => (jobs.isRunning() ? jobs.send(outboxDispatchJob, {}) : null),
      (message, error) => app.log.warn({ err: error }, message),
    );
  }
  if (config.jobsEnabled) await jobs.start();

  let closed = false;
  return {
    app,
    deps,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await jobs.stop();
      await realtime.stop();
      await rateLimiter.close();
      await orm.close();
    },
  };
}
