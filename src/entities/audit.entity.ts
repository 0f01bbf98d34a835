import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';

/** Append-only trail of critical actions (permissions, decisions, reports, blocks, money). */
export const AuditEntry = defineEntity({
  name: 'AuditEntry',
  tableName: 'audit_entry',
  properties: {
    ...baseProperties,
    actorUserId: p.uuid().nullable(),
    action: p.string().length(100),
    subjectType: p.string().length(50),
    subjectId: p.string().length(100).nullable(),
    territoryId: p.uuid().nullable(),
    data: p.json<Record<string, unknown>>().default('{}'),
  },
  indexes: [{ properties: ['subjectType', 'subjectId'] }, { properties: ['actorUserId', 'createdAtUtc'] }],
});
