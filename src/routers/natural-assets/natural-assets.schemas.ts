import { z } from 'zod';
import { NATURAL_ASSET_STATUSES, NATURAL_ASSET_TYPES } from '../../entities/natural-asset.entity.js';
import { zLatitude, zLongitude } from '../../platform/geo.js';
import { zId } from '../../platform/ids.js';
import { skipTakeInput } from '../../platform/pagination.js';
import { zOptionalText, zText } from '../../platform/text.js';

export const NATURAL_ASSET_NAME_MAX = 200;
export const NATURAL_ASSET_DESCRIPTION_MAX = 1000;

/** Case-insensitive enum input (`spring`, `potable-water` -> `SPRING`, `POTABLE_WATER`). */
const upperEnum = <T extends readonly [string, ...string[]]>(values: T) =>
  z.preprocess((v) => (typeof v === 'string' ? v.trim().toUpperCase().replace(/[-\s]/g, '_') : v), z.enum(values));

export const naturalAssetOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    type: z.enum(NATURAL_ASSET_TYPES),
    name: z.string(),
    description: z.string().nullable(),
    latitude: z.number(),
    longitude: z.number(),
    status: z.enum(NATURAL_ASSET_STATUSES),
    createdByUserId: z.uuid(),
    createdAtUtc: z.iso.datetime(),
    publishedAtUtc: z.iso.datetime().nullable(),
  })
  .meta({ id: 'NaturalAsset' });
export type NaturalAssetOutput = z.infer<typeof naturalAssetOutput>;

export const listInput = z.object({
  territoryId: zId,
  /** PUBLISHED ones to everybody; PENDING ones to curators and to their creator. */
  status: upperEnum(NATURAL_ASSET_STATUSES).optional(),
  ...skipTakeInput(),
});

export const createInput = z.object({
  territoryId: zId,
  type: upperEnum(NATURAL_ASSET_TYPES),
  name: zText({ max: NATURAL_ASSET_NAME_MAX }),
  description: zOptionalText(NATURAL_ASSET_DESCRIPTION_MAX),
  latitude: zLatitude,
  longitude: zLongitude,
});
export type CreateNaturalAssetInput = z.infer<typeof createInput>;

export const publishInput = z.object({ territoryId: zId, id: zId });
