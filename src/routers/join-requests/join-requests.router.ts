import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { createJoinRequestInput, incomingInput, incomingPagedInput, joinRequestIdInput, joinRequestOutput, joinRequestPage } from './join-requests.schemas.js';
import * as joinRequests from './join-requests.service.js';

const TAGS = ['Join requests'];

export const joinRequestsRouter = router({
  create: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/territories/{territoryId}/join-requests',
        tags: TAGS,
        summary: 'Ask to become RESIDENT: up to 3 named recipients, else the curators, else the system admins',
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(createJoinRequestInput)
    .output(joinRequestOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, joinRequest } = await joinRequests.createJoinRequest(ctx, input);
      if (created) ctx.resp.headers.Location = `/api/v1/join-requests/${joinRequest.id}`;
      else ctx.resp.status = 200;
      return joinRequest;
    }),

  incoming: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/join-requests/incoming', tags: TAGS, summary: 'Join requests addressed to me or to my territories as curator' },
    })
    .input(incomingInput)
    .output(z.array(joinRequestOutput))
    .query(({ ctx, input }) => joinRequests.listIncoming(ctx, input)),

  incomingPaged: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/join-requests/incoming/paged', tags: TAGS, summary: 'Incoming join requests (paged)' } })
    .input(incomingPagedInput)
    .output(joinRequestPage)
    .query(({ ctx, input }) => joinRequests.pageIncoming(ctx, input)),

  byId: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/join-requests/{id}',
        tags: TAGS,
        summary: 'A join request (its requester, recipients, curators of the territory, system admins)',
      },
    })
    .input(joinRequestIdInput)
    .output(joinRequestOutput)
    .query(({ ctx, input }) => joinRequests.getJoinRequest(ctx, input)),

  approve: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/join-requests/{id}/approve', tags: TAGS, summary: 'Approve: the requester becomes RESIDENT' } })
    .input(joinRequestIdInput)
    .output(joinRequestOutput)
    .mutation(({ ctx, input }) => joinRequests.decideJoinRequest(ctx, { id: input.id, decision: 'APPROVED' })),

  reject: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/join-requests/{id}/reject', tags: TAGS, summary: 'Reject a join request' } })
    .input(joinRequestIdInput)
    .output(joinRequestOutput)
    .mutation(({ ctx, input }) => joinRequests.decideJoinRequest(ctx, { id: input.id, decision: 'REJECTED' })),

  cancel: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/join-requests/{id}/cancel', tags: TAGS, summary: 'Cancel my pending join request' } })
    .input(joinRequestIdInput)
    .output(joinRequestOutput)
    .mutation(({ ctx, input }) => joinRequests.cancelJoinRequest(ctx, input)),
});
