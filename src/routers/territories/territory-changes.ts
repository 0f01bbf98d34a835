/**
 * Changes to a territory that other domains cause (an approved voting adds a tag or switches a feature flag): the
 * territories domain owns the `territory` row, so they are written here and nowhere else.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, pgArray } from '../../db/sql.js';
import { TERRITORY_FEATURE_FLAGS, type TerritoryFeatureFlag } from '../../entities/territory.entity.js';

/** Adds a tag (trimmed, lower-case, like territory tags) unless present. */
export async function addTerritoryTag(em: EntityManager, territoryId: string, tag: string) {
  const normalized = tag.trim().toLowerCase();
  await execSql(em, `update territory set tags = array_append(tags, ?) where id = ? and not (? = any(tags))`, [normalized, territoryId, normalized]);
}

/** Enables or disables a flag, keeping the canonical order of TERRITORY_FEATURE_FLAGS. */
export async function setTerritoryFlag(em: EntityManager, territoryId: string, flag: TerritoryFeatureFlag, enable: boolean) {
  const [row] = await execSql<{ enabled_flags: string[] }>(em, 'select enabled_flags from territory where id = ? for update', [territoryId]);
  if (!row) return;
  const set = new Set(row.enabled_flags);
  if (enable) set.add(flag);
  else set.delete(flag);
  const flags = TERRITORY_FEATURE_FLAGS.filter((f) => set.has(f));
  await execSql(em, 'update territory set enabled_flags = ?::text[] where id = ?', [pgArray(flags), territoryId]);
}
