import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { execSql, pgArray } from '../../db/sql.js';
import { MEDIA_TYPES, type MediaOwnerType, type MediaType } from '../../entities/media.entity.js';
import { mediaUrl } from '../media/media.service.js';

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
export async function mediaOf(em: EntityManager, ownerType: MediaOwnerType, ownerIds: string[]): Promise<Map<string, JourneyMedia[]>> {
  const out = new Map<string, JourneyMedia[]>(ownerIds.map((id) => [id, []]));
  if (ownerIds.length === 0) return out;
  const rows = await execSql<{ owner_id: string; id: string; media_type: MediaType }>(
    em,
    `select a.owner_id, m.id, m.media_type
       from media_attachment a join media_asset m on m.id = a.media_asset_id and m.deleted_at_utc is null
      where a.owner_type = ? and a.owner_id = any(?::uuid[])
      order by a.owner_id, a.display_order`,
    [ownerType, pgArray([...new Set(ownerIds)])],
  );
  for (const r of rows) out.get(r.owner_id)?.push({ id: r.id, url: mediaUrl(r.id), mediaType: r.media_type });
  return out;
}
