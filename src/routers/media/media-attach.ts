import { execSql, type HotReadSource, pgArray, runHotRead, type SqlQuery } from '../../db/sql.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MEDIA_OWNER_TYPES, MediaAttachment, type MediaOwnerType, type MediaSection, type MediaType } from '../../entities/media.entity.js';
import type { TerritoryFeatureFlag } from '../../entities/territory.entity.js';
import { badRequest, type AppError, type ProblemCode } from '../../platform/problems.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { MAX_DURATION_SECONDS, type MediaSectionConfig } from '../media-config/media-config.defaults.js';
import { effectiveMediaConfig } from '../media-config/media-config.queries.js';
import { isUuid } from '../../platform/ids.js';

/** A media asset as attachment rules and content responses see it. */
export interface MediaRow {
  id: string;
  uploadedByUserId: string;
  mediaType: MediaType;
  mimeType: string;
  sizeBytes: number;
  durationSeconds: number | null;
  createdAtUtc: Date;
  url: string;
}

export const mediaUrl = (id: string) => `/api/v1/media/${id}`;

export type AttachTarget = MediaSection;

export interface AttachRequest {
  userId: string;
  territoryId: string;
  target: AttachTarget;
  mediaIds: string[];
  /** Events only: the cover, first of the returned rows. */
  coverMediaId?: string | null;
}

/** How each target names its media in request bodies (error `field`s) and in messages. */
const TARGETS: Record<AttachTarget, { field: string; noun: string }> = {
  posts: { field: 'mediaIds', noun: 'posts' },
  events: { field: 'additionalMediaIds', noun: 'events' },
  marketplace: { field: 'mediaIds', noun: 'items' },
  chat: { field: 'mediaId', noun: 'chat messages' },
};

/** Territory feature flags gating a media type (posts and chat only; events and items follow the configuration). */
const FLAGS: Partial<Record<AttachTarget, Partial<Record<MediaType, TerritoryFeatureFlag>>>> = {
  posts: { IMAGE: 'MEDIAIMAGESENABLED', VIDEO: 'MEDIAVIDEOSENABLED', AUDIO: 'MEDIAAUDIOENABLED' },
  chat: { IMAGE: 'CHATMEDIAIMAGESENABLED', AUDIO: 'CHATMEDIAAUDIOENABLED' },
};

export const CHAT_VIDEO_REFUSED = 'Only images and audios are allowed in chat messages';

const TYPE_WORDS: Record<MediaType, { one: string; many: string }> = {
  IMAGE: { one: 'image', many: 'Images' },
  VIDEO: { one: 'video', many: 'Videos' },
  AUDIO: { one: 'audio', many: 'Audios' },
};

const megabytes = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${bytes} bytes`);
const minutes = (seconds: number) => (seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? '' : 's'}` : `${seconds} seconds`);

function limitsOf(config: MediaSectionConfig, type: MediaType) {
  if (type === 'IMAGE')
    return { enabled: config.imagesEnabled, mimeTypes: config.allowedImageMimeTypes, maxBytes: config.maxImageSizeBytes, maxCount: Infinity };
  if (type === 'VIDEO')
    return { enabled: config.videosEnabled, mimeTypes: config.allowedVideoMimeTypes, maxBytes: config.maxVideoSizeBytes, maxCount: config.maxVideoCount };
  return { enabled: config.audioEnabled, mimeTypes: config.allowedAudioMimeTypes, maxBytes: config.maxAudioSizeBytes, maxCount: config.maxAudioCount };
}

interface AssetRow {
  id: string;
  uploaded_by_user_id: string;
  media_type: MediaType;
  mime_type: string;
  size_bytes: number;
  duration_seconds: number | null;
  created_at_utc: Date;
}

const toRow = (r: AssetRow): MediaRow => ({
  id: r.id,
  uploadedByUserId: r.uploaded_by_user_id,
  mediaType: r.media_type,
  mimeType: r.mime_type,
  sizeBytes: Number(r.size_bytes),
  durationSeconds: r.duration_seconds === null ? null : Number(r.duration_seconds),
  createdAtUtc: new Date(r.created_at_utc),
  url: mediaUrl(r.id),
});

/**
 * Checks that the media may be attached to new content of `target` in the territory, and returns them in the
 * given order (an event's cover first). Every refusal is a 400 naming the request field:
 * - each id exists, belongs to the caller (spec: all media attached belong to the user creating the content), is
 *   not attached to other content already, and appears once;
 * - chat refuses video with the spec's text (before its media count); posts and chat follow the territory's media flags;
 * - the territory's effective media configuration: enabled types, MIME types, total/video/audio counts, sizes;
 * - posts carry one video or one audio, not both; durations within the content type's global limit.
 * The assets are locked (`for update`): call it inside the transaction that attaches them, so two contents
 * racing for one asset serialize and the second is refused here rather than by the unique index.
 */
