import { z } from 'zod';
import { MEDIA_SECTIONS, MEDIA_TYPES } from '../../entities/media.entity.js';
import { zId } from '../../platform/ids.js';
import { zOptionalText } from '../../platform/text.js';
import { GLOBAL_MEDIA_CONFIG, MAX_DURATION_SECONDS, VIDEO_MIME_TYPES } from '../media-config/media-config.defaults.js';

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

/**
 * What an upload is for, in the media configuration's section names: with it, the upload applies that section's
 * global limits (type, size, duration) instead of the general ones. Any other value is refused, naming the field.
 */
export const UPLOAD_PURPOSES = MEDIA_SECTIONS;
export const uploadPurpose = z.enum(UPLOAD_PURPOSES, { error: `must be one of ${UPLOAD_PURPOSES.join(', ')}` });

const MB = 1024 * 1024;
const sizeText = (bytes: number) => (bytes % MB === 0 ? `${bytes / MB} MB` : `${bytes} bytes`);
const durationText = (seconds: number) => (seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`);

/** The global limits of every section, as the upload applies them with `purpose` (for the OpenAPI description). */
function purposeLimitsText(): string {
  return UPLOAD_PURPOSES.map((section) => {
    const c = GLOBAL_MEDIA_CONFIG[section];
    const seconds = MAX_DURATION_SECONDS[section];
    const video = c.videosEnabled
      ? `video ${c.allowedVideoMimeTypes.length < VIDEO_MIME_TYPES.length ? `(${c.allowedVideoMimeTypes.join(', ')} only) ` : ''}${sizeText(c.maxVideoSizeBytes)}, ${durationText(seconds.VIDEO)}`
      : 'no video';
    const audio = c.audioEnabled ? `audio ${sizeText(c.maxAudioSizeBytes)}, ${durationText(seconds.AUDIO)}` : 'no audio';
    const images = c.imagesEnabled ? `images ${sizeText(c.maxImageSizeBytes)}` : 'no images';
    return `${section}: ${images}; ${video}; ${audio}`;
  }).join('. ');
}

/** Text fields sent beside the file. */
export const uploadFields = z.object({
  title: zOptionalText(200),
  description: zOptionalText(2000),
  purpose: uploadPurpose.optional(),
});
export type UploadFields = z.infer<typeof uploadFields>;

export const mediaUploadForm = z
  .object({
    file: z.string().meta({
      format: 'binary',
      description:
        'Image JPEG, PNG or WebP up to 10 MB; video MP4, WebM or MOV up to 50 MB; audio MP3, WAV or OGG up to 20 MB ' +
        '(without `purpose`; with it, the limits of that content type). The type is sniffed from the content; the ' +
        'duration of video and audio is read from the file.',
    }),
    title: z.string().max(200).optional(),
    description: z.string().max(2000).optional(),
    purpose: z
      .enum(UPLOAD_PURPOSES)
      .optional()
      .meta({
        description:
          'What the file is for (a media configuration section); it may be sent before or after `file`. Without it the ' +
          "general limits above apply. With it, that section's global limits apply instead, and a type the section " +
          `never takes is refused (MEDIA_TYPE_NOT_ALLOWED): ${purposeLimitsText()}. Attaching still applies the ` +
          "territory's own (possibly tighter) limits.",
      }),
  })
  .meta({ id: 'MediaUploadForm' });
