import { z } from 'zod';
import { execSql } from '../../db/sql.js';
import { PARTICIPATION_STATUSES } from '../../entities/event.entity.js';
import { zId } from '../../platform/ids.js';
import { pageInput } from '../../platform/pagination.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { eventOutput, type EventOutput } from '../events/events.schemas.js';
import { createEvent, getEvent, pageEvents, participate } from '../events/events.service.js';
import { journeyMedia, journeyPagination, journeySuggestion, type JourneySuggestion, mediaOf, paginationOf, withJourneyFieldNames } from './journey-common.js';
import { lenientEnum } from '../../platform/enums.js';

// ---- Schemas ----

const instant = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' }).transform((v) => new Date(v));

export const territoryEventsInput = z.object({ territoryId: zId, fromUtc: instant.optional(), toUtc: instant.optional(), ...pageInput });

const participants = z.object({ interestedCount: z.number().int(), confirmedCount: z.number().int() }).meta({ id: 'JourneyEventParticipants' });
const userParticipation = z.enum(PARTICIPATION_STATUSES).nullable();

export const territoryEventsOutput = z
  .object({
    items: z.array(z.object({ event: eventOutput, participants, media: z.array(journeyMedia), userParticipation }).meta({ id: 'EventJourneyItem' })),
    pagination: journeyPagination,
  })
  .meta({ id: 'JourneyTerritoryEvents' });

export const createEventJourneyOutput = z.object({ event: eventOutput, mediaUrls: z.array(z.string()) }).meta({ id: 'JourneyCreatedEvent' });

export const PARTICIPATE_ACTIONS = ['INTEREST', 'CONFIRM', 'CANCEL'] as const;
export const participateInput = z.object({
  eventId: zId,
  action: lenientEnum(PARTICIPATE_ACTIONS),
});
export const participateOutput = z
  .object({ event: eventOutput, userParticipation, participants, suggestions: z.array(journeySuggestion) })
  .meta({ id: 'JourneyEventParticipation' });

// ---- Services ----

/** The v1 events listing's names of the journey's range. */
const RANGE_NAMES = { startDate: 'fromUtc', endDate: 'toUtc' };
/** The v1 participation's names of the journey's fields. */
const PARTICIPATION_NAMES = { status: 'action' };

const participantsOf = (event: EventOutput) => ({ interestedCount: event.interestedCount, confirmedCount: event.confirmedCount });

export async function territoryEvents(ctx: ServiceContext, input: z.infer<typeof territoryEventsInput>): Promise<z.infer<typeof territoryEventsOutput>> {
  const page = await withJourneyFieldNames(RANGE_NAMES, () =>
    pageEvents(ctx, {
      territoryId: input.territoryId,
      startDate: input.fromUtc,
      endDate: input.toUtc,
      pageNumber: input.pageNumber,
      pageSize: input.pageSize,
    }),
  );
  const media = await mediaOf(
    ctx,
    'EVENT',
    page.items.map((e) => e.id),
  );
  return {
    items: page.items.map((event) => ({
      event,
      participants: participantsOf(event),
      media: media.get(event.id) ?? [],
      userParticipation: event.myParticipation,
    })),
    pagination: paginationOf(page),
  };
}

/** INTEREST and CONFIRM upsert the user's participation; CANCEL removes it (idempotent). */
export async function participateJourney(ctx: ServiceContext, input: z.infer<typeof participateInput>): Promise<z.infer<typeof participateOutput>> {
  let event: EventOutput;
  if (input.action === 'CANCEL') {
    await getEvent(ctx, { eventId: input.eventId });
    await execSql(ctx.em, 'delete from event_participation where event_id = ? and user_id = ?', [input.eventId, ctx.user.id]);
    event = await getEvent(ctx, { eventId: input.eventId });
  } else {
    const status = input.action === 'CONFIRM' ? 'CONFIRMED' : 'INTEREST';
    event = await withJourneyFieldNames(PARTICIPATION_NAMES, () => participate(ctx, { eventId: input.eventId, status }));
  }
  const suggestions: JourneySuggestion[] = [];
  if (event.myParticipation === 'INTEREST') suggestions.push({ action: 'CONFIRM_ATTENDANCE', title: 'Confirm your attendance', priority: 1 });
  if (event.myParticipation !== null) suggestions.push({ action: 'SHARE_EVENT', title: 'Invite your neighbours', priority: 2 });
  if (event.myParticipation === null) suggestions.push({ action: 'EXPLORE_EVENTS', title: 'See other events in the territory', priority: 1 });
  return { event, userParticipation: event.myParticipation, participants: participantsOf(event), suggestions };
}

export async function createEventJourney(ctx: ServiceContext, input: Parameters<typeof createEvent>[1]): Promise<z.infer<typeof createEventJourneyOutput>> {
  const event = await createEvent(ctx, input);
  return { event, mediaUrls: event.mediaUrls };
}