export async function assertAttachable(em: EntityManager, request: AttachRequest): Promise<MediaRow[]> {
  const { userId, territoryId, target } = request;
  const { field, noun } = TARGETS[target];
  const cover = request.coverMediaId ?? null;
  const ids = [...(cover ? [cover] : []), ...request.mediaIds];
  const fail = (message: string, code: ProblemCode, id?: string): AppError =>
    badRequest(message, code, [{ field: id !== undefined && id === cover ? 'coverMediaId' : field, message }]);

  const access = await requireTerritory({ em, user: null, sessionId: null }, territoryId, { status: 'ANY' });
  if (ids.length === 0) return [];

  const malformed = ids.find((id) => !isUuid(id));
  if (malformed !== undefined) throw fail('Media ids must be UUIDs.', 'VALIDATION_FAILED', malformed);
  const seen = new Set<string>();
  for (const id of ids) {
    const key = id.toLowerCase();
    if (seen.has(key)) throw fail(`Media ${id} is listed more than once.`, 'MEDIA_DUPLICATE', id);
    seen.add(key);
  }

  const config = (await effectiveMediaConfig(em, territoryId))[target];
  if (target === 'events' && request.mediaIds.length > Math.max(0, config.maxMediaCount - 1)) {
    throw fail(`An event takes a cover plus at most ${Math.max(0, config.maxMediaCount - 1)} additional media.`, 'MEDIA_COUNT_EXCEEDED');
  }
  const tooMany = ids.length > config.maxMediaCount;
  const countExceeded = () =>
    fail(
      target === 'chat' && config.maxMediaCount === 1
        ? 'A chat message takes one image or one audio.'
        : `At most ${config.maxMediaCount} media are allowed in ${noun} in this territory.`,
      'MEDIA_COUNT_EXCEEDED',
    );
  // Chat's count waits for the kind (below): a video there always gets the spec's text, whatever the count allows.
  if (tooMany && target !== 'chat') throw countExceeded();

  const found = await execSql<AssetRow>(
    em,
    `select id, uploaded_by_user_id, media_type, mime_type, size_bytes, duration_seconds, created_at_utc
       from media_asset where id = any(?::uuid[]) and deleted_at_utc is null for update`,
    [pgArray(ids)],
  );
  const byId = new Map(found.map((r) => [r.id.toLowerCase(), toRow(r)]));
  const rows: MediaRow[] = [];
  for (const id of ids) {
    const row = byId.get(id.toLowerCase());
    if (!row) throw fail(`Media ${id} was not found.`, 'MEDIA_NOT_FOUND', id);
    if (row.uploadedByUserId !== userId) throw fail('All media attached must belong to the user creating the content.', 'MEDIA_NOT_OWNED', id);
    rows.push(row);
  }
  const attached = await execSql<{ media_asset_id: string }>(em, 'select media_asset_id from media_attachment where media_asset_id = any(?::uuid[]) limit 1', [
    pgArray(rows.map((r) => r.id)),
  ]);
  if (attached[0])
    throw fail(`Media ${attached[0].media_asset_id} is already attached to other content.`, 'MEDIA_ALREADY_ATTACHED', attached[0].media_asset_id);
  const video = target === 'chat' ? rows.find((r) => r.mediaType === 'VIDEO') : undefined;
  if (video) throw fail(CHAT_VIDEO_REFUSED, 'MEDIA_TYPE_NOT_ALLOWED', video.id);
  if (tooMany) throw countExceeded();

  const flags = access.territory.enabledFlags;
  const counts: Record<MediaType, number> = { IMAGE: 0, VIDEO: 0, AUDIO: 0 };
  for (const row of rows) {
    const type = row.mediaType;
    const words = TYPE_WORDS[type];
    const flag = FLAGS[target]?.[type];
    const limits = limitsOf(config, type);
    if ((FLAGS[target] && !(flag && flags.includes(flag))) || !limits.enabled) {
      throw fail(`${words.many} are not enabled for ${noun} in this territory.`, 'MEDIA_TYPE_NOT_ALLOWED', row.id);
    }
    if (!limits.mimeTypes.includes(row.mimeType)) {
      throw fail(`${row.mimeType} is not allowed for ${noun} in this territory.`, 'MEDIA_TYPE_NOT_ALLOWED', row.id);
    }
    if (row.sizeBytes > limits.maxBytes) {
      throw fail(`The ${words.one} ${row.id} is larger than the limit of ${megabytes(limits.maxBytes)} for ${noun}.`, 'MEDIA_TOO_LARGE', row.id);
    }
    if (type !== 'IMAGE') {
      const maxSeconds = MAX_DURATION_SECONDS[target][type];
      if (row.durationSeconds !== null && row.durationSeconds > maxSeconds) {
        throw fail(`The ${words.one} ${row.id} is longer than the limit of ${minutes(maxSeconds)} for ${noun}.`, 'MEDIA_TOO_LONG', row.id);
      }
    }
    counts[type] += 1;
    if (counts[type] > limits.maxCount) {
      throw fail(`At most ${limits.maxCount} ${words.one}${limits.maxCount === 1 ? '' : 's'} allowed in ${noun}.`, 'MEDIA_COUNT_EXCEEDED', row.id);
    }
  }
  if (target === 'posts' && counts.VIDEO > 0 && counts.AUDIO > 0) {
    throw fail('A post may carry one video or one audio, not both.', 'MEDIA_COUNT_EXCEEDED');
  }
  return rows;
}

