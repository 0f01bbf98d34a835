import { router } from '../../trpc/init.js';
import { authedProcedure, territoryProcedure } from '../../trpc/procedures.js';
import { mediaConfigInput, mediaConfigOutput, updateMediaConfigInput } from './media-config.schemas.js';
import * as mediaConfig from './media-config.service.js';

const TAGS = ['Media'];
const PATH = '/api/v1/territories/{territoryId}/media-config';

export const mediaConfigRouter = router({
  get: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: PATH,
        tags: TAGS,
        summary: "A territory's effective media configuration per content type",
        description: 'Sections posts, events, marketplace and chat; values the territory did not configure are the global ones.',
      },
    })
    .input(mediaConfigInput)
    .output(mediaConfigOutput)
    .query(({ ctx, input }) => mediaConfig.getMediaConfig(ctx, input)),

  update: territoryProcedure('CURATOR')
    .meta({
      openapi: {
        method: 'PUT',
        path: PATH,
        tags: TAGS,
        summary: "Change a territory's media configuration (curator; partial)",
        description:
          'Only the sections and fields sent change; `null` returns a field to the global value. A value above the ' +
          'global limit (a larger number, enabling a globally disabled type, a MIME type outside the global list) is a 400.',
      },
    })
    .input(updateMediaConfigInput)
    .output(mediaConfigOutput)
    .mutation(({ ctx, input }) => mediaConfig.updateMediaConfig(ctx, input)),
});
