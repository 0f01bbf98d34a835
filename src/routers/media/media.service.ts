import { readConfigNumber } from '../system-config/system-config.queries.js';
import { execSql } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { LockMode, type EntityManager, type InferEntity } from '@mikro-orm/postgresql';
import { audit } from '../../entities/audit.entity.js';
import { MediaAsset, MediaAttachment } from '../../entities/media.entity.js';
import { readUploadHead, type Upload } from '../../platform/upload.js';
import { newId } from '../../platform/ids.js';
import { badRequest, forbidden, notFound } from '../../platform/problems.js';
import type { Storage } from '../../platform/storage.js';
import type { MediaSection, MediaType } from '../../entities/media.entity.js';
import { zodFieldErrors } from '../../trpc/error-shape.js';
import { GLOBAL_MEDIA_CONFIG, MAX_DURATION_SECONDS, type MediaSectionConfig, UPLOAD_MAX_BYTES } from '../media-config/media-config.defaults.js';
import { CHAT_VIDEO_REFUSED, mediaUrl } from './media-attach.js';
import { classifyMime, IMAGE_HEADER_BYTES, UPLOAD_SNIFFED_MIME_TYPES, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE_PX, readImageDimensions } from './media.formats.js';
import { probeDuration } from './media-probe.js';
import { assertStorageQuota, reserveStorage } from './storage-quota.js';
import { UPLOAD_PURPOSES, uploadPurpose, type MediaAssetOutput, type UploadFields } from './media.schemas.js';

// The functions other domains call to attach, list and delete media (posts, events, items, chat).
export {
  assertAttachable,
  attachMedia,
  deleteMediaOf,
  liveMediaOf,
  mediaUrl,
  mediaUrlsOf,
  CHAT_VIDEO_REFUSED,
  type AttachTarget,
  type MediaRow,
} from './media-attach.js';

type MediaAssetEntity = InferEntity<typeof MediaAsset>;

export function toMediaOutput(asset: MediaAssetEntity): MediaAssetOutput {
  return {
    id: asset.id,
    url: mediaUrl(asset.id),
    mimeType: asset.mimeType,
    sizeBytes: asset.sizeBytes,
    mediaType: asset.mediaType,
    durationSeconds: asset.durationSeconds ?? null,
    uploadedByUserId: asset.uploadedByUserId,
    createdAtUtc: asset.createdAtUtc.toISOString(),
  };
}

const TYPE_NAMES = { IMAGE: 'images', VIDEO: 'videos', AUDIO: 'audio' } as const;
const TYPE_WORDS = { IMAGE: 'image', VIDEO: 'video', AUDIO: 'audio' } as const;
/** How the refusals name each purpose's content (as the attach does). */
const PURPOSE_NOUNS: Record<MediaSection, string> = { posts: 'posts', events: 'events', marketplace: 'items', chat: 'chat messages' };
const megabytes = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`);
const minutes = (seconds: number) => (seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? '' : 's'}` : `${seconds} seconds`);

type UploadLimit = { bytes: number; of: string };

/**
 * The general byte limit of a sniffed type (no `purpose`), named for the refusal. Other multipart routes
 * (journeys' create-post) stream their files under it.
 */
export function uploadLimitOf(sniffedMime: string): UploadLimit {
  const { mediaType } = classifyMime(sniffedMime);
  return { bytes: UPLOAD_MAX_BYTES[mediaType], of: TYPE_NAMES[mediaType] };
}

function sectionLimitsOf(config: MediaSectionConfig, type: MediaType) {
  if (type === 'IMAGE') return { enabled: config.imagesEnabled, mimeTypes: config.allowedImageMimeTypes, maxBytes: config.maxImageSizeBytes };
  if (type === 'VIDEO') return { enabled: config.videosEnabled, mimeTypes: config.allowedVideoMimeTypes, maxBytes: config.maxVideoSizeBytes };
  return { enabled: config.audioEnabled, mimeTypes: config.allowedAudioMimeTypes, maxBytes: config.maxAudioSizeBytes };
}

/**
 * The byte limit of a sniffed type uploaded for `purpose`: that section's global limit (a territory may only
 * tighten it, at attach time). A type the section never takes (chat video, items' WebM or MOV) is refused with
 * the attach's wording.
 */
export function purposeLimitOf(sniffedMime: string, purpose: MediaSection): UploadLimit {
  const { mimeType, mediaType } = classifyMime(sniffedMime);
  const noun = PURPOSE_NOUNS[purpose];
  const limits = sectionLimitsOf(GLOBAL_MEDIA_CONFIG[purpose], mediaType);
  const refuse = (message: string) => badRequest(message, 'MEDIA_TYPE_NOT_ALLOWED', [{ field: 'file', message }]);
  if (purpose === 'chat' && mediaType === 'VIDEO') throw refuse(CHAT_VIDEO_REFUSED);
  if (!limits.enabled) throw refuse(`${TYPE_NAMES[mediaType].replace(/^./, (c) => c.toUpperCase())} are not allowed in ${noun}.`);
  if (!limits.mimeTypes.includes(mimeType)) throw refuse(`${mimeType} is not allowed for ${noun}.`);
  return { bytes: limits.maxBytes, of: `${TYPE_NAMES[mediaType]} in ${noun}` };
}

