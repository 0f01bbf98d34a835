import { z } from 'zod';
import { zId } from '../../platform/ids.js';

const mimeList = z.array(z.string());

export const mediaConfigSectionOutput = z
  .object({
    imagesEnabled: z.boolean(),
    videosEnabled: z.boolean(),
    audioEnabled: z.boolean(),
    maxMediaCount: z.number().int(),
    maxVideoCount: z.number().int(),
    maxAudioCount: z.number().int(),
    maxImageSizeBytes: z.number().int(),
    maxVideoSizeBytes: z.number().int(),
    maxAudioSizeBytes: z.number().int(),
    allowedImageMimeTypes: mimeList,
    allowedVideoMimeTypes: mimeList,
    allowedAudioMimeTypes: mimeList,
  })
  .meta({ id: 'MediaConfigSection', description: "Effective values: the territory's where configured, else the global ones." });

export const mediaConfigOutput = z
  .object({
    territoryId: z.uuid(),
    posts: mediaConfigSectionOutput,
    events: mediaConfigSectionOutput,
    marketplace: mediaConfigSectionOutput,
    chat: mediaConfigSectionOutput,
    /** null while the territory has never configured anything. */
    updatedAtUtc: z.iso.datetime().nullable(),
  })
  .meta({ id: 'TerritoryMediaConfig' });
export type MediaConfigOutput = z.infer<typeof mediaConfigOutput>;

export const mediaConfigInput = z.object({ territoryId: zId });

const count = z.number().int().min(0).max(1000);
const bytes = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const mimeType = z.string().trim().toLowerCase().min(3).max(100);

/** One section of a PUT: a value sets the field, `null` returns it to the global value, an absent field is kept. */
export const mediaConfigSectionInput = z.strictObject({
  imagesEnabled: z.boolean().nullish(),
  videosEnabled: z.boolean().nullish(),
  audioEnabled: z.boolean().nullish(),
  maxMediaCount: count.nullish(),
  maxVideoCount: count.nullish(),
  maxAudioCount: count.nullish(),
  maxImageSizeBytes: bytes.nullish(),
  maxVideoSizeBytes: bytes.nullish(),
  maxAudioSizeBytes: bytes.nullish(),
  allowedImageMimeTypes: z.array(mimeType).max(20).nullish(),
  allowedVideoMimeTypes: z.array(mimeType).max(20).nullish(),
  allowedAudioMimeTypes: z.array(mimeType).max(20).nullish(),
});
export type MediaConfigSectionInput = z.infer<typeof mediaConfigSectionInput>;

export const updateMediaConfigInput = z.strictObject({
  territoryId: zId,
  posts: mediaConfigSectionInput.optional(),
  events: mediaConfigSectionInput.optional(),
  marketplace: mediaConfigSectionInput.optional(),
  chat: mediaConfigSectionInput.optional(),
});
export type UpdateMediaConfigInput = z.infer<typeof updateMediaConfigInput>;