/**
 * Attaches checked media (the ids from `assertAttachable`, in its order) to their owner; `displayOrder` follows
 * the list. Only persists: the caller's transaction flushes.
 */
export function attachMedia(em: EntityManager, owner: { ownerType: MediaOwnerType; ownerId: string; mediaIds: string[] }): void {
  owner.mediaIds.forEach((mediaAssetId, displayOrder) => {
    em.persist(em.create(MediaAttachment, { mediaAssetId, ownerType: owner.ownerType, ownerId: owner.ownerId, displayOrder }));
  });
}

/**
 * The live media of many owners of one type, in display order (`owner_id`, `id`, `media_type`), from their ids
 * (`?`). One text per owner type, the type written in: with it as a parameter, PostgreSQL costed the named
 * statement's generic plan for an average owner type and planned every call again (0 generic plans of 50; the plan,
 * ~0.2 ms, was most of the lookup's ~0.27 ms of PostgreSQL CPU); with the literal it keeps one generic plan, the
 * same index scan of the owners' keys (bench/PROFILE.md, seventeenth pass).
 */
const LIVE_MEDIA_SQL = Object.fromEntries(
  MEDIA_OWNER_TYPES.map((ownerType) => [
    ownerType,
    `select a.owner_id, m.id, m.media_type
       from media_attachment a join media_asset m on m.id = a.media_asset_id and m.deleted_at_utc is null
      where a.owner_type = '${ownerType}' and a.owner_id = any(?::uuid[])
      order by a.owner_id, a.display_order`,
  ]),
) as Record<MediaOwnerType, string>;

export interface LiveMediaRow {
  owner_id: string;
  id: string;
  media_type: MediaType;
}

/** The lookup of `LIVE_MEDIA_SQL` for these owners (each once); run it named (`prepared`), as `liveMediaWith`'s callers do. */
export function liveMediaQuery(ownerType: MediaOwnerType, ownerIds: readonly string[]): SqlQuery {
  return { sql: LIVE_MEDIA_SQL[ownerType], params: [pgArray([...new Set(ownerIds)])] };
}

/**
 * The live media of many owners at once (a page), in display order, each as `as` makes it; every requested owner has
 * an entry. `run` executes `liveMediaQuery` named (the service's `liveMediaOf`, or a bench's pool).
 */
export async function liveMediaWith<T>(
  run: (query: SqlQuery) => Promise<LiveMediaRow[]>,
  ownerType: MediaOwnerType,
  ownerIds: readonly string[],
  as: (row: LiveMediaRow) => T,
): Promise<Map<string, T[]>> {
  const out = new Map<string, T[]>(ownerIds.map((id) => [id, []]));
  if (ownerIds.length === 0) return out;
  for (const row of await run(liveMediaQuery(ownerType, ownerIds))) out.get(row.owner_id)?.push(as(row));
  return out;
}

/** `liveMediaWith` on the request's source, the statement named. */
export function liveMediaOf<T>(
  source: HotReadSource,
  ownerType: MediaOwnerType,
  ownerIds: readonly string[],
  as: (row: LiveMediaRow) => T,
): Promise<Map<string, T[]>> {
  return liveMediaWith((query) => runHotRead<LiveMediaRow>(source, query, { prepared: true }), ownerType, ownerIds, as);
}

export const mediaUrlOfRow = (row: LiveMediaRow) => mediaUrl(row.id);

/** Media URLs of many owners at once (a page), in display order; every requested owner has an entry. */
export function mediaUrlsOf(source: HotReadSource, ownerType: MediaOwnerType, ownerIds: readonly string[]): Promise<Map<string, string[]>> {
  return liveMediaOf(source, ownerType, ownerIds, mediaUrlOfRow);
}

/**
 * Deleting content deletes its media: the attachments go and the assets are marked deleted (no longer served or
 * attachable) inside the caller's transaction; their bytes and rows are purged after commit by
 * `purgeDeletedMedia`. Returns how many assets were marked.
 */
export async function deleteMediaOf(em: EntityManager, ownerType: MediaOwnerType, ownerId: string): Promise<number> {
  const rows = await execSql<{ id: string }>(
    em,
    `with gone as (delete from media_attachment where owner_type = ? and owner_id = ? returning media_asset_id)
     update media_asset set deleted_at_utc = now() where id in (select media_asset_id from gone) and deleted_at_utc is null returning id`,
    [ownerType, ownerId],
  );
  return rows.length;
}
