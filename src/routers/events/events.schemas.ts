import { z } from 'zod';
import { EVENT_STATUSES, PARTICIPATION_STATUSES } from '../../entities/event.entity.js';
import { MEMBERSHIP_ROLES } from '../../entities/membership.entity.js';
import { zLatitude, zLongitude } from '../../platform/geo.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { zNumeric } from '../../platform/numeric.js';
import { zOptionalText, zText } from '../../platform/text.js';

export const EVENT_TITLE_MAX = 200;
export const EVENT_DESCRIPTION_MAX = 2000;
export const EVENT_LOCATION_LABEL_MAX = 200;
/** Spec media limits: one cover plus up to five additional media. */
export const EVENT_ADDITIONAL_MEDIA_MAX = 5;

export const eventOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    title: z.string(),
    description: z.string().nullable(),
    startsAtUtc: z.iso.datetime(),
    endsAtUtc: z.iso.datetime().nullable(),
    latitude: z.number(),
    longitude: z.number(),
    locationLabel: z.string().nullable(),
    coverMediaId: z.uuid().nullable(),
    additionalMediaIds: z.array(z.uuid()),
    /** URLs of the attached media, cover first. */
    mediaUrls: z.array(z.string()),
    status: z.enum(EVENT_STATUSES),
    createdByUserId: z.uuid(),
    /** The creator's role in the territory when the event was created. */
    createdByMembership: z.enum(MEMBERSHIP_ROLES),
    interestedCount: z.number().int(),
    confirmedCount: z.number().int(),
    /** The caller's participation, if any. */
    myParticipation: z.enum(PARTICIPATION_STATUSES).nullable(),
    /** The feed post created with the event. */
    postId: z.uuid().nullable(),
    createdAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'Event' });
export type EventOutput = z.infer<typeof eventOutput>;

export const nearbyEventOutput = eventOutput.extend({ distanceKm: z.number() }).meta({ id: 'NearbyEvent' });
export type NearbyEventOutput = z.infer<typeof nearbyEventOutput>;

export const eventPage = pagedOutput(eventOutput).meta({ id: 'EventPage' });
export const nearbyEventPage = pagedOutput(nearbyEventOutput).meta({ id: 'NearbyEventPage' });

const timestamp = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' }).transform((v) => new Date(v));

export const createEventInput = z.object({
  /** Optional when the X-Session-Id session has a selected territory. */
  territoryId: zId.nullish(),
  title: zText({ max: EVENT_TITLE_MAX }),
  description: zOptionalText(EVENT_DESCRIPTION_MAX),
  startsAtUtc: timestamp,
  endsAtUtc: timestamp.nullish(),
  latitude: zLatitude,
  longitude: zLongitude,
  locationLabel: zOptionalText(EVENT_LOCATION_LABEL_MAX),
  coverMediaId: zId.nullish(),
  additionalMediaIds: z.array(zId).max(EVENT_ADDITIONAL_MEDIA_MAX, `at most ${EVENT_ADDITIONAL_MEDIA_MAX} additional media`).default([]),
});
export type CreateEventInput = z.infer<typeof createEventInput>;

/**
 * A list bound: an ISO date-time, or a date (`2026-05-01`), which as `startDate` means the start of that UTC day and
 * as `endDate` its end.
 */
const dateBound = (edge: 'start' | 'end') =>
  z.union([z.iso.datetime({ offset: true }), z.iso.date()], { error: 'must be an ISO 8601 date or date-time' }).transform((v) => {
    if (v.includes('T')) return new Date(v);
    const day = new Date(`${v}T00:00:00.000Z`);
    return edge === 'start' ? day : new Date(day.getTime() + 24 * 3600 * 1000 - 1);
  });

const listFilters = {
  territoryId: zId.optional(),
  /** Events still going on at or after this instant (their end, or start when they have no end). */
  startDate: dateBound('start').optional(),
  /** Events starting at or before this instant. */
  endDate: dateBound('end').optional(),
};
export const listEventsInput = z.object({ ...listFilters, ...skipTakeInput() });
export const pagedEventsInput = z.object({ ...listFilters, ...pageInput });
export type EventListFilter = Pick<z.infer<typeof listEventsInput>, 'territoryId' | 'startDate' | 'endDate'>;

const nearbyPoint = {
  lat: zNumeric(z.number().min(-90).max(90)),
  lng: zNumeric(z.number().min(-180).max(180)),
  radiusKm: zNumeric(z.number().positive().max(500), 5),
};
export const nearbyEventsInput = z.object({ ...nearbyPoint, limit: zNumeric(z.number().int().min(1).max(100), 20) });
export const nearbyEventsPagedInput = z.object({ ...nearbyPoint, ...pageInput });

export const eventIdInput = z.object({ eventId: zId });
