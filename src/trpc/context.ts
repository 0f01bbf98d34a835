import type { IncomingHttpHeaders } from 'node:http';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { FastifyRequest } from 'fastify';
import type { AppConfig } from '../config.js';
import { withLazyFork } from '../db/request-manager.js';
import type { RequestAuth } from '../http/auth.js';
import { type ClientAuth, NO_CLIENT } from '../policy/client-caller.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { WebSocketGuard } from '../http/websocket-guard.js';
import type { JobRunner } from '../jobs/boss.js';
import { clock } from '../platform/clock.js';
import type { AuthSession, AuthUser, Clock } from '../platform/service-context.js';
import type { Storage } from '../platform/storage.js';
import type { SendBuffer } from '../realtime/backpressure.js';
import type { Realtime } from '../realtime/realtime.js';

/** Long-lived pieces shared by every request: built once by buildApp. */
export interface AppDeps {
  config: AppConfig;
  orm: MikroORM;
  storage: Storage;
  jobs: JobRunner;
  /** LISTEN/NOTIFY fan-out shared by the real-time subscriptions of this process. */
  realtime: Realtime;
  /** The rate-limit counters every transport charges. */
  rateLimiter: RateLimiter;
  /** Admission and revocation of the /trpc WebSockets. */
  websockets: WebSocketGuard;
}

/** How a call arrived: REST passes the Fastify hooks; tRPC calls (HTTP batch items, WebSocket messages) do not. */
export type Transport = 'rest' | 'http' | 'ws';

/** Per-call response side channel: REST applies it to the reply (status, Location, Retry-After...). */
export interface ResponseMeta {
  status?: number;
  headers: Record<string, string>;
  /** The answer already written as JSON (a journeys cache miss keeps it so), sent as it is instead of again. */
  json?: string;
}

/**
 * A procedure's context. Its `em`, `user`, `sessionId`, `clock` and `storage` make it a (Public)ServiceContext as
 * it stands, so a router hands `ctx` straight to a service, which never sees this type.
 */
export interface Context {
  deps: AppDeps;
  /**
   * Within a call: a fork of the ORM's EntityManager, one per call. A REST request is one call: its context has its
   * own fork, made when first read (hot reads given `ctx` do without: src/db/request-manager.ts). An HTTP batch or a
   * WebSocket shares one context between calls: the call pipeline of src/trpc/init.ts forks one per call, and the
   * context holds the root manager, which refuses entity work outside a fork (MikroORM's global-context check).
   */
  em: EntityManager;
  auth: RequestAuth;
  /** The caller (null when anonymous); `authedProcedure` narrows it to a user. */
  user: AuthUser | null;
  /** The caller's signed-in session (from the token's `sid` and `auth_time`). */
  authSession: AuthSession | null;
  /** `X-Session-Id` header, when sent. */
  sessionId: string | null;
  clock: Clock;
  storage: Storage;
  config: AppConfig;
  ip: string;
  resp: ResponseMeta;
  transport: Transport;
  /** The `Authorization` value the caller presented (WebSocket: from its connection params); re-checked per call. */
  bearer: string | undefined;
  /**
   * What one connection holds open: a WebSocket's context lives as long as the socket, whose outgoing queue live
   * streams watch (`socket`, WebSocket only: src/realtime/backpressure.ts).
   */
  connection: { subscriptions: number; socket?: SendBuffer };
  /** On /api/v2: the client application calling (journeys); elsewhere none. */
  client: ClientAuth;
  /** The request's raw headers (WebSocket: those of the upgrade request), for operations that read one (`Idempotency-Key`). */
  headers: IncomingHttpHeaders;
}

export function createContext(
  deps: AppDeps,
  req: FastifyRequest | null,
  opts: { transport: Transport; auth?: RequestAuth; bearer?: string; socket?: SendBuffer },
): Context {
  const session = req?.headers['x-session-id'];
  const resolved = opts.auth ?? req?.auth ?? { user: null, error: null };
  const ctx: Omit<Context, 'em'> & { em?: EntityManager } = {
    transport: opts.transport,
    bearer: opts.bearer ?? req?.headers.authorization,
    connection: opts.socket ? { subscriptions: 0, socket: opts.socket } : { subscriptions: 0 },
    deps,
    auth: resolved,
    user: resolved.user,
    authSession: resolved.session ?? null,
    clock,
    storage: deps.storage,
    config: deps.config,
    sessionId: typeof session === 'string' && session.trim() ? session.trim().slice(0, 200) : null,
    ip: req?.ip ?? '127.0.0.1',
    resp: { headers: {} },
    client: req?.client ?? NO_CLIENT,
    headers: req?.headers ?? {},
  };
  // A REST request is one call: its own fork, made when first used (a read of hot statements only never needs it).
  if (opts.transport === 'rest') return withLazyFork(ctx, deps.orm.em as EntityManager);
  ctx.em = deps.orm.em as EntityManager;
  return ctx as Context;
}
