import { adminProcedure, authedProcedure, publicProcedure } from '../../trpc/procedures.js';
import { router } from '../../trpc/init.js';
import {
  adminCreateInput,
  byIdInput,
  listInput,
  pagedInput,
  territoryOutput,
  territoryPage,
} from './territories.schemas.js';
import * as territories from './territories.service.js';
import { z } from 'zod';

const TAGS = ['Territories'];

export const territoriesRouter = router({
  list: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/territories', tags: TAGS, summary: 'List active territories', protect: false } })
    .input(listInput)
    .output(z.array(territoryOutput))
    .query(({ ctx, input }) => territories.listActive(ctx.em, input.skip, input.take)),

  paged: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/territories/paged', tags: TAGS, summary: 'List active territories (paged)', protect: false } })
    .input(pagedInput)
    .output(territoryPage)
    .query(({ ctx, input }) => territories.pageActive(ctx.em, input.pageNumber, input.pageSize)),

  byId: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/territories/{id}', tags: TAGS, summary: 'Get a territory' } })
    .input(byIdInput)
    .output(territoryOutput)
    .query(({ ctx, input }) => territories.getById(ctx.em, input.id)),

  adminCreate: adminProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/admin/territories', tags: ['Administration'], summary: 'Create an ACTIVE territory' }, successStatus: 201 })
    .input(adminCreateInput)
    .output(territoryOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await territories.createActive(ctx.em, ctx.user.id, input);
      ctx.resp.headers.Location = `/api/v1/territories/${created.id}`;
      return created;
    }),
});
