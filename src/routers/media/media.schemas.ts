import { z } from 'zod';
import { MEDIA_TYPES } from '../../entities/media.entity.js';
import { zId } from '../../platform/ids.js';
import { zOptionalText } from '../../platform/text.js';

export const mediaAssetOutput = z
  .object({
    id: z.uuid(),
    /** Where the bytes stream from: `/api/v1/media/{id}` (authenticated). */
    url: z.string(),
    mimeType: z.string(),
    sizeBytes: z.number().int(),
    mediaType: z.enum(MEDIA_TYPES),
    /** Read from the file for video and audio; null for images. */
    durationSeconds: z.number().nullable(),
    uploadedByUserId: z.uuid(),
    createdAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'MediaAsset' });
export type MediaAssetOutput = z.infer<typeof mediaAssetOutput>;

export const mediaIdInput = z.object({ id: zId });

/** Text fields sent beside the file. */
export const uploadFields = z.object({
  title: zOptionalText(200),
  description: zOptionalText(2000),
});
export type UploadFields = z.infer<typeof uploadFields>;

export const mediaUploadForm = z
  .object({
    file: z.string().meta({
      format: 'binary',
      description:
        'Image JPEG, PNG or WebP up to 10 MB; video MP4, WebM or MOV up to 50 MB; audio MP3, WAV or OGG up to 20 MB. ' +
        'The type is sniffed from the content; the duration of video and audio is read from the file.',
    }),
    title: z.string().max(200).optional(),
    description: z.string().max(2000).optional(),
  })
  .meta({ id: 'MediaUploadForm' });
