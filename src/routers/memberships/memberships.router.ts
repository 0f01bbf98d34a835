import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { joinRequestOutput } from '../join-requests/join-requests.schemas.js';
import { createJoinRequest } from '../join-requests/join-requests.service.js';
import {
  becomeResidentInput,
  documentVerificationInput,
  geoVerificationInput,
  membershipOutput,
  residencyDocumentOutput,
  territoryIdInput,
  transferResidencyInput,
} from './memberships.schemas.js';
import * as memberships from './memberships.service.js';
import { submitExistingEvidence } from './residency-verification.service.js';

const TAGS = ['Memberships'];

export const membershipsRouter = router({
  enter: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/territories/{territoryId}/enter', tags: TAGS, summary: 'Enter a territory: creates or returns my VISITOR membership' } })
    .input(territoryIdInput)
    .output(membershipOutput)
    .mutation(({ ctx, input }) => memberships.enter(ctx.em, ctx.user.id, input.territoryId)),

  mine: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/memberships/me', tags: TAGS, summary: 'All my memberships' } })
    .output(z.array(membershipOutput))
    .query(({ ctx }) => memberships.listMine(ctx.em, ctx.user.id)),

  me: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/memberships/{territoryId}/me', tags: TAGS, summary: 'My membership in a territory (404 without one)' } })
    .input(territoryIdInput)
    .output(membershipOutput)
    .query(({ ctx, input }) => memberships.getMine(ctx.em, ctx.user.id, input.territoryId)),

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
      const { created, joinRequest } = await createJoinRequest(ctx.em, ctx.user, input);
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
      const { created, joinRequest } = await createJoinRequest(ctx.em, ctx.user, {
        territoryId: input.toTerritoryId,
        recipientUserIds: input.recipientUserIds,
        message: input.message,
        transfer: true,
      });
      if (created) ctx.resp.headers.Location = `/api/v1/join-requests/${joinRequest.id}`;
      else ctx.resp.status = 200;
      return joinRequest;
    }),

  verifyGeo: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/memberships/{territoryId}/verify-residency/geo', tags: TAGS, summary: 'Verify residency by geolocation (RESIDENT only)' } })
    .input(geoVerificationInput)
    .output(membershipOutput)
    .mutation(({ ctx, input }) => memberships.verifyByGeolocation(ctx.em, ctx.user.id, input)),

  verifyDocument: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/memberships/{territoryId}/verify-residency/document',
        tags: TAGS,
        summary: "Send an uploaded residency document to the territory's curators (RESIDENT only)",
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(documentVerificationInput)
    .output(residencyDocumentOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, result } = await submitExistingEvidence(ctx.em, ctx.user.id, input.territoryId, input.evidenceId);
      if (!created) ctx.resp.status = 200;
      return result;
    }),
});
