import { z } from 'zod';
import type { HotReadSource } from '../../db/sql.js';
import { MEDIA_TYPES, type MediaOwnerType } from '../../entities/media.entity.js';
import { liveMediaOf, mediaUrl } from '../media/media.service.js';

export const JOURNEY_TAGS = ['Journeys'];

export const journeyPagination = z
  .object({
    pageNumber: z.number().int(),
    pageSize: z.number().int(),
    totalCount: z.number().int(),
    totalPages: z.number().int(),
    hasPreviousPage: z.boolean(),
    hasNextPage: z.boolean(),
  })
  .meta({ id: 'JourneyPagination' });
export type JourneyPagination = z.infer<typeof journeyPagination>;

/** The pagination part of a v1 page envelope. */
export const paginationOf = (page: JourneyPagination): JourneyPagination => ({
  pageNumber: page.pageNumber,
  pageSize: page.pageSize,
  totalCount: page.totalCount,
  totalPages: page.totalPages,
  hasPreviousPage: page.hasPreviousPage,
  hasNextPage: page.hasNextPage,
});

export const journeyMedia = z.object({ id: z.uuid(), url: z.string(), mediaType: z.enum(MEDIA_TYPES) }).meta({ id: 'JourneyMedia' });
export type JourneyMedia = z.infer<typeof journeyMedia>;

export const journeySuggestion = z.object({ action: z.string(), title: z.string(), priority: z.number().int() }).meta({ id: 'JourneySuggestion' });
export type JourneySuggestion = z.infer<typeof journeySuggestion>;

/** The live media attached to each owner, in display order. */
export function mediaOf(source: HotReadSource, ownerType: MediaOwnerType, ownerIds: string[]): Promise<Map<string, JourneyMedia[]>> {
  return liveMediaOf(source, ownerType, ownerIds, (r) => ({ id: r.id, url: mediaUrl(r.id), mediaType: r.media_type }));
}
