import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { adminProcedure } from '../../trpc/procedures.js';
import { byKeyInput, putInput, systemConfigOutput } from './system-config.schemas.js';
import * as systemConfig from './system-config.service.js';

const TAGS = ['Administration'];

export const systemConfigRouter = router({
  list: adminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/admin/system-config', tags: TAGS, summary: 'List the system configuration' } })
    .output(z.array(systemConfigOutput))
    .query(({ ctx }) => systemConfig.listEntries(ctx)),

  byKey: adminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/admin/system-config/{key}', tags: TAGS, summary: 'Get one system configuration entry' } })
    .input(byKeyInput)
    .output(systemConfigOutput)
    .query(({ ctx, input }) => systemConfig.getEntry(ctx, input)),

  put: adminProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/v1/admin/system-config',
        tags: TAGS,
        summary: 'Create or replace a system configuration entry',
        description: 'Keys the code reads (seeded) only accept whole numbers within their range. Omitted category/description keep the stored ones.',
      },
    })
    .input(putInput)
    .output(systemConfigOutput)
    .mutation(({ ctx, input }) => systemConfig.putEntry(ctx, input)),
});
