import { z } from 'zod';

export const mediaPreferencesOutput = z
  .object({
    userId: z.uuid(),
    showImages: z.boolean(),
    showVideos: z.boolean(),
    showAudio: z.boolean(),
    autoPlayVideos: z.boolean(),
    autoPlayAudio: z.boolean(),
    /** null until the user saves a change (the defaults are not stored). */
    updatedAtUtc: z.iso.datetime().nullable(),
  })
  .meta({ id: 'UserMediaPreferences' });
export type MediaPreferencesOutput = z.infer<typeof mediaPreferencesOutput>;

/** Partial update: fields left out keep their value; unknown fields are a 400. */
export const mediaPreferencesInput = z.strictObject({
  showImages: z.boolean().optional(),
  showVideos: z.boolean().optional(),
  showAudio: z.boolean().optional(),
  autoPlayVideos: z.boolean().optional(),
  autoPlayAudio: z.boolean().optional(),
});
export type MediaPreferencesInput = z.infer<typeof mediaPreferencesInput>;
