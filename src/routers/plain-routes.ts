import type { FastifyInstance } from 'fastify';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import type { AppDeps } from '../trpc/context.js';

/**
 * Operations the tRPC/OpenAPI bridge cannot express (multipart uploads, form bodies, file streams): plain
 * Fastify routes that call the same services, each with its OpenAPI paths written from zod schemas.
 */
export interface PlainRoutes {
  register(app: FastifyInstance, deps: AppDeps): void;
  openapi: ZodOpenApiPathsObject;
}

export const plainRoutes: PlainRoutes[] = [];
