import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineJob } from '../../platform/job.js';
import type { Storage } from '../../platform/storage.js';
import { purgeDeletedMedia } from './media.service.js';

/** Purges marked media in batches until none is left. Idempotent: purged rows are gone, a re-run finds nothing. */
export async function runMediaCleanup(em: EntityManager, storage: Storage) {
  while ((await purgeDeletedMedia(em, storage)) > 0);
}

/** Removes the stored bytes of media marked deleted (deleting a post marks its media inside its transaction). */
export const mediaCleanupJob = defineJob({
  queue: 'media-cleanup',
  payload: z.object({}).strict(),
  schedule: '*/5 * * * *',
  handle: ({ em, storage }) => runMediaCleanup(em, storage),
});
