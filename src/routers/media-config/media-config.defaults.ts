import type { MediaSection, MediaType } from '../../entities/media.entity.js';

const MB = 1024 * 1024;

/** Upload (general): what `POST /api/v1/media/upload` accepts, as sniffed from the bytes (spec "Media limits"). */
export const IMAGE_MIME_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
export const VIDEO_MIME_TYPES = ['video/mp4', 'video/webm', 'video/quicktime'] as const;
export const AUDIO_MIME_TYPES = ['audio/mpeg', 'audio/wav', 'audio/ogg'] as const;

export const UPLOAD_MAX_BYTES: Record<MediaType, number> = { IMAGE: 10 * MB, VIDEO: 50 * MB, AUDIO: 20 * MB };

/** The fields of one section of a territory's media configuration (spec "Media"). */
export interface MediaSectionConfig {
  imagesEnabled: boolean;
  videosEnabled: boolean;
  audioEnabled: boolean;
  maxMediaCount: number;
  maxVideoCount: number;
  maxAudioCount: number;
  maxImageSizeBytes: number;
  maxVideoSizeBytes: number;
  maxAudioSizeBytes: number;
  allowedImageMimeTypes: string[];
  allowedVideoMimeTypes: string[];
  allowedAudioMimeTypes: string[];
}
export type MediaConfigField = keyof MediaSectionConfig;

export const BOOLEAN_FIELDS = ['imagesEnabled', 'videosEnabled', 'audioEnabled'] as const satisfies readonly MediaConfigField[];
export const NUMBER_FIELDS = [
  'maxMediaCount',
  'maxVideoCount',
  'maxAudioCount',
  'maxImageSizeBytes',
  'maxVideoSizeBytes',
  'maxAudioSizeBytes',
] as const satisfies readonly MediaConfigField[];
export const LIST_FIELDS = ['allowedImageMimeTypes', 'allowedVideoMimeTypes', 'allowedAudioMimeTypes'] as const satisfies readonly MediaConfigField[];

const ALL_TYPES = {
  imagesEnabled: true,
  videosEnabled: true,
  audioEnabled: true,
  allowedImageMimeTypes: [...IMAGE_MIME_TYPES],
  allowedVideoMimeTypes: [...VIDEO_MIME_TYPES],
  allowedAudioMimeTypes: [...AUDIO_MIME_TYPES],
};

/**
 * The global limits per content type (spec "Media limits"); a territory may only tighten them. Sizes in binary
 * megabytes, as the upload limits.
 */
export const GLOBAL_MEDIA_CONFIG: Record<MediaSection, MediaSectionConfig> = {
  // Up to 10 media; 1 video (50 MB) or 1 audio (10 MB).
  posts: {
    ...ALL_TYPES,
    maxMediaCount: 10,
    maxVideoCount: 1,
    maxAudioCount: 1,
    maxImageSizeBytes: 10 * MB,
    maxVideoSizeBytes: 50 * MB,
    maxAudioSizeBytes: 10 * MB,
  },
  // A cover plus up to 5 additional (6); at most 1 video (100 MB) and 1 audio (20 MB) in total.
  events: {
    ...ALL_TYPES,
    maxMediaCount: 6,
    maxVideoCount: 1,
    maxAudioCount: 1,
    maxImageSizeBytes: 10 * MB,
    maxVideoSizeBytes: 100 * MB,
    maxAudioSizeBytes: 20 * MB,
  },
  // Items: up to 10 media; 1 video (30 MB, MP4 only) and 1 audio (5 MB).
  marketplace: {
    ...ALL_TYPES,
    allowedVideoMimeTypes: ['video/mp4'],
    maxMediaCount: 10,
    maxVideoCount: 1,
    maxAudioCount: 1,
    maxImageSizeBytes: 10 * MB,
    maxVideoSizeBytes: 30 * MB,
    maxAudioSizeBytes: 5 * MB,
  },
  // One image (5 MB) or one audio (2 MB); never a video.
  chat: {
    imagesEnabled: true,
    videosEnabled: false,
    audioEnabled: true,
    allowedImageMimeTypes: [...IMAGE_MIME_TYPES],
    allowedVideoMimeTypes: [],
    allowedAudioMimeTypes: [...AUDIO_MIME_TYPES],
    maxMediaCount: 1,
    maxVideoCount: 0,
    maxAudioCount: 1,
    maxImageSizeBytes: 5 * MB,
    maxVideoSizeBytes: 0,
    maxAudioSizeBytes: 2 * MB,
  },
};

/**
 * Longest video and audio per content type, in seconds. Global only (the spec's configuration has no duration
 * fields). Item video: the spec gives both 30 seconds and 2 minutes; the longer one applies.
 */
export const MAX_DURATION_SECONDS: Record<MediaSection, { VIDEO: number; AUDIO: number }> = {
  posts: { VIDEO: 5 * 60, AUDIO: 5 * 60 },
  events: { VIDEO: 10 * 60, AUDIO: 10 * 60 },
  marketplace: { VIDEO: 2 * 60, AUDIO: 2 * 60 },
  chat: { VIDEO: 0, AUDIO: 60 },
};
