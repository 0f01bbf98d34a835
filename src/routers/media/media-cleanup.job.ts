import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineJob } from '../../platform/job.js';
import type { Storage } from '../../platform/storage.js';
import { markAbandonedMedia, purgeDeletedMedia } from './media.service.js';

/**
 * Marks the media nobody attached within `Media:UnattachedRetentionHours` (an upload that never became part of a post,
 * event, item or message), then purges marked media in batches until none is left. Idempotent: purged rows are gone,
 * a re-run finds nothing.
 */
export async function runMediaCleanup(em: EntityManager, storage: Storage, now = new Date()) {
  await markAbandonedMedia(em, now);
  while ((await purgeDeletedMedia(em, storage)) > 0);
}

/** Removes the stored bytes of media marked deleted (deleting a post marks its media inside its transaction). */
export const mediaCleanupJob = defineJob({
  queue: 'media-cleanup',
  payload: z.object({}).strict(),
  schedule: '*/5 * * * *',
  handle: ({ em, storage, clock }) => runMediaCleanup(em, storage, clock.now()),
});
