import type { ServiceContext } from '../../platform/service-context.js';
import { reportContributionsOf } from '../reports/reports.queries.js';
import { moderationRuleVotesOf, votingHistoryOf } from '../votings/votings.queries.js';
import type { GovernanceProfileOutput } from './governance.schemas.js';

/** The caller's own governance profile: their votes (newest first, up to 500) and moderation contributions. */
export async function myGovernanceProfile(ctx: ServiceContext): Promise<GovernanceProfileOutput> {
  const { user } = ctx;
  // One after the other: three small reads in parallel would hold three pool connections for one request.
  const history = await votingHistoryOf(ctx, user.id);
  const reports = await reportContributionsOf(ctx, user.id);
  const moderationRuleVotes = await moderationRuleVotesOf(ctx, user.id);
  return {
    userId: user.id,
    votingHistory: history.map((h) => ({
      votingId: h.voting_id,
      territoryId: h.territory_id,
      votingTitle: h.title,
      votingType: h.type,
      selectedOption: h.selected_option,
      votedAtUtc: h.voted_at_utc,
    })),
    moderationContributions: { ...reports, moderationRuleVotes },
  };
}
