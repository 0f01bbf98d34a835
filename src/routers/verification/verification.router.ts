import { router } from '../../trpc/init.js';
import { adminProcedure } from '../../trpc/procedures.js';
import { workItemOutput } from '../work-items/work-items.schemas.js';
import { decideIdentityInput } from './verification.schemas.js';
import * as verification from './verification.service.js';

export const verificationRouter = router({
  decideIdentity: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/admin/verifications/identity/{workItemId}/decide',
        tags: ['Administration'],
        summary: 'Approve or reject an identity verification (user becomes Verified or Rejected)',
      },
    })
    .input(decideIdentityInput)
    .output(workItemOutput)
    .mutation(({ ctx, input }) => verification.decideIdentity(ctx, input)),
});