/** The declared purpose of an upload (a 400 naming `purpose` when the value is not a section). */
export function parsePurpose(value: string | undefined): MediaSection | undefined {
  if (value === undefined) return undefined;
  const parsed = uploadPurpose.safeParse(value);
  if (!parsed.success) {
    throw badRequest(
      'Validation failed',
      'VALIDATION_FAILED',
      zodFieldErrors(parsed.error).map((e) => ({ ...e, field: 'purpose' })),
    );
  }
  return parsed.data;
}

/** The largest global limit of any section taking this type (0 when none does). */
function largestPurposeLimit(mimeType: string, mediaType: MediaType): number {
  return Math.max(
    ...UPLOAD_PURPOSES.map((section) => {
      const limits = sectionLimitsOf(GLOBAL_MEDIA_CONFIG[section], mediaType);
      return limits.enabled && limits.mimeTypes.includes(mimeType) ? limits.maxBytes : 0;
    }),
  );
}

/** The largest limit `uploadStreamLimitOf` gives any file (events' video, 100 MB): `readUpload`'s `largestLimitBytes`. */
export const UPLOAD_LARGEST_LIMIT_BYTES = Math.max(
  ...Object.values(UPLOAD_MAX_BYTES),
  ...UPLOAD_SNIFFED_MIME_TYPES.map((sniffed) => {
    const { mimeType, mediaType } = classifyMime(sniffed);
    return largestPurposeLimit(mimeType, mediaType);
  }),
);

/**
 * The byte limit `readUpload` streams a file under, from the text fields received before it. `purpose` received
 * already: that section's limit, and a type it never takes (or an unknown value) is refused before the rest of the
 * file is read. Not received (yet): it may still follow the file, so the stream is bounded by the largest limit any
 * purpose gives the type (video: events' 100 MB) and `uploadMedia` applies the exact limit, general or declared,
 * once every field is in. No purpose allows more than the general limit for images and audio, so those stream
 * under their general limit exactly as without the field; only a video of 50 to 100 MB is read whole before its
 * refusal.
 */
export function uploadStreamLimitOf(sniffedMime: string, fieldsSoFar: Readonly<Record<string, string>>): UploadLimit {
  const purpose = parsePurpose(fieldsSoFar.purpose);
  if (purpose) return purposeLimitOf(sniffedMime, purpose);
  const general = uploadLimitOf(sniffedMime);
  const { mimeType, mediaType } = classifyMime(sniffedMime);
  const largest = largestPurposeLimit(mimeType, mediaType);
  if (largest <= general.bytes) return general;
  // Past it, no purpose (sent later or not at all) takes the file: the refusal names both limits.
  return { bytes: largest, of: `${general.of} whatever the purpose (${megabytes(general.bytes)} for ${general.of} without one)` };
}

/** The duration of a video or audio upload, read in a worker under a time limit (a 400 when it cannot be read). */
async function durationOf(upload: Upload, mimeType: string, mediaType: 'VIDEO' | 'AUDIO'): Promise<number> {
  const what = mediaType === 'VIDEO' ? 'video' : 'audio';
  const probe = await probeDuration({ path: upload.path, mimeType, sizeBytes: upload.sizeBytes });
  if (probe.kind === 'timeout') {
    throw badRequest(`The ${what} could not be analysed in time; the file is refused.`, 'MEDIA_ANALYSIS_TIMEOUT');
  }
  if (probe.kind === 'unreadable') {
    throw badRequest(`The duration of the ${what} could not be read from the file.`, 'MEDIA_DURATION_UNREADABLE');
  }
  return probe.seconds;
}

/**
 * Stores an uploaded file as the caller's media asset. `readUpload` has bounded the file while it streamed in
 * (`uploadStreamLimitOf`); here, every field being in, the exact limit applies: the general one of the sniffed type
 * (`uploadLimitOf`), or with `purpose` that section's global type, size and duration limits (`purposeLimitOf`,
 * `MAX_DURATION_SECONDS`). Images must declare sane dimensions, video and audio must tell their duration, and
 * the caller's storage quota must hold the file. The bytes are copied to storage before the row is written (in a
 * transaction holding the caller's quota lock) and removed again when the row cannot be written.
 */
