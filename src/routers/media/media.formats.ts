import { parseBuffer } from 'music-metadata';
import type { MediaType } from '../../entities/media.entity.js';
import { AUDIO_MIME_TYPES, IMAGE_MIME_TYPES, VIDEO_MIME_TYPES } from '../media-config/media-config.defaults.js';

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
