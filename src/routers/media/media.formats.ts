import { imageSize } from 'image-size';
import type { MediaType } from '../../entities/media.entity.js';
import { AUDIO_MIME_TYPES, IMAGE_MIME_TYPES, VIDEO_MIME_TYPES } from '../media-config/media-config.defaults.js';

/**
 * The largest image we store: 40 megapixels, at most 12 000 px a side. A few kilobytes can declare 30000x30000 pixels
 * (a decompression bomb for every client that renders it), so the declared size is checked, not the file size.
 */
export const MAX_IMAGE_SIDE_PX = 12_000;
export const MAX_IMAGE_PIXELS = 40_000_000;

/** How much of an image is read for its dimensions (as image-size's own file reader): the header is near the start. */
export const IMAGE_HEADER_BYTES = 512 * 1024;

/** The image's declared width and height (from its first bytes), or null when its header cannot be read. */
export function readImageDimensions(bytes: Buffer): { width: number; height: number } | null {
  try {
    const { width, height } = imageSize(bytes);
    return width > 0 && height > 0 ? { width, height } : null;
  } catch {
    return null;
  }
}

/**
 * What the upload accepts as sniffed by `file-type`. Ogg Opus is sniffed with a codec parameter; it is still an OGG
 * file and is stored as `audio/ogg`.
 */
export const UPLOAD_SNIFFED_MIME_TYPES: readonly string[] = [...IMAGE_MIME_TYPES, ...VIDEO_MIME_TYPES, ...AUDIO_MIME_TYPES, 'audio/ogg; codecs=opus'];

/** The stored MIME type (parameters dropped) and the media type of a sniffed type the upload accepts. */
export function classifyMime(sniffed: string): { mimeType: string; mediaType: MediaType } {
  const mimeType = sniffed.split(';')[0]!.trim();
  if ((IMAGE_MIME_TYPES as readonly string[]).includes(mimeType)) return { mimeType, mediaType: 'IMAGE' };
  if ((VIDEO_MIME_TYPES as readonly string[]).includes(mimeType)) return { mimeType, mediaType: 'VIDEO' };
  return { mimeType, mediaType: 'AUDIO' };
}
