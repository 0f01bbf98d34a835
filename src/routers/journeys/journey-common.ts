import { z } from 'zod';
import type { HotReadSource } from '../../db/sql.js';
import { MEDIA_TYPES, type MediaOwnerType } from '../../entities/media.entity.js';
import { AppError } from '../../platform/problems.js';
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

/**
 * A journey renames some v1 fields (`names`: the v1 field -> the v2 request's own), so a v1 refusal naming a v1 field
 * would name a field the client never sent. This answers such a refusal with the request's own names (DESIGN section
 * 15: 400 details {field, message}): in each field error and, as whole words, in the messages and the detail. Quoted
 * text (a moderation rule's name, the prohibited word) is the client's or a curator's, never a field: it is kept.
 */
export async function withJourneyFieldNames<T>(names: Readonly<Record<string, string>>, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw renamedFields(error, new Map(Object.entries(names)));
  }
}

/** `error` with the fields of `names` (v1 -> the request's own) renamed, as `withJourneyFieldNames` answers it. */
export function renamedFields(error: unknown, names: ReadonlyMap<string, string>): unknown {
  if (!(error instanceof AppError) || !error.errors?.some((e) => names.has(e.field))) return error;
  const words = new RegExp(`"[^"]*"|\\b(?:${[...names.keys()].join('|')})\\b`, 'g');
  const rename = (text: string) => text.replace(words, (match) => names.get(match) ?? match);
  return new AppError(error.code, error.problemCode, rename(error.message), {
    errors: error.errors.map((e) => ({ field: names.get(e.field) ?? e.field, message: rename(e.message) })),
    headers: error.headers,
  });
}
