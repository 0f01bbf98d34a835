import type { EntityManager } from '@mikro-orm/postgresql';
import type { MediaOwnerType } from '../../entities/media.entity.js';
import type { AuthUser } from '../../platform/service-context.js';
import { notFound } from '../../platform/problems.js';
import type { Storage } from '../../platform/storage.js';
import { blockedUserIdsOf } from '../blocks/blocks.service.js';
import { canSeePost } from '../feed/feed.service.js';
import { findLiveMedia } from './media.service.js';

/** Events are public to every signed-in user; the caller only loses those of users they blocked. */
async function canSeeEvent(em: EntityManager, viewer: AuthUser, eventId: string): Promise<boolean> {
  const [event] = await em.execute<{ created_by_user_id: string }[]>('select created_by_user_id from event where id = ?', [eventId]);
  return event !== undefined && !(await blockedUserIdsOf(em, viewer.id)).includes(event.created_by_user_id);
}

/**
 * Rule 4 for media: a file is as visible as the content showing it. The uploader always sees their media; media of a
 * post follows the feed's post visibility, media of an event the event's; media not attached yet is the uploader's
 * alone. Items and chat messages have no reader rule here yet, so their media stays with the uploader.
 */
export async function canSeeMedia(em: EntityManager, viewer: AuthUser, asset: { id: string; uploadedByUserId: string }): Promise<boolean> {
  if (asset.uploadedByUserId === viewer.id) return true;
  const [owner] = await em.execute<{ owner_type: MediaOwnerType; owner_id: string }[]>(
    'select owner_type, owner_id from media_attachment where media_asset_id = ?',
    [asset.id],
  );
  if (!owner) return false;
  if (owner.owner_type === 'POST') return canSeePost(em, viewer, owner.owner_id);
  if (owner.owner_type === 'EVENT') return canSeeEvent(em, viewer, owner.owner_id);
  return false;
}

/**
 * The asset and its bytes for streaming to the viewer. Media the viewer may not see answers the same 404 as unknown
 * media, so its existence is not revealed; a missing file is a 404 too.
 */
export async function openMediaFor(em: EntityManager, storage: Storage, viewer: AuthUser, id: string) {
  const asset = await findLiveMedia(em, id);
  if (!(await canSeeMedia(em, viewer, asset))) throw notFound('Media');
  const file = await storage.open(asset.storageKey);
  if (!file) throw notFound('Media file');
  return { asset, file };
}