export async function uploadMedia(ctx: ServiceContext, input: { upload: Upload; fields: UploadFields }): Promise<MediaAssetOutput> {
  const { em, storage } = ctx;
  const userId = ctx.user.id;
  const { upload, fields } = input;
  const { mimeType, mediaType } = classifyMime(upload.mimeType);
  const purpose = fields.purpose;
  const limit = purpose ? purposeLimitOf(upload.mimeType, purpose) : uploadLimitOf(upload.mimeType);
  if (upload.sizeBytes > limit.bytes) {
    throw badRequest(`The file is larger than the limit of ${megabytes(limit.bytes)} for ${limit.of}.`, 'FILE_TOO_LARGE');
  }
  if (mediaType === 'IMAGE') {
    const size = readImageDimensions(await readUploadHead(upload, IMAGE_HEADER_BYTES));
    if (!size) throw badRequest('The image dimensions could not be read from the file.', 'IMAGE_UNREADABLE');
    if (size.width > MAX_IMAGE_SIDE_PX || size.height > MAX_IMAGE_SIDE_PX || size.width * size.height > MAX_IMAGE_PIXELS) {
      throw badRequest(
        `The image is ${size.width}x${size.height} pixels; at most ${MAX_IMAGE_SIDE_PX} px a side and ${MAX_IMAGE_PIXELS / 1_000_000} megapixels are accepted.`,
        'IMAGE_TOO_LARGE',
      );
    }
  }
  // A first quota check before any bytes are copied; the binding one runs under the lock, with the insert.
  await assertStorageQuota(em, userId, upload.sizeBytes);
  const durationSeconds = mediaType === 'IMAGE' ? null : await durationOf(upload, mimeType, mediaType);
  if (purpose && mediaType !== 'IMAGE' && durationSeconds !== null && durationSeconds > MAX_DURATION_SECONDS[purpose][mediaType]) {
    const message = `The ${TYPE_WORDS[mediaType]} is longer than the limit of ${minutes(MAX_DURATION_SECONDS[purpose][mediaType])} for ${PURPOSE_NOUNS[purpose]}.`;
    throw badRequest(message, 'MEDIA_TOO_LONG', [{ field: 'file', message }]);
  }

  const id = newId();
  const storageKey = `media/${userId}/${id}.${upload.ext}`;
  await storage.putFile(storageKey, upload.path);
  try {
    const asset = await em.transactional(async (tx) => {
      await reserveStorage(tx, userId, upload.sizeBytes);
      const created = tx.create(MediaAsset, {
        id,
        uploadedByUserId: userId,
        mediaType,
        mimeType,
        sizeBytes: upload.sizeBytes,
        durationSeconds,
        storageKey,
        title: fields.title,
        description: fields.description,
        deletedAtUtc: null,
      });
      await tx.flush();
      return created;
    });
    return toMediaOutput(asset);
  } catch (error) {
    await storage.remove(storageKey).catch(() => undefined);
    throw error;
  }
}

/** A media asset that is not deleted, else 404 (no access check: streaming goes through media-access.ts). */
export async function findLiveMedia(em: EntityManager, id: string): Promise<MediaAssetEntity> {
  const asset = await em.findOne(MediaAsset, { id, deletedAtUtc: null });
  if (!asset) throw notFound('Media');
  return asset;
}

/**
 * The uploader deletes their media (someone else: 403). Content showing it loses it (its attachment goes too).
 * Marked and audited in one transaction, then purged.
 */
export async function deleteMedia(ctx: ServiceContext, input: { id: string }): Promise<void> {
  const { em, storage, user } = ctx;
  const { id } = input;
  await em.transactional(async (tx) => {
    const asset = await tx.findOne(MediaAsset, { id, deletedAtUtc: null }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!asset) throw notFound('Media');
    if (asset.uploadedByUserId !== user.id) throw forbidden('Only the user who uploaded this media can delete it.');
    await tx.nativeDelete(MediaAttachment, { mediaAssetId: id });
    asset.deletedAtUtc = new Date();
    audit(tx, {
      actorUserId: user.id,
      action: 'media.deleted',
      subjectType: 'MediaAsset',
      subjectId: id,
      data: { mediaType: asset.mediaType, sizeBytes: asset.sizeBytes },
    });
  });
  await purgeDeletedMedia(em, storage);
}

/**
 * Marks deleted the uploads still attached to nothing after the retention (they would otherwise hold storage
 * forever). Attaching locks the media row and refuses a deleted one, so an upload is never attached and purged at once.
 */
export async function markAbandonedMedia(em: EntityManager, now: Date): Promise<number> {
  const hours = await readConfigNumber(em, 'Media:UnattachedRetentionHours', 24);
  const marked = await execSql<{ id: string }>(
    em,
    `update media_asset m set deleted_at_utc = ?
      where m.deleted_at_utc is null and m.created_at_utc < ?
        and not exists (select 1 from media_attachment a where a.media_asset_id = m.id)
      returning m.id`,
    [now, new Date(now.getTime() - hours * 3_600_000)],
  );
  return marked.length;
}

/**
 * Removes the bytes, then the rows, of media marked deleted (by `deleteMedia` or by content deletions through
 * `deleteMediaOf`), oldest first, at most `limit` per call. A file that cannot be removed keeps its row, so a later
 * call tries again. Returns how many were purged.
 */
export async function purgeDeletedMedia(em: EntityManager, storage: Storage, limit = 50): Promise<number> {
  const marked = await execSql<{ id: string; storage_key: string }>(
    em,
    'select id, storage_key from media_asset where deleted_at_utc is not null order by deleted_at_utc limit ?',
    [limit],
  );
  let purged = 0;
  for (const row of marked) {
    try {
      await storage.remove(row.storage_key);
    } catch {
      continue;
    }
    await execSql(em, 'delete from media_asset where id = ? and deleted_at_utc is not null', [row.id]);
    purged += 1;
  }
  return purged;
}
