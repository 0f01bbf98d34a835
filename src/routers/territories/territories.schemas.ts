import { z } from 'zod';
import { TERRITORY_STATUSES } from '../../entities/territory.entity.js';
import { zLatitude, zLongitude } from '../../platform/geo.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { zOptionalText, zText } from '../../platform/text.js';

export const territoryOutput = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    city: z.string(),
    state: z.string(),
    latitude: z.number(),
    longitude: z.number(),
    radiusKm: z.number(),
    parentTerritoryId: z.uuid().nullable(),
    status: z.enum(TERRITORY_STATUSES),
    tags: z.array(z.string()),
    createdAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'Territory' });
export type TerritoryOutput = z.infer<typeof territoryOutput>;

export const listInput = z.object(skipTakeInput());
export const pagedInput = z.object(pageInput);
export const territoryPage = pagedOutput(territoryOutput).meta({ id: 'TerritoryPage' });

export const byIdInput = z.object({ id: zId });

const tag = z.string().transform((v) => v.trim().toLowerCase()).pipe(z.string().min(1).max(50));

/** Body of a suggestion; admins add radius, parent and tags when creating directly. */
export const suggestionInput = z.object({
  name: zText({ max: 200 }),
  description: zOptionalText(2000),
  city: zText({ max: 200 }),
  state: zText({ max: 100 }),
  latitude: zLatitude,
  longitude: zLongitude,
});
export const adminCreateInput = suggestionInput.extend({
  radiusKm: z.number().positive().max(500).default(5),
  parentTerritoryId: zId.nullish(),
  tags: z.array(tag).max(50).default([]),
});
