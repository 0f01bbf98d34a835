import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { FastifyRequest } from 'fastify';
import type { AppConfig } from '../config.js';
import type { RequestAuth } from '../http/auth.js';
import type { JobRunner } from '../jobs/boss.js';
import type { Storage } from '../platform/storage.js';
import type { Realtime } from '../realtime/realtime.js';

/** Long-lived pieces shared by every request: built once by buildApp. */
export interface AppDeps {
  config: AppConfig;
  orm: MikroORM;
  storage: Storage;
  jobs: JobRunner;
  /** LISTEN/NOTIFY fan-out shared by the real-time subscriptions of this process. */
  realtime: Realtime;
}

/** Per-call response side channel: REST applies it to the reply (status, Location, Retry-After...). */
export interface ResponseMeta {
  status?: number;
  headers: Record<string, string>;
}

export interface Context {
  deps: AppDeps;
  /** A fork of the ORM's EntityManager, one per request. */
  em: EntityManager;
  auth: RequestAuth;
  /** `X-Session-Id` header, when sent. */
  sessionId: string | null;
  ip: string;
  resp: ResponseMeta;
}

export function createContext(deps: AppDeps, req: FastifyRequest | null, auth?: RequestAuth): Context {
  const session = req?.headers['x-session-id'];
  return {
    deps,
    em: deps.orm.em.fork() as EntityManager,
    auth: auth ?? req?.auth ?? { user: null, error: null },
    sessionId: typeof session === 'string' && session.trim() ? session.trim().slice(0, 200) : null,
    ip: req?.ip ?? '127.0.0.1',
    resp: { headers: {} },
  };
}
