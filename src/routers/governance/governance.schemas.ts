import { z } from 'zod';
import { VOTING_TYPES } from '../../entities/voting.entity.js';

export const governanceProfileOutput = z
  .object({
    userId: z.uuid(),
    votingHistory: z.array(
      z.object({
        votingId: z.uuid(),
        territoryId: z.uuid(),
        votingTitle: z.string(),
        votingType: z.enum(VOTING_TYPES),
        selectedOption: z.string(),
        votedAtUtc: z.iso.datetime(),
      }),
    ),
    moderationContributions: z.object({
      reportsFiled: z.number().int(),
      reportsActioned: z.number().int(),
      moderationRuleVotes: z.number().int(),
    }),
  })
  .meta({ id: 'GovernanceProfile' });
export type GovernanceProfileOutput = z.infer<typeof governanceProfileOutput>;
