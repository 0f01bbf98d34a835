import { z } from 'zod';
import { MAP_ENTITY_STATUSES, MAP_ENTITY_VISIBILITIES } from '../../entities/map.entity.js';
import { zLatitude, zLongitude } from '../../platform/geo.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { sanitizeText, zText } from '../../platform/text.js';
import { lenientEnum } from '../../platform/enums.js';

export const MAP_ENTITY_NAME_MAX = 200;
export const MAP_ENTITY_CATEGORY_MAX = 100;

/** Pin types in the spec's order; pins are listed grouped in this order. */
export const PIN_TYPES = ['entity', 'post', 'event', 'asset', 'alert', 'media'] as const;
export type PinType = (typeof PIN_TYPES)[number];

/**
 * A comma-separated query value: trimmed, lower-cased, empty entries dropped, duplicates removed; each entry is
 * checked by `item`. Absent or empty means "no filter" (undefined).
 */
const csv = <T extends string>(item: z.ZodType<T>, maxEntries = 20) =>
  z
    .string()
    .max(2000)
    .optional()
    .transform((raw, ctx): T[] | undefined => {
      const entries = [
        ...new Set(
          (raw ?? '')
            .split(',')
            .map((v) => sanitizeText(v).toLowerCase())
            .filter(Boolean),
        ),
      ];
      if (entries.length === 0) return undefined;
      if (entries.length > maxEntries) {
        ctx.addIssue({ code: 'custom', message: `at most ${maxEntries} values` });
        return z.NEVER;
      }
      const values: T[] = [];
      for (const entry of entries) {
        const parsed = item.safeParse(entry);
        if (!parsed.success) {
          ctx.addIssue({ code: 'custom', message: `"${entry}": ${parsed.error.issues[0]?.message ?? 'invalid value'}` });
          return z.NEVER;
        }
        values.push(parsed.data);
      }
      return values;
    });

export const mapEntityOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    name: z.string(),
    category: z.string(),
    latitude: z.number(),
    longitude: z.number(),
    visibility: z.enum(MAP_ENTITY_VISIBILITIES),
    status: z.enum(MAP_ENTITY_STATUSES),
    /** How many users confirmed the entity (each counted once). */
    confirmationCount: z.number().int(),
    createdByUserId: z.uuid(),
    createdAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'MapEntity' });
export type MapEntityOutput = z.infer<typeof mapEntityOutput>;
export const mapEntityPage = pagedOutput(mapEntityOutput).meta({ id: 'MapEntityPage' });

/** The territory of a map read: explicit, else the X-Session-Id selection. */
const territoryFilter = { territoryId: zId.optional() };
export const entityListInput = z.object({ ...territoryFilter, ...skipTakeInput() });
export const entityPagedInput = z.object({ ...territoryFilter, ...pageInput });

export const createEntityInput = z.object({
  /** Optional when the X-Session-Id session has a selected territory. */
  territoryId: zId.nullish(),
  name: zText({ max: MAP_ENTITY_NAME_MAX }),
  /** Free text, e.g. establishment, public space, natural space. */
  category: zText({ max: MAP_ENTITY_CATEGORY_MAX }),
  latitude: zLatitude,
  longitude: zLongitude,
  visibility: lenientEnum(MAP_ENTITY_VISIBILITIES).default('PUBLIC'),
});
export type CreateEntityInput = z.infer<typeof createEntityInput>;

export const validationInput = z.object({ entityId: zId, validated: z.boolean() });

export const entityIdInput = z.object({ entityId: zId });
/** Confirmations name the territory in the query (`?territoryId=`); it must be the entity's. */
export const confirmationInput = z.object({ entityId: zId, territoryId: zId });
export const confirmationQuery = z.object({ territoryId: zId });

export const relationOutput = z
  .object({ id: z.uuid(), entityId: z.uuid(), userId: z.uuid(), createdAtUtc: z.iso.datetime() })
  .meta({ id: 'MapEntityRelation' });
export type RelationOutput = z.infer<typeof relationOutput>;

export const pinOutput = z
  .object({
    /** Lower case: entity, post, event, asset, alert, media. */
    type: z.enum(PIN_TYPES),
    /** The id of the entity, post, event, asset, alert or media asset. */
    id: z.uuid(),
    latitude: z.number(),
    longitude: z.number(),
    title: z.string(),
    /** Asset pins only (else null). */
    assetType: z.string().nullable(),
    assetSubtype: z.string().nullable(),
  })
  .meta({ id: 'MapPin' });
export type PinOutput = z.infer<typeof pinOutput>;
export const pinPage = pagedOutput(pinOutput).meta({ id: 'MapPinPage' });

const pinFilters = {
  ...territoryFilter,
  /** CSV of pin types; absent means all of them. */
  types: csv(z.enum(PIN_TYPES, { error: `must be one of ${PIN_TYPES.join(', ')}` })),
  /** Asset pins of this asset only. */
  assetId: zId.optional(),
  /** CSV; an asset pin matches when its type or its subtype is listed. */
  assetTypes: csv(z.string().max(50)),
  /** CSV; an asset pin matches when its subtype is listed. */
  assetSubtypes: csv(z.string().max(40)),
};
export const pinListInput = z.object({ ...pinFilters, ...skipTakeInput() });
export const pinPagedInput = z.object({ ...pinFilters, ...pageInput });
export type PinFilters = Pick<z.infer<typeof pinListInput>, 'types' | 'assetId' | 'assetTypes' | 'assetSubtypes'>;
