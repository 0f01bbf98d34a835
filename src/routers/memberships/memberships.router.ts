import type { AnyProcedure } from '@trpc/server';
import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { documentVerificationInput, geoVerificationInput, membershipOutput, residencyDocumentOutput, territoryIdInput } from './memberships.schemas.js';
import * as memberships from './memberships.service.js';
import { submitExistingEvidence } from './residency-verification.service.js';

const TAGS = ['Memberships'];

/**
 * The memberships API. Asking to become RESIDENT (become-resident, transfer-residency) creates a join request, so
 * the join-requests domain serves those procedures and the composition root (src/routers/index.ts) passes them in:
 * join-requests depends on memberships (residency rules and writes), never the other way round.
 */
export const membershipsRouter = <R extends Record<string, AnyProcedure>>(residencyRequests: R) =>
  router({
    enter: authedProcedure
      .meta({
        openapi: {
          method: 'POST',
          path: '/api/v1/territories/{territoryId}/enter',
          tags: TAGS,
          summary: 'Enter a territory: creates or returns my VISITOR membership',
        },
      })
      .input(territoryIdInput)
      .output(membershipOutput)
      .mutation(({ ctx, input }) => memberships.enter(ctx, input)),

    mine: authedProcedure
      .meta({ openapi: { method: 'GET', path: '/api/v1/memberships/me', tags: TAGS, summary: 'All my memberships' } })
      .output(z.array(membershipOutput))
      .query(({ ctx }) => memberships.listMine(ctx)),

    me: authedProcedure
      .meta({ openapi: { method: 'GET', path: '/api/v1/memberships/{territoryId}/me', tags: TAGS, summary: 'My membership in a territory (404 without one)' } })
      .input(territoryIdInput)
      .output(membershipOutput)
      .query(({ ctx, input }) => memberships.getMine(ctx, input)),

    // become-resident and transfer-residency: join requests, served by that domain (see the function's doc).
    ...residencyRequests,

    verifyGeo: authedProcedure
      .meta({
        openapi: {
          method: 'POST',
          path: '/api/v1/memberships/{territoryId}/verify-residency/geo',
          tags: TAGS,
          summary: 'Verify residency by geolocation (RESIDENT only)',
        },
      })
      .input(geoVerificationInput)
      .output(membershipOutput)
      .mutation(({ ctx, input }) => memberships.verifyByGeolocation(ctx, input)),

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
        const { created, result } = await submitExistingEvidence(ctx, input);
        if (!created) ctx.resp.status = 200;
        return result;
      }),
  });
