import { imageSize } from 'image-size';
import { parseBuffer } from 'music-metadata';
import type { MediaType } from '../../entities/media.entity.js';
import { AUDIO_MIME_TYPES, IMAGE_MIME_TYPES, VIDEO_MIME_TYPES } from '../media-config/media-config.defaults.js';

/**
 * The largest image we store: 40 megapixels, at most 12 000 px a side. A few kilobytes can declare 30000x30000 pixels
 * (a decompression bomb for every client that renders it), so the declared size is checked, not the file size.
 */
export const MAX_IMAGE_SIDE_PX = 12_000;
export const MAX_IMAGE_PIXELS = 40_000_000;

/** The image's declared width and height, or null when its header cannot be read. */
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

/**
 * Duration of an audio or video file in seconds (millisecond precision), read from its container: the format's
 * duration, else the longest track (MP4 and MOV give durations per track only when they carry no audio). Null when
 * the file does not tell (truncated or corrupt).
 */
export async function readDurationSeconds(bytes: Buffer, mimeType: string): Promise<number | null> {
  try {
    const { format } = await parseBuffer(bytes, { mimeType, size: bytes.length }, { duration: true, skipCovers: true });
    const candidates = [format.duration, ...format.trackInfo.map((t) => t.duration)].filter(
      (d): d is number => typeof d === 'number' && Number.isFinite(d) && d > 0,
    );
    const seconds = format.duration && Number.isFinite(format.duration) && format.duration > 0 ? format.duration : Math.max(0, ...candidates);
    return seconds > 0 ? Math.round(seconds * 1000) / 1000 : null;
  } catch {
    return null;
  }
}
