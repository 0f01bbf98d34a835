import { z } from 'zod';
import { normalizeFeatureFlag, TERRITORY_FEATURE_FLAGS, TERRITORY_STATUSES } from '../../entities/territory.entity.js';
import { zLatitude, zLongitude } from '../../platform/geo.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { zNumeric } from '../../platform/numeric.js';
import { sanitizeText, withOutputLimits, zOptionalText, zText } from '../../platform/text.js';

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

const tag = withOutputLimits(
  z
    .string()
    .transform((v) => sanitizeText(v).toLowerCase())
    .pipe(
      z
        .string()
        .min(1)
        .max(50)
        .regex(/^[\p{L}\p{N} -]+$/u, 'letters, digits, spaces and hyphens only'),
    ),
);

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

/** Nearby: the territory plus its distance from the given point. */
export const nearbyTerritoryOutput = territoryOutput.extend({ distanceKm: z.number() }).meta({ id: 'NearbyTerritory' });
export type NearbyTerritoryOutput = z.infer<typeof nearbyTerritoryOutput>;

export const nearbyInput = z.object({
  lat: zNumeric(z.number().min(-90).max(90)),
  lng: zNumeric(z.number().min(-180).max(180)),
  radiusKm: zNumeric(z.number().positive().max(500), 25),
  limit: zNumeric(z.number().int().min(1).max(100), 20),
});

const searchTerm = zOptionalText(200);
const searchFilters = { q: searchTerm, city: searchTerm, state: searchTerm };
export const searchInput = z.object({ ...searchFilters, ...skipTakeInput() });
export const searchPagedInput = z.object({ ...searchFilters, ...pageInput });

export const selectionInput = z.object({ territoryId: zId });
export const selectionOutput = z
  .object({
    sessionId: z.string(),
    territoryId: z.uuid(),
    /** The selected territory, its tags included. */
    territory: territoryOutput,
  })
  .meta({ id: 'TerritorySelection' });

const featureFlag = z
  .string()
  .transform((value, ctx) => {
    const flag = normalizeFeatureFlag(value);
    if (!flag) {
      ctx.addIssue({ code: 'custom', message: `unknown feature flag; known: ${TERRITORY_FEATURE_FLAGS.join(', ')}` });
      return z.NEVER;
    }
    return flag;
  })
  .meta({ description: `A feature flag: ${TERRITORY_FEATURE_FLAGS.join(', ')} (any case)` });
export const featuresOutput = z.object({ territoryId: z.uuid(), enabledFlags: z.array(z.enum(TERRITORY_FEATURE_FLAGS)) }).meta({ id: 'TerritoryFeatures' });
export const updateFeaturesInput = z.object({ id: zId, enabledFlags: z.array(featureFlag).max(TERRITORY_FEATURE_FLAGS.length * 4) });
