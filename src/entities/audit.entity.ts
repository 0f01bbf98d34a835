import { defineEntity, type EntityManager, p } from '@mikro-orm/postgresql';
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

export interface AuditRecord {
  /** Who acted; null for the system (jobs, automatic sanctions). */
  actorUserId: string | null;
  /** `<subject>.<verb>` in the past tense, e.g. `territory.features.updated`. */
  action: string;
  subjectType: string;
  subjectId?: string | null;
  territoryId?: string | null;
  data?: Record<string, unknown>;
}

/**
 * The one writer of the audit trail: persisted with the caller's unit of work, so the entry commits (or rolls
 * back) with the action it records. Pass the transaction's EntityManager inside `em.transactional`.
 */
export function audit(em: EntityManager, record: AuditRecord): void {
  em.create(AuditEntry, {
    actorUserId: record.actorUserId,
    action: record.action,
    subjectType: record.subjectType,
    subjectId: record.subjectId ?? null,
    territoryId: record.territoryId ?? null,
    data: record.data ?? {},
  });
}
