/** Reads of system settings for the domains that act on them (limits, windows, batch sizes). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';

/**
 * A numeric setting, or `fallback` when the key is missing or not a finite number (an unseeded database still
 * behaves as the defaults say). Read on every use: an admin's change applies to the next request.
 */
export async function readConfigNumber(em: EntityManager, key: string, fallback: number): Promise<number> {
  const rows = await execSql<{ value: string }>(em, 'select value from system_config where key = ?', [key]);
  const raw = rows[0]?.value;
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  return Number.isFinite(value) ? value : fallback;
}
