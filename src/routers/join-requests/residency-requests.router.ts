import { authedProcedure } from '../../trpc/procedures.js';
import { becomeResidentInput, transferResidencyInput } from '../memberships/memberships.schemas.js';
import { joinRequestOutput } from './join-requests.schemas.js';
import { createJoinRequest } from './join-requests.service.js';

const TAGS = ['Memberships'];

/**
 * The memberships API's two ways of asking for residency. Both create a join request, so they live here; the
 * memberships router includes them (src/routers/index.ts).
 */
export const residencyRequestProcedures = {
  becomeResident: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/memberships/{territoryId}/become-resident',
        tags: TAGS,
        summary: 'Ask to become RESIDENT: 201 with the new join request, 200 with the pending one',
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(becomeResidentInput)
    .output(joinRequestOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, joinRequest } = await createJoinRequest(ctx, input);
      if (created) ctx.resp.headers.Location = `/api/v1/join-requests/${joinRequest.id}`;
      else ctx.resp.status = 200;
      return joinRequest;
    }),

  /**
   * Residency moves through a join request in the target territory, never directly: a direct move would let
   * anyone become RESIDENT anywhere without the approval rule 3 requires. The old membership stays RESIDENT
   * until the approval, which then demotes it to VISITOR and promotes the new one in one transaction.
   */
  transferResidency: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/memberships/transfer-residency',
        tags: TAGS,
        summary: 'Transfer my residency: a join request in the target territory; its approval moves the residency',
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(transferResidencyInput)
    .output(joinRequestOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, joinRequest } = await createJoinRequest(ctx, {
        territoryId: input.toTerritoryId,
        recipientUserIds: input.recipientUserIds,
        message: input.message,
        transfer: true,
      });
      if (created) ctx.resp.headers.Location = `/api/v1/join-requests/${joinRequest.id}`;
      else ctx.resp.status = 200;
      return joinRequest;
    }),
};
