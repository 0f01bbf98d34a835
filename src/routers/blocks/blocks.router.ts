import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { blockInput } from './blocks.schemas.js';
import * as blocks from './blocks.service.js';

const TAGS = ['Moderation'];
const BLOCK = 'Block a user: their posts, map entities and other content are hidden from me (idempotent, 204)';
const UNBLOCK = 'Unblock a user (idempotent, 204)';

/** The spec documents each operation at two paths; both are served. */
export const blocksRouter = router({
  block: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/users/{userId}/block', tags: TAGS, summary: BLOCK }, successStatus: 204 })
    .input(blockInput)
    .output(z.void())
    .mutation(({ ctx, input }) => blocks.blockUser(ctx, input)),

  unblock: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/v1/users/{userId}/block', tags: TAGS, summary: UNBLOCK }, successStatus: 204 })
    .input(blockInput)
    .output(z.void())
    .mutation(({ ctx, input }) => blocks.unblockUser(ctx, input)),

  blockAlias: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/blocks/users/{userId}', tags: TAGS, summary: `${BLOCK}; same as POST /api/v1/users/{userId}/block` },
      successStatus: 204,
    })
    .input(blockInput)
    .output(z.void())
    .mutation(({ ctx, input }) => blocks.blockUser(ctx, input)),

  unblockAlias: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/blocks/users/{userId}', tags: TAGS, summary: `${UNBLOCK}; same as DELETE /api/v1/users/{userId}/block` },
      successStatus: 204,
    })
    .input(blockInput)
    .output(z.void())
    .mutation(({ ctx, input }) => blocks.unblockUser(ctx, input)),
});
