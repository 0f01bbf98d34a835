import { execSql, isoValue } from '../../db/sql.js';
import { LockMode } from '@mikro-orm/postgresql';
import { audit } from '../../entities/audit.entity.js';
import { MEDIA_SECTIONS, type MediaSection, type MediaSectionOverrides, TerritoryMediaConfig } from '../../entities/media.entity.js';
import { badRequest, type FieldError } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { GLOBAL_MEDIA_CONFIG, type MediaConfigField } from './media-config.defaults.js';
import { type ConfigRow, effective, mediaConfigRow } from './media-config.queries.js';
import type { MediaConfigOutput, MediaConfigSectionInput, UpdateMediaConfigInput } from './media-config.schemas.js';

function toOutput(territoryId: string, row: ConfigRow | null): MediaConfigOutput {
  return { territoryId, ...effective(row), updatedAtUtc: isoValue(row?.updatedAtUtc) };
}

/** Any authenticated user reads a territory's effective configuration (clients check files before uploading). */
export async function getMediaConfig(ctx: ServiceContext, input: { territoryId: string }): Promise<MediaConfigOutput> {
  const { territoryId } = input;
  await requireTerritory(ctx, territoryId, { status: 'VISIBLE' });
  return toOutput(territoryId, await mediaConfigRow(ctx, territoryId));
}

/** A value above the global one (a number, enabling what is globally off, a MIME type outside the global list). */
function aboveGlobal(section: MediaSection, field: MediaConfigField, value: boolean | number | string[]): string | null {
  const global = GLOBAL_MEDIA_CONFIG[section][field];
  if (typeof value === 'boolean') return value && global === false ? 'cannot be enabled: the global configuration disables it' : null;
  if (typeof value === 'number') return value > (global as number) ? `must not exceed the global limit of ${global as number}` : null;
  const outside = value.filter((mime) => !(global as string[]).includes(mime));
  if (outside.length === 0) return null;
  const allowed = (global as string[]).length ? (global as string[]).join(', ') : 'none';
  return `${outside.join(', ')} not allowed by the global configuration (allowed: ${allowed})`;
}

/** The section's stored overrides after a PUT: values set, `null` removed, absent fields kept. */
function mergeSection(stored: MediaSectionOverrides, input: MediaConfigSectionInput): MediaSectionOverrides {
  const next: MediaSectionOverrides = { ...stored };
  for (const [field, value] of Object.entries(input) as [MediaConfigField, boolean | number | string[] | null | undefined][]) {
    if (value === undefined) continue;
    if (value === null) delete next[field];
    else next[field] = Array.isArray(value) ? [...new Set(value)] : value;
  }
  return next;
}

/**
 * A curator (or SYSTEM_ADMIN) tightens the territory's limits; the procedure (`territoryProcedure('CURATOR')`) has
 * checked the territory and the capability. Partial: only the sections and fields sent change. Anything above the
 * global limits is a 400 naming each field, and nothing is written. Audited with before/after.
 */
export async function updateMediaConfig(ctx: ServiceContext, input: UpdateMediaConfigInput): Promise<MediaConfigOutput> {
  const { em, user } = ctx;
  const { territoryId } = input;

  const errors: FieldError[] = [];
  for (const section of MEDIA_SECTIONS) {
    for (const [field, value] of Object.entries(input[section] ?? {}) as [MediaConfigField, boolean | number | string[] | null | undefined][]) {
      if (value === undefined || value === null) continue;
      const message = aboveGlobal(section, field, value);
      if (message) errors.push({ field: `${section}.${field}`, message });
    }
  }
  if (errors.length > 0) {
    throw badRequest('Territorial media limits may not exceed the global limits.', 'VALIDATION_FAILED', errors);
  }

  const row = await em.transactional(async (tx) => {
    // Create-if-missing then lock: concurrent partial PUTs of different fields both apply.
    await execSql(
      tx,
      `insert into territory_media_config (territory_id, posts, events, marketplace, chat, created_at_utc, updated_at_utc)
       values (?, '{}', '{}', '{}', '{}', now(), now()) on conflict (territory_id) do nothing`,
      [territoryId],
    );
    const config = await tx.findOneOrFail(TerritoryMediaConfig, { territoryId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const before = Object.fromEntries(MEDIA_SECTIONS.map((s) => [s, config[s]]));
    for (const section of MEDIA_SECTIONS) {
      const sectionInput = input[section];
      if (sectionInput) config[section] = mergeSection(config[section], sectionInput);
    }
    config.updatedByUserId = user.id;
    config.updatedAtUtc = new Date();
    audit(tx, {
      actorUserId: user.id,
      action: 'territory.media_config.updated',
      subjectType: 'Territory',
      subjectId: territoryId,
      territoryId,
      data: { before, after: Object.fromEntries(MEDIA_SECTIONS.map((s) => [s, config[s]])) },
    });
    return config;
  });
  return toOutput(territoryId, row);
}
