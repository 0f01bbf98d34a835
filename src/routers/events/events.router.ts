import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import {
  createEventInput,
  eventIdInput,
  eventOutput,
  eventPage,
  listEventsInput,
  nearbyEventOutput,
  nearbyEventPage,
  nearbyEventsInput,
  nearbyEventsPagedInput,
  pagedEventsInput,
} from './events.schemas.js';
import * as events from './events.service.js';
import { sessionTerritoryHeader } from '../../platform/service-context.js';

const TAGS = ['Events'];

export const eventsRouter = router({
  create: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/events',
        requestHeaders: sessionTerritoryHeader,
        tags: TAGS,
        summary: 'Create an event (members; X-Session-Id may supply the territory)',
      },
      successStatus: 201,
    })
    .input(createEventInput)
    .output(eventOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await events.createEvent(ctx, input);
      ctx.resp.headers.Location = `/api/v1/events/${created.id}`;
      return created;
    }),

  list: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/events', requestHeaders: sessionTerritoryHeader, tags: TAGS, summary: "A territory's events, upcoming first" },
    })
    .input(listEventsInput)
    .output(z.array(eventOutput))
    .query(({ ctx, input }) => events.listEvents(ctx, input)),

  paged: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/events/paged',
        requestHeaders: sessionTerritoryHeader,
        tags: TAGS,
        summary: "A territory's events, upcoming first (paged)",
      },
    })
    .input(pagedEventsInput)
    .output(eventPage)
    .query(({ ctx, input }) => events.pageEvents(ctx, input)),

  nearby: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/events/nearby', tags: TAGS, summary: 'Scheduled events near a point, nearest first' } })
    .input(nearbyEventsInput)
    .output(z.array(nearbyEventOutput))
    .query(({ ctx, input }) => events.nearbyEvents(ctx, input)),

  nearbyPaged: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/events/nearby/paged', tags: TAGS, summary: 'Scheduled events near a point (paged)' } })
    .input(nearbyEventsPagedInput)
    .output(nearbyEventPage)
    .query(({ ctx, input }) => events.pageNearbyEvents(ctx, input)),

  byId: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/events/{eventId}', tags: TAGS, summary: 'Get an event' } })
    .input(eventIdInput)
    .output(eventOutput)
    .query(({ ctx, input }) => events.getEvent(ctx, input)),

  interest: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/events/{eventId}/interest', tags: TAGS, summary: 'Mark my interest (upsert)' } })
    .input(eventIdInput)
    .output(eventOutput)
    .mutation(({ ctx, input }) => events.participate(ctx, { eventId: input.eventId, status: 'INTEREST' })),

  confirm: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/events/{eventId}/confirm', tags: TAGS, summary: 'Confirm my attendance (upsert)' } })
    .input(eventIdInput)
    .output(eventOutput)
    .mutation(({ ctx, input }) => events.participate(ctx, { eventId: input.eventId, status: 'CONFIRMED' })),

  cancel: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/events/{eventId}/cancel', tags: TAGS, summary: 'Cancel an event (creator only; no notification)' } })
    .input(eventIdInput)
    .output(eventOutput)
    .mutation(({ ctx, input }) => events.cancelEvent(ctx, input)),
});
