import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { platformFeeOutput, platformFeesOutput, putPlatformFeeInput, territoryIdInput } from './platform-fees.schemas.js';
import * as platformFees from './platform-fees.service.js';

const TAGS = ['Marketplace'];
const PATH = '/api/v1/territories/{territoryId}/platform-fees';

export const platformFeesRouter = router({
  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: PATH, tags: TAGS, summary: "The territory's platform fee per item type (members)" } })
    .input(territoryIdInput)
    .output(platformFeesOutput)
    .query(({ ctx, input }) => platformFees.getPlatformFees(ctx, input)),

  put: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: PATH,
        tags: TAGS,
        summary: 'Set the platform fee of one item type (curator, SYSTEM_ADMIN or FINANCIAL_MANAGER); taken from the seller at checkout',
      },
    })
    .input(putPlatformFeeInput)
    .output(platformFeeOutput)
    .mutation(({ ctx, input }) => platformFees.putPlatformFee(ctx, input)),
});
