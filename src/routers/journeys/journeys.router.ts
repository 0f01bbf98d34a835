import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { journeyProcedure } from '../../trpc/procedures.js';
import { nearby } from '../territories/territories.service.js';

const TAGS = ['Journeys'];

const suggestedTerritoriesInput = z.object({
  latitude: z.coerce.number().min(-90).max(90),
  longitude: z.coerce.number().min(-180).max(180),
  radiusKm: z.coerce.number().positive().max(500).default(25),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

const suggestedTerritoriesOutput = z
  .object({
    territories: z.array(
      z.object({ id: z.uuid(), name: z.string(), city: z.string(), state: z.string(), latitude: z.number(), longitude: z.number(), distanceKm: z.number() }),
    ),
  })
  .meta({ id: 'JourneySuggestedTerritories' });

/**
 * The journeys API (v2): one call per screen, composing the v1 services in process (no HTTP hop), authenticated
 * with a client token (OAuth client credentials) and, for user-level operations, `X-User-Token`.
 */
export const journeysRouter = router({
  suggestedTerritories: journeyProcedure('journeys:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v2/journeys/onboarding/suggested-territories',
        tags: TAGS,
        summary: 'Territories near a point, nearest first (onboarding; no user token needed)',
        protect: true,
      },
    })
    .input(suggestedTerritoriesInput)
    .output(suggestedTerritoriesOutput)
    .query(async ({ ctx, input }) => {
      const found = await nearby(ctx, { lat: input.latitude, lng: input.longitude, radiusKm: input.radiusKm, limit: input.limit });
      return {
        territories: found.map((t) => ({
          id: t.id,
          name: t.name,
          city: t.city,
          state: t.state,
          latitude: t.latitude,
          longitude: t.longitude,
          distanceKm: t.distanceKm,
        })),
      };
    }),
});
