import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { clock } from '../platform/clock.js';
import type { PublicServiceContext, ServiceContext } from '../platform/service-context.js';
import type { AppDeps } from '../trpc/context.js';
import { requireUser } from './route-auth.js';

/**
 * Operations the tRPC/OpenAPI bridge cannot express (multipart uploads, form bodies, file streams): plain Fastify
 * routes that call the same services, each with its OpenAPI paths written from zod schemas. The list of them is
 * src/routers/plain-routes.ts.
 */
export interface PlainRoutes {
  register(app: FastifyInstance, deps: AppDeps): void;
  openapi: ZodOpenApiPathsObject;
}

/** The service context of a plain route's call that may be anonymous (the caller, if any, and a fresh fork). */
export function publicServiceContextOf(request: FastifyRequest, deps: AppDeps): PublicServiceContext {
  const session = request.headers['x-session-id'];
  return {
    em: deps.orm.em.fork() as EntityManager,
    user: request.auth?.user ?? null,
    authSession: request.auth?.session ?? null,
    sessionId: typeof session === 'string' && session.trim() ? session.trim().slice(0, 200) : null,
    clock,
    storage: deps.storage,
    config: deps.config,
  };
}

/** The service context of a plain route's call: the signed-in caller (else 401) and a fresh EntityManager fork. */
export function serviceContextOf(request: FastifyRequest, deps: AppDeps): ServiceContext {
  const user = requireUser(request);
  return { ...publicServiceContextOf(request, deps), user };
}
