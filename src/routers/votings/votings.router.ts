import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { createVotingInput, listVotingsInput, voteInput, votingIdInput, votingOutput, votingResultsOutput } from './votings.schemas.js';
import * as votings from './votings.service.js';

const TAGS = ['Governance'];
const BASE = '/api/v1/territories/{territoryId}/votings';

export const votingsRouter = router({
  create: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: BASE,
        tags: TAGS,
        summary:
          'Propose a voting (Draft): ThemePrioritization, TerritoryCharacterization, CommunityPolicy by residents; ModerationRule, FeatureFlag by curators',
      },
      successStatus: 201,
    })
    .input(createVotingInput)
    .output(votingOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await votings.createVoting(ctx, input);
      ctx.resp.headers.Location = `/api/v1/territories/${created.territoryId}/votings/${created.id}`;
      return created;
    }),

  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: BASE, tags: TAGS, summary: "The territory's votings the caller may see, newest first" } })
    .input(listVotingsInput)
    .output(z.array(votingOutput))
    .query(({ ctx, input }) => votings.listVotings(ctx, input)),

  byId: authedProcedure
    .meta({ openapi: { method: 'GET', path: `${BASE}/{votingId}`, tags: TAGS, summary: 'Get a voting (404 when missing or not visible)' } })
    .input(votingIdInput)
    .output(votingOutput)
    .query(({ ctx, input }) => votings.getVoting(ctx, input)),

  open: authedProcedure
    .meta({ openapi: { method: 'POST', path: `${BASE}/{votingId}/open`, tags: TAGS, summary: 'Open a Draft voting (creator or curator)' } })
    .input(votingIdInput)
    .output(votingOutput)
    .mutation(({ ctx, input }) => votings.openVoting(ctx, input)),

  vote: authedProcedure
    .meta({ openapi: { method: 'POST', path: `${BASE}/{votingId}/vote`, tags: TAGS, summary: 'Vote once for one option (204)' }, successStatus: 204 })
    .input(voteInput)
    .output(z.void())
    .mutation(({ ctx, input }) => votings.vote(ctx, input)),

  close: authedProcedure
    .meta({
      openapi: { method: 'POST', path: `${BASE}/{votingId}/close`, tags: TAGS, summary: 'Close an Open voting and apply its result (creator or curator)' },
    })
    .input(votingIdInput)
    .output(votingOutput)
    .mutation(({ ctx, input }) => votings.closeVoting(ctx, input)),

  results: authedProcedure
    .meta({ openapi: { method: 'GET', path: `${BASE}/{votingId}/results`, tags: TAGS, summary: 'Results of a closed voting (409 before closing)' } })
    .input(votingIdInput)
    .output(votingResultsOutput)
    .query(({ ctx, input }) => votings.getResults(ctx, input)),
});
