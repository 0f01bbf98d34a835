import { execSql } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { audit } from '../../entities/audit.entity.js';
import { SystemConfig } from '../../entities/system-config.entity.js';
import { notFound, validationFailed } from '../../platform/problems.js';
import { knownConfigKey } from './system-config.defaults.js';
import type { PutInput, SystemConfigOutput } from './system-config.schemas.js';

interface ConfigRow {
  key: string;
  value: string;
  category?: string | null;
  description?: string | null;
  updatedAtUtc: Date;
  updatedByUserId?: string | null;
}

function toOutput(row: ConfigRow): SystemConfigOutput {
  return {
    key: row.key,
    value: row.value,
    category: row.category ?? null,
    description: row.description ?? null,
    updatedAtUtc: new Date(row.updatedAtUtc).toISOString(),
    updatedByUserId: row.updatedByUserId ?? null,
  };
}

export async function listEntries(ctx: ServiceContext) {
  const { em } = ctx;
  const rows = await em.find(SystemConfig, {}, { orderBy: { key: 'asc' } });
  return rows.map(toOutput);
}

export async function getEntry(ctx: ServiceContext, input: { key: string }) {
  const { em } = ctx;
  const { key } = input;
  const row = await em.findOne(SystemConfig, { key });
  if (!row) throw notFound('System configuration key');
  return toOutput(row);
}

/** Settings the code reads must stay whole numbers within their range, or the code would fall back silently. */
function validateValue(input: PutInput) {
  const known = knownConfigKey(input.key);
  if (!known) return;
  const { min, max } = known.integer;
  const valid = /^\d+$/.test(input.value) && Number(input.value) >= min && Number(input.value) <= max;
  if (!valid) throw validationFailed('value', `${input.key} must be an integer from ${min} to ${max}`);
}

/** Creates or replaces one setting; audited with the previous value. */
export async function putEntry(ctx: ServiceContext, input: PutInput) {
  const { em } = ctx;
  const actorId = ctx.user.id;
  validateValue(input);
  return em.transactional(async (tx) => {
    const previous = await execSql<{ value: string }>(tx, 'select value from system_config where key = ? for update', [input.key]);
    // One statement, so two admins creating the same key at once both succeed (the later write wins).
    const rows = await execSql<{
      key: string;
      value: string;
      category: string | null;
      description: string | null;
      updated_at_utc: Date;
      updated_by_user_id: string | null;
    }>(
      tx,
      `insert into system_config (key, value, category, description, created_at_utc, updated_at_utc, updated_by_user_id)
       values (?, ?, ?, ?, now(), now(), ?)
       on conflict (key) do update set
         value = excluded.value,
         category = coalesce(excluded.category, system_config.category),
         description = coalesce(excluded.description, system_config.description),
         updated_at_utc = excluded.updated_at_utc,
         updated_by_user_id = excluded.updated_by_user_id
       returning key, value, category, description, updated_at_utc, updated_by_user_id`,
      [input.key, input.value, input.category, input.description, actorId],
    );
    const row = rows[0];
    if (!row) throw new Error('system_config upsert returned no row');
    audit(tx, {
      actorUserId: actorId,
      action: 'system-config.updated',
      subjectType: 'SystemConfig',
      subjectId: input.key.slice(0, 100),
      data: { key: input.key, previousValue: previous[0]?.value ?? null, value: input.value },
    });
    await tx.flush();
    return toOutput({ ...row, updatedAtUtc: row.updated_at_utc, updatedByUserId: row.updated_by_user_id });
  });
}
