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
    /** The client application (journeys API, v2) the action came through; null for v1 calls and jobs. */
    clientApplicationId: p.uuid().nullable(),
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
 * The client application a call acts through travels on the call's EntityManager, in MikroORM's logger context:
 * every fork and transaction of it inherits that context, so `audit(tx, ...)` deep inside any service knows the
 * client without each service passing it on, and the SQL log lines of the call carry it too. Set it once, on the
 * request's own fork, before any transaction starts.
 */
export function setActingClient(em: EntityManager, clientApplicationId: string): void {
  em.setLoggerContext({ ...em.getLoggerContext(), clientApplicationId });
}

/** The client application the call of this EntityManager acts through (see `setActingClient`), if any. */
export function actingClientOf(em: EntityManager): string | null {
  const value = em.getLoggerContext().clientApplicationId;
  return typeof value === 'string' ? value : null;
}

/**
 * The one writer of the audit trail: persisted with the caller's unit of work, so the entry commits (or rolls
 * back) with the action it records. Pass the transaction's EntityManager inside `em.transactional`. The entry
 * records the client application the call came through (`setActingClient`), when there is one.
 */
export function audit(em: EntityManager, record: AuditRecord): void {
  em.create(AuditEntry, {
    actorUserId: record.actorUserId,
    action: record.action,
    subjectType: record.subjectType,
    subjectId: record.subjectId ?? null,
    territoryId: record.territoryId ?? null,
    data: record.data ?? {},
    clientApplicationId: actingClientOf(em),
  });
}
