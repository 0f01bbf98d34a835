import type { FastifyInstance } from 'fastify';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import type { AppDeps } from '../trpc/context.js';
import { evidenceRoutes } from './evidence/evidence.routes.js';
import { verificationRoutes } from './verification/verification.routes.js';
import { residencyUploadRoutes } from './memberships/residency-upload.routes.js';
import { territoryEvidenceRoutes } from './territory-work-items/evidence-download.routes.js';
import { mediaRoutes } from './media/media.routes.js';
import { mapRoutes } from './map/map.routes.js';

/**
 * Operations the tRPC/OpenAPI bridge cannot express (multipart uploads, form bodies, file streams): plain
 * Fastify routes that call the same services, each with its OpenAPI paths written from zod schemas.
 */
export interface PlainRoutes {
  register(app: FastifyInstance, deps: AppDeps): void;
  openapi: ZodOpenApiPathsObject;
}

export const plainRoutes: PlainRoutes[] = [verificationRoutes, evidenceRoutes, residencyUploadRoutes, territoryEvidenceRoutes, mediaRoutes, mapRoutes];
