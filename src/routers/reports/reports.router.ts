import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { listReportsInput, pagedReportsInput, reportOutput, reportPage, reportPostInput, reportUserInput } from './reports.schemas.js';
import * as reports from './reports.service.js';
import { sessionTerritoryHeader } from '../../platform/service-context.js';

const TAGS = ['Moderation'];

export const reportsRouter = router({
  reportPost: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/reports/posts/{postId}',
        tags: TAGS,
        summary: 'Report a post (201; 200 with my report of it within the dedup window)',
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(reportPostInput)
    .output(reportOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, report } = await reports.reportPost(ctx, input, ctx.deps.jobs);
      if (!created) ctx.resp.status = 200;
      return report;
    }),

  reportUser: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/reports/users/{userId}',
        requestHeaders: sessionTerritoryHeader,
        tags: TAGS,
        summary: 'Report a user in a territory (201; 200 with my report of them within the dedup window)',
      },
      successStatus: 201,
      idempotentRepeat: true,
      queryFields: ['territoryId'],
    })
    .input(reportUserInput)
    .output(reportOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, report } = await reports.reportUser(ctx, input, ctx.deps.jobs);
      if (!created) ctx.resp.status = 200;
      return report;
    }),

  list: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/reports',
        requestHeaders: sessionTerritoryHeader,
        tags: TAGS,
        summary: "A territory's reports, newest first (curators and moderators; X-Session-Id may supply the territory)",
      },
    })
    .input(listReportsInput)
    .output(z.array(reportOutput))
    .query(({ ctx, input }) => reports.listReports(ctx, input)),

  paged: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/reports/paged',
        requestHeaders: sessionTerritoryHeader,
        tags: TAGS,
        summary: "A territory's reports, newest first (paged)",
      },
    })
    .input(pagedReportsInput)
    .output(reportPage)
    .query(({ ctx, input }) => reports.pageReports(ctx, input)),
});
