import { rateLimitRouteConfig } from '../../http/rate-limit.js';
import { withUpload } from '../../http/uploads.js';
import { type PlainRoutes, serviceContextOf } from '../../http/plain-routes.js';
import { IDENTITY_DOCUMENT_MAX_BYTES, IDENTITY_DOCUMENT_MIME_TYPES, identitySubmissionOutput, identityUploadForm } from './verification.schemas.js';
import { submitIdentityDocument } from './verification.service.js';

const UPLOAD_PATH = '/api/v1/verification/identity/document/upload';

/** The identity document upload: multipart, so a plain route beside the tRPC procedures. */
export const verificationRoutes: PlainRoutes = {
  register(app, deps) {
    app.post(UPLOAD_PATH, { config: { rateLimit: rateLimitRouteConfig(deps.config, 'write') } }, async (request, reply) => {
      const ctx = serviceContextOf(request, deps);
      const result = await withUpload(
        request,
        { field: 'file', maxBytes: IDENTITY_DOCUMENT_MAX_BYTES, allowedMimeTypes: IDENTITY_DOCUMENT_MIME_TYPES },
        (upload) => submitIdentityDocument(ctx, { upload }),
      );
      return reply.status(201).type('application/json').send(identitySubmissionOutput.parse(result));
    });
  },
  openapi: {
    [UPLOAD_PATH]: {
      post: {
        tags: ['Verification'],
        summary: 'Send an identity document (JPEG, PNG or PDF up to 5 MB); the user becomes Pending',
        description:
          'Opens an IDENTITY_VERIFICATION work item for the administrators. A document sent while an earlier one is ' +
          'pending supersedes it (the earlier item is cancelled). Already verified: 409.',
        security: [{ BearerAuth: [] }],
        requestBody: { required: true, content: { 'multipart/form-data': { schema: identityUploadForm } } },
        responses: {
          '201': { description: 'Document stored, work item opened', content: { 'application/json': { schema: identitySubmissionOutput } } },
          '400': { description: 'Missing file, wrong type or too large' },
          '401': { description: 'Unauthorized' },
          '409': { description: 'Identity already verified' },
          '413': { description: 'The storage quota of the caller would be exceeded (STORAGE_QUOTA_EXCEEDED)' },
        },
      },
    },
  },
};
