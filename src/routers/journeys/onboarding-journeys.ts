import { z } from 'zod';
import { execSql } from '../../db/sql.js';
import { zLatitude, zLongitude } from '../../platform/geo.js';
import { zId } from '../../platform/ids.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { membershipOutput } from '../memberships/memberships.schemas.js';
import { enter } from '../memberships/memberships.service.js';
import { territoryOutput } from '../territories/territories.schemas.js';
import { getById, selectTerritory } from '../territories/territories.service.js';
import { territoryFeed, territoryFeedOutput } from './feed-journeys.js';
import { journeySuggestion, type JourneySuggestion } from './journey-common.js';

export const completeInput = z.object({
  selectedTerritoryId: zId,
  location: z.object({ latitude: zLatitude, longitude: zLongitude }),
});

export const completeOutput = z
  .object({
    user: z.object({ id: z.uuid(), displayName: z.string() }),
    territory: territoryOutput,
    membership: membershipOutput,
    initialFeed: territoryFeedOutput.pick({ items: true, pagination: true }),
    suggestedActions: z.array(journeySuggestion),
  })
  .meta({ id: 'JourneyOnboardingComplete' });

const INITIAL_FEED_SIZE = 10;

/**
 * Ends onboarding: the user enters the territory as a VISITOR (idempotent: an existing membership is kept as it
 * is), the territory is selected for the `X-Session-Id` session when one is sent, and the first feed page and the
 * next steps are answered.
 */
export async function complete(ctx: ServiceContext, input: z.infer<typeof completeInput>): Promise<z.infer<typeof completeOutput>> {
  const territoryId = input.selectedTerritoryId;
  const membership = await enter(ctx, { territoryId });
  if (ctx.sessionId) await selectTerritory(ctx, { territoryId });
  const [territory, feed, interests] = await Promise.all([
    getById(ctx, { id: territoryId }),
    territoryFeed(ctx, { territoryId, pageNumber: 1, pageSize: INITIAL_FEED_SIZE }),
    execSql<{ n: number }>(ctx.em, 'select count(*)::int as n from user_interest where user_id = ?', [ctx.user.id]),
  ]);
  const suggestedActions: JourneySuggestion[] = [];
  if (membership.role !== 'RESIDENT') suggestedActions.push({ action: 'REQUEST_RESIDENCY', title: 'Live here? Ask to become a resident', priority: 1 });
  suggestedActions.push({ action: 'EXPLORE_MAP', title: 'Explore the territory map', priority: 2 });
  if ((interests[0]?.n ?? 0) === 0) suggestedActions.push({ action: 'SET_INTERESTS', title: 'Choose your interests', priority: 3 });
  return {
    user: { id: ctx.user.id, displayName: ctx.user.displayName },
    territory,
    membership,
    initialFeed: { items: feed.items, pagination: feed.pagination },
    suggestedActions,
  };
}
