import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { workItemOutput, workItemPage } from '../work-items/work-items.schemas.js';
import { residencyDecisionInput, territoryCompleteInput, territoryListInput, territoryPagedInput } from './territory-work-items.schemas.js';
import * as territoryWorkItems from './territory-work-items.service.js';

const TAGS = ['Territory administration'];

export const territoryWorkItemsRouter = router({
  list: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/territories/{territoryId}/work-items', tags: TAGS, summary: "The territory's work queue, newest first" },
    })
    .input(territoryListInput)
    .output(z.array(workItemOutput))
    .query(({ ctx, input }) => territoryWorkItems.listForTerritory(ctx, input)),

  paged: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/territories/{territoryId}/work-items/paged',
        tags: TAGS,
        summary: "The territory's work queue, newest first (paged)",
      },
    })
    .input(territoryPagedInput)
    .output(workItemPage)
    .query(({ ctx, input }) => territoryWorkItems.pageForTerritory(ctx, input)),

  complete: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/territories/{territoryId}/work-items/{workItemId}/complete',
        tags: TAGS,
        summary: "Complete a pending work item of the territory, applying its type's effect",
      },
    })
    .input(territoryCompleteInput)
    .output(workItemOutput)
    .mutation(({ ctx, input }) => territoryWorkItems.completeInTerritory(ctx, input)),

  decideResidency: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/territories/{territoryId}/verification/residency/{workItemId}/decide',
        tags: TAGS,
        summary: 'Decide a residency document: APPROVED makes the membership DOCUMENTVERIFIED',
      },
    })
    .input(residencyDecisionInput)
    .output(workItemOutput)
    .mutation(({ ctx, input }) => territoryWorkItems.decideResidency(ctx, input)),
});
