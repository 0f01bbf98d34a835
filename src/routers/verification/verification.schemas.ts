import { z } from 'zod';
import { IDENTITY_STATUSES } from '../../entities/user.entity.js';
import { zId } from '../../platform/ids.js';
import { notesInput } from '../work-items/work-items.schemas.js';

/** Identity documents: photos or scans, sniffed from the bytes. */
export const IDENTITY_DOCUMENT_MIME_TYPES = ['image/jpeg', 'image/png', 'application/pdf'] as const;
export const IDENTITY_DOCUMENT_MAX_BYTES = 5 * 1024 * 1024;

export const identitySubmissionOutput = z
  .object({
    evidenceId: z.uuid(),
    workItemId: z.uuid(),
    status: z.enum(IDENTITY_STATUSES),
  })
  .meta({ id: 'IdentityVerificationSubmission' });
export type IdentitySubmissionOutput = z.infer<typeof identitySubmissionOutput>;

/** Multipart body of the upload, for the OpenAPI document. */
export const identityUploadForm = z
  .object({ file: z.string().meta({ format: 'binary', description: 'JPEG, PNG or PDF, at most 5 MB (type sniffed from the content)' }) })
  .meta({ id: 'IdentityDocumentUploadForm' });

export const decideIdentityInput = z.object({
  workItemId: zId,
  outcome: z.enum(['APPROVED', 'REJECTED']),
  notes: notesInput,
});
