/** A territory's effective media configuration, read by the media attachment rules of every content type. */
import type { InferEntity } from '@mikro-orm/postgresql';
import { type HotReadSource, isoColumn, runHotRead } from '../../db/sql.js';
import { MEDIA_SECTIONS, type TerritoryMediaConfig, type MediaSection, type MediaSectionOverrides } from '../../entities/media.entity.js';
import { BOOLEAN_FIELDS, GLOBAL_MEDIA_CONFIG, LIST_FIELDS, NUMBER_FIELDS, type MediaSectionConfig } from './media-config.defaults.js';

export type EffectiveMediaConfig = Record<MediaSection, MediaSectionConfig>;

/** The stored configuration as the entity holds it, or as read in SQL (`updatedAtUtc` then an ISO 8601 string). */
export type ConfigRow = Pick<InferEntity<typeof TerritoryMediaConfig>, MediaSection> & { updatedAtUtc: Date | string };

/**
 * One section's effective values. A stored value never loosens the global one, even if the global limits were
 * lowered after it was saved: booleans AND, numbers take the minimum, lists intersect.
 */
function effectiveSection(section: MediaSection, overrides: MediaSectionOverrides | undefined): MediaSectionConfig {
  const global = GLOBAL_MEDIA_CONFIG[section];
  const out: MediaSectionConfig = { ...global };
  for (const field of BOOLEAN_FIELDS) {
    const value = overrides?.[field];
    if (typeof value === 'boolean') out[field] = global[field] && value;
  }
  for (const field of NUMBER_FIELDS) {
    const value = overrides?.[field];
    if (typeof value === 'number') out[field] = Math.min(global[field], value);
  }
  for (const field of LIST_FIELDS) {
    const value = overrides?.[field];
    if (Array.isArray(value)) out[field] = global[field].filter((mime) => value.includes(mime));
  }
  return out;
}

export function effective(row: ConfigRow | null): EffectiveMediaConfig {
  return Object.fromEntries(MEDIA_SECTIONS.map((s) => [s, effectiveSection(s, row?.[s])])) as EffectiveMediaConfig;
}

/**
 * The territory's stored configuration, null when it never configured anything (a key lookup: prepared on the pool,
 * or inside the caller's transaction). Columns under the entity's property names, so one output mapping serves both.
 */
export async function mediaConfigRow(source: HotReadSource, territoryId: string): Promise<ConfigRow | null> {
  const [row] = await runHotRead<ConfigRow>(
    source,
    {
      sql: `select posts, events, marketplace, chat, ${isoColumn('updated_at_utc')} as "updatedAtUtc" from territory_media_config where territory_id = ?::uuid`,
      params: [territoryId],
    },
    { prepared: true },
  );
  return row ?? null;
}

/** The effective media configuration of a territory (no access check: attachment rules read it). */
export async function effectiveMediaConfig(source: HotReadSource, territoryId: string): Promise<EffectiveMediaConfig> {
  return effective(await mediaConfigRow(source, territoryId));
}
