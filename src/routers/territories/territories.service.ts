import type { EntityManager, InferEntity } from '@mikro-orm/postgresql';
import { AuditEntry } from '../../entities/audit.entity.js';
import { Territory } from '../../entities/territory.entity.js';
import { notFound } from '../../platform/problems.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import type { z } from 'zod';
import type { adminCreateInput, TerritoryOutput } from './territories.schemas.js';

type TerritoryRow = InferEntity<typeof Territory>;

export function toTerritoryOutput(t: TerritoryRow): TerritoryOutput {
  return {
    id: t.id,
    name: t.name,
    description: t.description ?? null,
    city: t.city,
    state: t.state,
    latitude: t.latitude,
    longitude: t.longitude,
    radiusKm: t.radiusKm,
    parentTerritoryId: t.parentTerritoryId ?? null,
    status: t.status,
    tags: t.tags,
    createdAtUtc: t.createdAtUtc.toISOString(),
  };
}

/** ACTIVE territories only, oldest first (stable paging); lists carry no membership data. */
export async function listActive(em: EntityManager, skip: number, take: number) {
  const rows = await em.find(Territory, { status: 'ACTIVE' }, { orderBy: { name: 'asc', id: 'asc' }, offset: skip, limit: take });
  return rows.map(toTerritoryOutput);
}

export async function pageActive(em: EntityManager, pageNumber: number, pageSize: number) {
  const { offset, limit } = pageOffset(pageNumber, pageSize);
  const [rows, total] = await em.findAndCount(Territory, { status: 'ACTIVE' }, { orderBy: { name: 'asc', id: 'asc' }, offset, limit });
  return toPage(rows.map(toTerritoryOutput), total, pageNumber, pageSize);
}

export async function getById(em: EntityManager, id: string) {
  const territory = await em.findOne(Territory, { id });
  if (!territory) throw notFound('Territory');
  return toTerritoryOutput(territory);
}

export async function createActive(em: EntityManager, actorId: string, input: z.infer<typeof adminCreateInput>) {
  if (input.parentTerritoryId && !(await em.findOne(Territory, { id: input.parentTerritoryId }))) throw notFound('Parent territory');
  const territory = em.create(Territory, {
    name: input.name,
    description: input.description,
    city: input.city,
    state: input.state,
    latitude: input.latitude,
    longitude: input.longitude,
    radiusKm: input.radiusKm,
    parentTerritoryId: input.parentTerritoryId ?? null,
    tags: [...new Set(input.tags)],
    status: 'ACTIVE',
  });
  em.create(AuditEntry, { actorUserId: actorId, action: 'territory.created', subjectType: 'Territory', subjectId: territory.id, territoryId: territory.id });
  await em.flush();
  return toTerritoryOutput(territory);
}
