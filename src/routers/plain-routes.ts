import type { PlainRoutes } from '../http/plain-routes.js';
import { oauthRoutes } from './clients/oauth.routes.js';
import { evidenceRoutes } from './evidence/evidence.routes.js';
import { createPostJourneyRoutes } from './journeys/create-post.routes.js';
import { mapRoutes } from './map/map.routes.js';
import { mediaRoutes } from './media/media.routes.js';
import { paymentsRoutes } from './checkouts/webhook.routes.js';
import { residencyUploadRoutes } from './memberships/residency-upload.routes.js';
import { territoryEvidenceRoutes } from './territory-work-items/evidence-download.routes.js';
import { verificationRoutes } from './verification/verification.routes.js';

/** Every plain Fastify route of the API (see src/http/plain-routes.ts), in registration order. */
export const plainRoutes: PlainRoutes[] = [
  verificationRoutes,
  evidenceRoutes,
  residencyUploadRoutes,
  territoryEvidenceRoutes,
  mediaRoutes,
  mapRoutes,
  paymentsRoutes,
  oauthRoutes,
  createPostJourneyRoutes,
];
