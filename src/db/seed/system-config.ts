import type { EntityManager } from '@mikro-orm/postgresql';
import { SYSTEM_CONFIG_DEFAULTS } from '../../routers/system-config/system-config.defaults.js';

/**
 * Inserts the settings the code reads when they are missing. Idempotent and safe to run on every start by
 * several processes at once; a value an operator changed is never overwritten.
 */
export async function seedSystemConfig(em: EntityManager): Promise<void> {
  for (const d of SYSTEM_CONFIG_DEFAULTS) {
    await em.execute(
      `insert into system_config (key, value, category, description, created_at_utc, updated_at_utc, updated_by_user_id)
       values (?, ?, ?, ?, now(), now(), null)
       on conflict (key) do nothing`,
      [d.key, d.value, d.category, d.description],
    );
  }
}
