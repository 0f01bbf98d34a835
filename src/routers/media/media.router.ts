import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { mediaIdInput } from './media.schemas.js';
import * as media from './media.service.js';

/** Upload and streaming are plain routes (media.routes.ts): multipart and byte streams. */
export const mediaRouter = router({
  delete: authedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/media/{id}',
        tags: ['Media'],
        summary: 'Delete my media (its uploader only); content showing it loses it',
      },
      successStatus: 204,
    })
    .input(mediaIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => media.deleteMedia(ctx, input)),
});
