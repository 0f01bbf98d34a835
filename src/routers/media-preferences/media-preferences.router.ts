import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { mediaPreferencesInput, mediaPreferencesOutput } from './media-preferences.schemas.js';
import * as mediaPreferences from './media-preferences.service.js';

const TAGS = ['Preferences'];

export const mediaPreferencesRouter = router({
  get: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/user/media-preferences', tags: TAGS, summary: 'My media preferences' } })
    .output(mediaPreferencesOutput)
    .query(({ ctx }) => mediaPreferences.getMediaPreferences(ctx)),

  update: authedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/v1/user/media-preferences',
        tags: TAGS,
        summary: 'Update my media preferences (partial)',
        description: 'Fields left out keep their value.',
      },
    })
    .input(mediaPreferencesInput)
    .output(mediaPreferencesOutput)
    .mutation(({ ctx, input }) => mediaPreferences.updateMediaPreferences(ctx, input)),
});
