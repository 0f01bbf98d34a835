import { z } from 'zod';
import { ASSET_STATUSES, NATURAL_ASSET_SUBTYPES, NATURAL_ASSET_TYPE } from '../../entities/asset.entity.js';
import { zLatitude, zLongitude } from '../../platform/geo.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { sanitizeText, withOutputLimits, zOptionalText, zText } from '../../platform/text.js';

export const ASSET_NAME_MAX = 200;
export const ASSET_DESCRIPTION_MAX = 1000;
export const ASSET_TYPE_MAX = 50;
export const ASSET_SUBTYPE_MAX = 40;
export const ASSET_GEO_ANCHORS_MAX = 100;

export const SUBTYPE_ONLY_FOR_NATURAL = `allowed only when type is ${NATURAL_ASSET_TYPE}`;

const geoAnchor = z.object({ latitude: zLatitude, longitude: zLongitude }).meta({ id: 'GeoAnchor' });

/** Stored and compared lower-case: `Natural` and `natural` are one type. */
const assetType = withOutputLimits(
  z
    .string()
    .transform((v) => sanitizeText(v).toLowerCase())
    .pipe(z.string().min(1, 'must not be empty').max(ASSET_TYPE_MAX)),
);

/** One of the natural subtypes (case-insensitive), at most 40 characters. */
const assetSubtype = withOutputLimits(
  z
    .string()
    .transform((v) => sanitizeText(v).toLowerCase())
    .pipe(
      z
        .string()
        .max(ASSET_SUBTYPE_MAX)
        .refine((v) => (NATURAL_ASSET_SUBTYPES as readonly string[]).includes(v), `must be one of ${NATURAL_ASSET_SUBTYPES.join(', ')}`),
    ),
);

/** Case-insensitive status input (`active` -> `Active`). */
const assetStatus = z.preprocess(
  (v) => (typeof v === 'string' ? (ASSET_STATUSES.find((s) => s.toLowerCase() === v.trim().toLowerCase()) ?? v) : v),
  z.enum(ASSET_STATUSES),
);

export const assetOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    /** Lower-case, e.g. `natural`. */
    type: z.string(),
    /** Only natural assets have one. */
    subtype: z.string().nullable(),
    name: z.string(),
    description: z.string().nullable(),
    geoAnchors: z.array(geoAnchor),
    status: z.enum(ASSET_STATUSES),
    createdByUserId: z.uuid(),
    /** Members who validated the asset (each counted once). */
    validationCount: z.number().int(),
    /** Share of the territory's current residents who validated it, 0 to 100 (two decimals). */
    validationPercentage: z.number(),
    createdAtUtc: z.iso.datetime(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'TerritoryAsset' });
export type AssetOutput = z.infer<typeof assetOutput>;
export const assetPage = pagedOutput(assetOutput).meta({ id: 'TerritoryAssetPage' });

export const createAssetInput = z
  .object({
    /** Optional when the X-Session-Id session has a selected territory. */
    territoryId: zId.nullish(),
    type: assetType,
    subtype: assetSubtype.nullish(),
    name: zText({ max: ASSET_NAME_MAX }),
    description: zOptionalText(ASSET_DESCRIPTION_MAX),
    geoAnchors: z.array(geoAnchor).min(1, 'at least one geo anchor is required').max(ASSET_GEO_ANCHORS_MAX),
  })
  .superRefine((v, ctx) => {
    if (v.subtype && v.type !== NATURAL_ASSET_TYPE) ctx.addIssue({ code: 'custom', path: ['subtype'], message: SUBTYPE_ONLY_FOR_NATURAL });
  });
export type CreateAssetInput = z.infer<typeof createAssetInput>;

/**
 * Partial update. `subtype` is tri-state: omitted keeps it (while the type stays natural), null removes it, a value
 * replaces it. `description`: omitted keeps, null clears.
 */
export const updateAssetInput = z.object({
  assetId: zId,
  type: assetType.optional(),
  subtype: assetSubtype.nullable().optional(),
  name: zText({ max: ASSET_NAME_MAX }).optional(),
  description: zText({ min: 0, max: ASSET_DESCRIPTION_MAX }).nullable().optional(),
  geoAnchors: z.array(geoAnchor).min(1, 'at least one geo anchor is required').max(ASSET_GEO_ANCHORS_MAX).optional(),
});
export type UpdateAssetInput = z.infer<typeof updateAssetInput>;

export const assetIdInput = z.object({ assetId: zId });
export const curateInput = z.object({ assetId: zId, outcome: z.enum(['APPROVED', 'REJECTED']) });

/** CSV of types (`types=natural,cultural`), compared with the type only. */
const typeList = z
  .string()
  .max(2000)
  .optional()
  .transform((raw) => {
    const values = [
      ...new Set(
        (raw ?? '')
          .split(',')
          .map((v) => sanitizeText(v).toLowerCase())
          .filter(Boolean),
      ),
    ];
    return values.length > 0 ? values : undefined;
  })
  .pipe(z.array(z.string().max(ASSET_TYPE_MAX)).max(20).optional());

const listFilters = {
  territoryId: zId.optional(),
  assetId: zId.optional(),
  type: assetType.optional(),
  types: typeList,
  /** Absent: Suggested and Active assets. */
  status: assetStatus.optional(),
};
export const assetListInput = z.object({ ...listFilters, ...skipTakeInput() });
export const assetPagedInput = z.object({ ...listFilters, ...pageInput });
export type AssetListFilter = Pick<z.infer<typeof assetListInput>, 'territoryId' | 'assetId' | 'type' | 'types' | 'status'>;
