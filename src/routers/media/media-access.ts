import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import type { MediaOwnerType } from '../../entities/media.entity.js';
import { notFound } from '../../platform/problems.js';
import type { AuthUser, ServiceContext } from '../../platform/service-context.js';
import { findLiveMedia } from './media.service.js';

/** Whether the viewer may see the content (post, event...) with this id: the owning domain's own rule. */
export type MediaReader = (em: EntityManager, viewer: AuthUser, ownerId: string) => Promise<boolean>;

/**
 * The rule of each kind of content that shows media, registered by its domain in the composition root
 * (src/routers/index.ts), so media depends on none of them.
 */
const readers = new Map<MediaOwnerType, MediaReader>();

export function registerMediaReaders(table: Partial<Record<MediaOwnerType, MediaReader>>) {
  for (const [ownerType, reader] of Object.entries(table) as [MediaOwnerType, MediaReader][]) readers.set(ownerType, reader);
}

/**
 * Rule 4 for media: a file is as visible as the content showing it. The uploader always sees their media; media
 * attached to content follows that content's rule (posts: the feed's visibility; events: the event's); media not
 * attached yet, or attached to content with no reader (items and chat messages so far), is the uploader's alone.
 */
export async function canSeeMedia(em: EntityManager, viewer: AuthUser, asset: { id: string; uploadedByUserId: string }): Promise<boolean> {
  if (asset.uploadedByUserId === viewer.id) return true;
  const [owner] = await execSql<{ owner_type: MediaOwnerType; owner_id: string }>(
    em,
    'select owner_type, owner_id from media_attachment where media_asset_id = ?',
    [asset.id],
  );
  const reader = owner ? readers.get(owner.owner_type) : undefined;
  return reader ? reader(em, viewer, owner!.owner_id) : false;
}

/**
 * The asset and its bytes for streaming to the viewer. Media the viewer may not see answers the same 404 as unknown
 * media, so its existence is not revealed; a missing file is a 404 too.
 */
export async function openMediaFor(ctx: ServiceContext, input: { id: string }) {
  const asset = await findLiveMedia(ctx.em, input.id);
  if (!(await canSeeMedia(ctx.em, ctx.user, asset))) throw notFound('Media');
  const file = await ctx.storage.open(asset.storageKey);
  if (!file) throw notFound('Media file');
  return { asset, file };
}
