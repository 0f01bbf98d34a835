import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { addInput, interestsOutput, removeInput } from './interests.schemas.js';
import * as interests from './interests.service.js';

const TAGS = ['Governance'];

export const interestsRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/users/me/interests', tags: TAGS, summary: 'My interest tags' } })
    .output(interestsOutput)
    .query(({ ctx }) => interests.listInterests(ctx)),

  add: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/users/me/interests',
        tags: TAGS,
        summary: 'Add an interest tag',
        description:
          'The tag is trimmed and lower-cased. Answers the whole list: 201 when the tag was added, 200 when it was ' +
          'already there. More than 10 tags: 400 (code INTEREST_LIMIT_REACHED).',
      },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(addInput)
    .output(interestsOutput)
    .mutation(async ({ ctx, input }) => {
      const result = await interests.addInterest(ctx, input);
      if (!result.added) ctx.resp.status = 200;
      return result.interests;
    }),

  remove: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/users/me/interests/{tag}', tags: TAGS, summary: 'Remove an interest tag (204 even when absent)' },
      successStatus: 204,
    })
    .input(removeInput)
    .output(z.void())
    .mutation(({ ctx, input }) => interests.removeInterest(ctx, input)),
});
