import { z } from 'zod';
import { setActingClient } from '../../entities/audit.entity.js';
import { prepareManager } from '../../db/request-manager.js';
import { zId } from '../../platform/ids.js';
import { zNumeric } from '../../platform/numeric.js';
import { middleware, router } from '../../trpc/init.js';
import { journeyProcedure, journeyUserProcedure } from '../../trpc/procedures.js';
import { createEventInput } from '../events/events.schemas.js';
import { sellerBalanceOutput } from '../payouts/payouts.schemas.js';
import { getMySellerBalance } from '../payouts/seller-balance.service.js';
import { nearby } from '../territories/territories.service.js';
import {
  createEventJourney,
  createEventJourneyOutput,
  participateInput,
  participateJourney,
  participateOutput,
  territoryEvents,
  territoryEventsInput,
  territoryEventsOutput,
} from './events-journeys.js';
import { interact, interactInput, interactOutput, territoryFeed, territoryFeedInput, territoryFeedOutput } from './feed-journeys.js';
import { journeyCache } from './journey-cache.js';
import { JOURNEY_TAGS as TAGS } from './journey-common.js';
import * as marketplace from './marketplace-journeys.js';
import { complete, completeInput, completeOutput } from './onboarding-journeys.js';

/**
 * A journey acts through its client application: the audit rows the call writes, in any service, record it. Set on
 * the request's manager when it is made: a read of hot statements only (a cold feed screen) needs none.
 */
const actingClient = middleware(({ ctx, next }) => {
  const client = ctx.client.client;
  if (client) prepareManager(ctx, (em) => setActingClient(em, client.id));
  return next();
});

/** GET journeys acting for a user: `journeys:read`, the user token, the 60 s cache (hits answered by the REST route). */
const userRead = journeyUserProcedure('journeys:read')
  .use(actingClient)
  .use(journeyCache)
  .meta({ cachedJourney: { actsForUser: true } });
/** POST journeys acting for a user: `journeys:write`, the user token (the call pipeline drops their cached answers). */
const userWrite = journeyUserProcedure('journeys:write').use(actingClient);

const suggestedTerritoriesInput = z.object({
  latitude: zNumeric(z.number().min(-90).max(90)),
  longitude: zNumeric(z.number().min(-180).max(180)),
  radiusKm: zNumeric(z.number().positive().max(500), 25),
  limit: zNumeric(z.number().int().min(1).max(100), 20),
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
    .use(actingClient)
    .use(journeyCache)
    .meta({
      cachedJourney: { actsForUser: false },
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

  completeOnboarding: userWrite
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v2/journeys/onboarding/complete',
        tags: TAGS,
        summary: 'Enter the chosen territory as a visitor (idempotent), select it for the session; first feed and next steps',
        protect: true,
      },
    })
    .input(completeInput)
    .output(completeOutput)
    .mutation(({ ctx, input }) => complete(ctx, input)),

  territoryFeed: userRead
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v2/journeys/feed/territory-feed',
        tags: TAGS,
        summary: "A territory's feed screen: posts with counts, media, event, author and the user's interactions",
        protect: true,
      },
      // A feed read (spec Limits): the same bucket as GET /api/v1/feed, so a user's feed reads count together.
      rateLimit: 'feedRead',
    })
    .input(territoryFeedInput)
    .output(territoryFeedOutput)
    .query(({ ctx, input }) => territoryFeed(ctx, input)),

  interact: userWrite
    .meta({
      openapi: { method: 'POST', path: '/api/v2/journeys/feed/interact', tags: TAGS, summary: 'Like, unlike, comment on or share a post', protect: true },
    })
    .input(interactInput)
    .output(interactOutput)
    .mutation(({ ctx, input }) => interact(ctx, input)),

  territoryEvents: userRead
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v2/journeys/events/territory-events',
        tags: TAGS,
        summary: "A territory's events with participants, media and the user's participation",
        protect: true,
      },
    })
    .input(territoryEventsInput)
    .output(territoryEventsOutput)
    .query(({ ctx, input }) => territoryEvents(ctx, input)),

  createEvent: userWrite
    .meta({
      openapi: { method: 'POST', path: '/api/v2/journeys/events/create-event', tags: TAGS, summary: 'Create an event (as POST /api/v1/events)', protect: true },
      successStatus: 201,
    })
    .input(createEventInput)
    .output(createEventJourneyOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await createEventJourney(ctx, input);
      ctx.resp.headers.Location = `/api/v1/events/${created.event.id}`;
      return created;
    }),

  participate: userWrite
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v2/journeys/events/participate',
        tags: TAGS,
        summary: 'Mark interest in, confirm or cancel (remove) the user’s participation in an event',
        protect: true,
      },
    })
    .input(participateInput)
    .output(participateOutput)
    .mutation(({ ctx, input }) => participateJourney(ctx, input)),

  marketplaceSearch: userRead
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v2/journeys/marketplace/search',
        tags: TAGS,
        summary: "Search a territory's marketplace: items, stores, facets and suggestions",
        protect: true,
      },
    })
    .input(marketplace.searchInput)
    .output(marketplace.searchOutput)
    .query(({ ctx, input }) => marketplace.search(ctx, input)),

  addToCart: userWrite
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v2/journeys/marketplace/add-to-cart',
        tags: TAGS,
        summary: "Put an item in the user's cart; the cart and its total",
        protect: true,
      },
    })
    .input(marketplace.addToCartInput)
    .output(marketplace.addToCartOutput)
    .mutation(({ ctx, input }) => marketplace.addToCart(ctx, input)),

  checkout: userWrite
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v2/journeys/marketplace/checkout',
        tags: TAGS,
        summary: "Check out the user's cart in a territory (one order per store; Idempotency-Key honoured)",
        protect: true,
      },
      successStatus: 201,
    })
    .input(marketplace.checkoutJourneyInput)
    .output(marketplace.checkoutJourneyOutput)
    .mutation(({ ctx, input }) => marketplace.checkout(ctx, input)),

  sellerBalance: userRead
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v2/journeys/territories/{territoryId}/seller-balance',
        tags: TAGS,
        summary: "The user's seller balance in the territory (as GET /api/v1/territories/{territoryId}/seller-balance/me); 404 before the first paid sale",
        protect: true,
      },
    })
    .input(z.object({ territoryId: zId }))
    .output(sellerBalanceOutput)
    .query(({ ctx, input }) => getMySellerBalance(ctx, input)),
});
