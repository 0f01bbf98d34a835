import { z } from 'zod';
import { type PlainRoutes, serviceContextOf } from '../../http/plain-routes.js';
import { rateLimitRouteConfig } from '../../http/rate-limit.js';
import { withUpload } from '../../http/uploads.js';
import { zId } from '../../platform/ids.js';
import { validationFailed } from '../../platform/problems.js';
import { residencyDocumentOutput } from './memberships.schemas.js';
import { requireResident } from './memberships.service.js';
import { RESIDENCY_DOCUMENT_MAX_BYTES, RESIDENCY_DOCUMENT_MIME_TYPES, submitUploadedDocument } from './residency-verification.service.js';

const UPLOAD_PATH = '/api/v1/memberships/{territoryId}/verify-residency/document/upload';
const uploadParams = z.object({ territoryId: zId });

const residencyUploadForm = z
  .object({ file: z.string().meta({ format: 'binary', description: 'JPEG, PNG or PDF, at most 5 MB (type sniffed from the content)' }) })
  .meta({ id: 'ResidencyDocumentUploadForm' });

/** The residency document upload: multipart, so a plain route beside the tRPC procedures. */
export const residencyUploadRoutes: PlainRoutes = {
  register(app, deps) {
    app.post(
      UPLOAD_PATH.replace('{territoryId}', ':territoryId'),
      { config: { rateLimit: rateLimitRouteConfig(deps.config, 'write') } },
      async (request, reply) => {
        const ctx = serviceContextOf(request, deps);
        const params = uploadParams.safeParse(request.params);
        if (!params.success) throw validationFailed('territoryId', 'must be a UUID');
        // Refuse non-residents before reading (and storing) any bytes.
        await requireResident(ctx, params.data.territoryId);
        const result = await withUpload(
          request,
          { field: 'file', maxBytes: RESIDENCY_DOCUMENT_MAX_BYTES, allowedMimeTypes: RESIDENCY_DOCUMENT_MIME_TYPES },
          (upload) => submitUploadedDocument(ctx, { territoryId: params.data.territoryId, upload }),
        );
        return reply.status(201).type('application/json').send(residencyDocumentOutput.parse(result));
      },
    );
  },
  openapi: {
    [UPLOAD_PATH]: {
      post: {
        tags: ['Memberships'],
        summary: "Upload a residency document (JPEG, PNG or PDF up to 5 MB) for the territory's curators (RESIDENT only)",
        description:
          'Stores the document as evidence of the territory and opens a RESIDENCY_VERIFICATION work item for its curators; ' +
          'their APPROVED decision makes the membership DOCUMENTVERIFIED. A document sent while an earlier one is pending ' +
          'supersedes it.',
        security: [{ BearerAuth: [] }],
        requestParams: { path: uploadParams },
        requestBody: { required: true, content: { 'multipart/form-data': { schema: residencyUploadForm } } },
        responses: {
          '201': { description: 'Document stored, work item opened', content: { 'application/json': { schema: residencyDocumentOutput } } },
          '400': { description: 'Malformed id, missing file, wrong type or too large' },
          '401': { description: 'Unauthorized' },
          '403': { description: 'The caller is not RESIDENT of the territory' },
          '404': { description: 'Unknown territory' },
          '413': { description: 'The storage quota of the caller would be exceeded (STORAGE_QUOTA_EXCEEDED)' },
        },
      },
    },
  },
};
