import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { adminProcedure } from '../../trpc/procedures.js';
import { completeInput, listInput, pagedInput, workItemOutput, workItemPage } from './work-items.schemas.js';
import * as workItems from './work-items.service.js';

const TAGS = ['Administration'];

export const workItemsRouter = router({
  adminList: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/admin/work-items', tags: TAGS, summary: 'List work items, newest first' },
    })
    .input(listInput)
    .output(z.array(workItemOutput))
    .query(({ ctx, input }) => workItems.listAdminQueue(ctx, input)),

  adminPaged: adminProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/admin/work-items/paged', tags: TAGS, summary: 'List work items, newest first (paged)' },
    })
    .input(pagedInput)
    .output(workItemPage)
    .query(({ ctx, input }) => workItems.pageAdminQueue(ctx, input)),

  adminComplete: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/admin/work-items/{workItemId}/complete',
        tags: TAGS,
        summary: "Complete a pending work item, applying its type's effect",
      },
    })
    .input(completeInput)
    .output(workItemOutput)
    .mutation(({ ctx, input }) => workItems.completeAsAdmin(ctx, input)),
});
