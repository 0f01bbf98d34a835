import type { EntityManager } from '@mikro-orm/postgresql';
import type { Storage } from '../platform/storage.js';
import { purgeDeletedMedia } from '../routers/media/media.service.js';

/** Purges marked media in batches until none is left. Idempotent: purged rows are gone, a re-run finds nothing. */
export async function runMediaCleanup(em: EntityManager, storage: Storage) {
  while ((await purgeDeletedMedia(em, storage)) > 0);
}
