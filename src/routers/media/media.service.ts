import { readConfigNumber } from '../system-config/system-config.queries.js';
import { execSql } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { LockMode, type EntityManager, type InferEntity } from '@mikro-orm/postgresql';
import { audit } from '../../entities/audit.entity.js';
import { MediaAsset, MediaAttachment } from '../../entities/media.entity.js';
import type { Upload } from '../../platform/upload.js';
import { newId } from '../../platform/ids.js';
import { badRequest, forbidden, notFound } from '../../platform/problems.js';
import type { Storage } from '../../platform/storage.js';
import { UPLOAD_MAX_BYTES } from '../media-config/media-config.defaults.js';
import { mediaUrl } from './media-attach.js';
import { classifyMime, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE_PX, readDurationSeconds, readImageDimensions } from './media.formats.js';
import type { MediaAssetOutput, UploadFields } from './media.schemas.js';

// The functions other domains call to attach, list and delete media (posts, events, items, chat).
export { assertAttachable, attachMedia, deleteMediaOf, mediaUrl, mediaUrlsOf, CHAT_VIDEO_REFUSED, type AttachTarget, type MediaRow } from './media-attach.js';

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
const megabytes = (bytes: number) => `${bytes / (1024 * 1024)} MB`;

/**
 * Stores an uploaded file as the caller's media asset. The upload was sniffed against every accepted type with the
 * largest limit; here each type gets its own limit, and video and audio must tell their duration. The bytes are
 * written before the row and removed again when the row cannot be written.
 */
export async function uploadMedia(ctx: ServiceContext, input: { upload: Upload; fields: UploadFields }): Promise<MediaAssetOutput> {
  const { em, storage } = ctx;
  const userId = ctx.user.id;
  const { upload, fields } = input;
  const { mimeType, mediaType } = classifyMime(upload.mimeType);
  const maxBytes = UPLOAD_MAX_BYTES[mediaType];
  if (upload.bytes.length > maxBytes) {
    throw badRequest(`The file is larger than the limit of ${megabytes(maxBytes)} for ${TYPE_NAMES[mediaType]}.`, 'FILE_TOO_LARGE');
  }
  if (mediaType === 'IMAGE') {
    const size = readImageDimensions(upload.bytes);
    if (!size) throw badRequest('The image dimensions could not be read from the file.', 'IMAGE_UNREADABLE');
    if (size.width > MAX_IMAGE_SIDE_PX || size.height > MAX_IMAGE_SIDE_PX || size.width * size.height > MAX_IMAGE_PIXELS) {
      throw badRequest(
        `The image is ${size.width}x${size.height} pixels; at most ${MAX_IMAGE_SIDE_PX} px a side and ${MAX_IMAGE_PIXELS / 1_000_000} megapixels are accepted.`,
        'IMAGE_TOO_LARGE',
      );
    }
  }
  let durationSeconds: number | null = null;
  if (mediaType !== 'IMAGE') {
    durationSeconds = await readDurationSeconds(upload.bytes, mimeType);
    if (durationSeconds === null) {
      throw badRequest(`The duration of the ${mediaType === 'VIDEO' ? 'video' : 'audio'} could not be read from the file.`, 'MEDIA_DURATION_UNREADABLE');
    }
  }

  const id = newId();
  const storageKey = `media/${userId}/${id}.${upload.ext}`;
  await storage.put(storageKey, upload.bytes);
  try {
    const asset = em.create(MediaAsset, {
      id,
      uploadedByUserId: userId,
      mediaType,
      mimeType,
      sizeBytes: upload.bytes.length,
      durationSeconds,
      storageKey,
      title: fields.title,
      description: fields.description,
      deletedAtUtc: null,
    });
    await em.flush();
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
