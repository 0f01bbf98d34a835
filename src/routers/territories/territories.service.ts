import {
  type EntityManager,
  ForeignKeyConstraintViolationException,
  type InferEntity,
  UniqueConstraintViolationException,
} from '@mikro-orm/postgresql';
import type { z } from 'zod';
import { AuditEntry } from '../../entities/audit.entity.js';
import {
  normalizeFeatureFlag,
  Territory,
  TERRITORY_FEATURE_FLAGS,
  type TerritoryFeatureFlag,
  type TerritoryStatus,
} from '../../entities/territory.entity.js';
import { WorkItem } from '../../entities/work-item.entity.js';
import type { AuthUser } from '../../platform/service-context.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { AppError, conflict, forbidden, notFound, validationFailed } from '../../platform/problems.js';
import { holdsCapability } from '../../trpc/procedures.js';
import { hasPermission } from '../../platform/service-context.js';
import type { adminCreateInput, NearbyTerritoryOutput, nearbyInput, suggestionInput, TerritoryOutput } from './territories.schemas.js';
import {
  nearbyQuery,
  type SearchFilter,
  searchCountQuery,
  searchQuery,
  type SqlQuery,
  territoryByIdQuery,
  type TerritoryRow,
} from './territories.queries.js';

type TerritoryEntity = InferEntity<typeof Territory>;

export function toTerritoryOutput(t: TerritoryEntity): TerritoryOutput {
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

export function rowToOutput(r: TerritoryRow): TerritoryOutput {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    city: r.city,
    state: r.state,
    latitude: r.latitude,
    longitude: r.longitude,
    radiusKm: r.radius_km,
    parentTerritoryId: r.parent_territory_id,
    status: r.status as TerritoryStatus,
    tags: r.tags,
    createdAtUtc: r.created_at_utc,
  };
}

const run = <T>(em: EntityManager, query: SqlQuery) => em.getConnection().execute<T[]>(query.sql, query.params);

type ByIdRow = TerritoryRow & { suggested_by_user_id: string | null; enabled_flags: string[] };

/** Suggestions awaiting (or refused by) curation are seen only by their suggester and system admins. */
const HIDDEN_STATUSES: readonly string[] = ['PENDING', 'REJECTED'];

async function loadVisible(em: EntityManager, user: AuthUser, id: string): Promise<ByIdRow> {
  const [row] = await run<ByIdRow>(em, territoryByIdQuery(id));
  const visible =
    row && (!HIDDEN_STATUSES.includes(row.status) || row.suggested_by_user_id === user.id || hasPermission(user, 'SYSTEM_ADMIN'));
  if (!row || !visible) throw notFound('Territory');
  return row;
}

/** ACTIVE territories by name (stable paging); lists carry no membership data. */
export async function listActive(em: EntityManager, skip: number, take: number) {
  return search(em, {}, skip, take);
}

export async function pageActive(em: EntityManager, pageNumber: number, pageSize: number) {
  return searchPaged(em, {}, pageNumber, pageSize);
}

export async function search(em: EntityManager, filter: SearchFilter, skip: number, take: number) {
  const rows = await run<TerritoryRow>(em, searchQuery({ ...filter, offset: skip, limit: take }));
  return rows.map(rowToOutput);
}

export async function searchPaged(em: EntityManager, filter: SearchFilter, pageNumber: number, pageSize: number) {
  const { offset, limit } = pageOffset(pageNumber, pageSize);
  const [rows, count] = await Promise.all([
    run<TerritoryRow>(em, searchQuery({ ...filter, offset, limit })),
    run<{ total: number }>(em, searchCountQuery(filter)),
  ]);
  return toPage(rows.map(rowToOutput), count[0]?.total ?? 0, pageNumber, pageSize);
}

export async function nearby(em: EntityManager, input: z.infer<typeof nearbyInput>): Promise<NearbyTerritoryOutput[]> {
  const rows = await run<TerritoryRow & { distance_km: number }>(
    em,
    nearbyQuery({ lat: input.lat, lng: input.lng, radiusKm: input.radiusKm, limit: input.limit }),
  );
  return rows.map((r) => ({ ...rowToOutput(r), distanceKm: Math.round(r.distance_km * 1000) / 1000 }));
}

/** ACTIVE (and INACTIVE) territories to any signed-in user; PENDING/REJECTED only to the suggester and admins. */
export async function getById(em: EntityManager, user: AuthUser, id: string) {
  return rowToOutput(await loadVisible(em, user, id));
}

const duplicate = () => conflict('A territory with this name, city and state already exists.', 'DUPLICATE_TERRITORY');

/** Flushes a new territory; the partial unique index on name + city + state turns a (racing) duplicate into a 409. */
async function insertingTerritory<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw duplicate();
    throw error;
  }
}

export async function createActive(em: EntityManager, actorId: string, input: z.infer<typeof adminCreateInput>) {
  if (input.parentTerritoryId && !(await em.findOne(Territory, { id: input.parentTerritoryId }))) throw notFound('Parent territory');
  return insertingTerritory(() =>
    em.transactional(async (tx) => {
      const territory = tx.create(Territory, {
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
      tx.create(AuditEntry, { actorUserId: actorId, action: 'territory.created', subjectType: 'Territory', subjectId: territory.id, territoryId: territory.id });
      await tx.flush();
      return toTerritoryOutput(territory);
    }),
  );
}

/**
 * A signed-in user proposes a territory: it starts PENDING, with a TERRITORY_SUGGESTION work item for the system
 * admins, both in one transaction. A live (non-REJECTED) territory of the same name, city and state is a 409.
 */
export async function suggest(em: EntityManager, userId: string, input: z.infer<typeof suggestionInput>) {
  return insertingTerritory(() =>
    em.transactional(async (tx) => {
      const territory = tx.create(Territory, {
        name: input.name,
        description: input.description,
        city: input.city,
        state: input.state,
        latitude: input.latitude,
        longitude: input.longitude,
        radiusKm: 5,
        parentTerritoryId: null,
        tags: [],
        status: 'PENDING',
        suggestedByUserId: userId,
      });
      tx.create(WorkItem, {
        type: 'TERRITORY_SUGGESTION',
        status: 'PENDING',
        territoryId: territory.id,
        subjectType: 'Territory',
        subjectId: territory.id,
        payload: { ...input, suggestedByUserId: userId },
        requiredPermission: 'SYSTEM_ADMIN',
        requiredCapability: null,
        createdByUserId: userId,
      });
      tx.create(AuditEntry, { actorUserId: userId, action: 'territory.suggested', subjectType: 'Territory', subjectId: territory.id, territoryId: territory.id });
      await tx.flush();
      return toTerritoryOutput(territory);
    }),
  );
}

const DECIDED_STATUS: Record<'APPROVED' | 'REJECTED' | 'NOACTION', TerritoryStatus> = {
  APPROVED: 'ACTIVE',
  REJECTED: 'REJECTED',
  NOACTION: 'PENDING',
};

/**
 * Applies an admin's decision on a TERRITORY_SUGGESTION work item: APPROVED activates the territory, REJECTED
 * rejects it, NOACTION leaves it PENDING. Meant to run inside the caller's transaction (it only mutates and flushes).
 */
export async function decideTerritorySuggestion(
  em: EntityManager,
  item: { subjectId: string },
  outcome: 'APPROVED' | 'REJECTED' | 'NOACTION',
  actorUserId: string,
): Promise<void> {
  const territory = await em.findOne(Territory, { id: item.subjectId });
  if (!territory) throw notFound('Territory');
  if (territory.status !== 'PENDING') throw conflict(`The territory is no longer pending (status ${territory.status}).`, 'TERRITORY_NOT_PENDING');
  const previous = territory.status;
  territory.status = DECIDED_STATUS[outcome];
  em.create(AuditEntry, {
    actorUserId,
    action: 'territory.suggestion.decided',
    subjectType: 'Territory',
    subjectId: territory.id,
    territoryId: territory.id,
    data: { outcome, previousStatus: previous, status: territory.status },
  });
  await em.flush();
}

// ---- Session selection (X-Session-Id) ----

const sessionRequired = () => validationFailed('X-Session-Id', 'the X-Session-Id header is required');
const noTerritorySelected = () => new AppError('NOT_FOUND', 'NO_TERRITORY_SELECTED', 'No territory selected.');

/** Selects an ACTIVE territory for the caller's session (one row per user and session, replaced on re-select). */
export async function selectTerritory(em: EntityManager, userId: string, sessionId: string | null, territoryId: string) {
  if (!sessionId) throw sessionRequired();
  const [row] = await run<ByIdRow>(em, territoryByIdQuery(territoryId));
  if (!row || row.status !== 'ACTIVE') throw notFound('Territory');
  try {
    await em.getConnection().execute(
      `insert into territory_selection (user_id, session_id, territory_id, updated_at_utc) values (?, ?, ?, now())
       on conflict (user_id, session_id) do update set territory_id = excluded.territory_id, updated_at_utc = excluded.updated_at_utc`,
      [userId, sessionId, territoryId],
    );
  } catch (error) {
    // The territory was deleted between the check and the write.
    if (error instanceof ForeignKeyConstraintViolationException) throw notFound('Territory');
    throw error;
  }
  return { sessionId, territoryId, territory: rowToOutput(row) };
}

async function selectedTerritoryId(em: EntityManager, userId: string, sessionId: string): Promise<string | null> {
  const [row] = await em
    .getConnection()
    .execute<{ territory_id: string }[]>('select territory_id from territory_selection where user_id = ? and session_id = ?', [userId, sessionId]);
  return row?.territory_id ?? null;
}

export async function getSelection(em: EntityManager, userId: string, sessionId: string | null) {
  if (!sessionId) throw sessionRequired();
  const territoryId = await selectedTerritoryId(em, userId, sessionId);
  const [row] = territoryId ? await run<ByIdRow>(em, territoryByIdQuery(territoryId)) : [];
  if (!territoryId || !row) throw noTerritorySelected();
  return { sessionId, territoryId, territory: rowToOutput(row) };
}

/**
 * The territory an operation applies to: an explicit id wins, else the session's selection (none: 404 "No territory
 * selected."); it must be ACTIVE (else 404). Callers still check the caller's access to it.
 */
export async function resolveTerritoryId(
  em: EntityManager,
  userId: string,
  sessionId: string | null | undefined,
  explicitTerritoryId?: string | null,
): Promise<string> {
  const territoryId = explicitTerritoryId ?? (sessionId ? await selectedTerritoryId(em, userId, sessionId) : null);
  if (!territoryId) throw noTerritorySelected();
  // Content lives in ACTIVE territories only: a PENDING or REJECTED one is not revealed through its content.
  const [active] = await em
    .getConnection()
    .execute<{ id: string }[]>(`select id from territory where id = ? and status = 'ACTIVE'`, [territoryId]);
  if (!active) throw notFound('Territory');
  return territoryId;
}

// ---- Feature flags ----

/** Canonical flags in the constant's order; anything unknown in storage is dropped. */
const canonicalFlags = (flags: readonly string[]): TerritoryFeatureFlag[] => {
  const set = new Set(flags.map(normalizeFeatureFlag));
  return TERRITORY_FEATURE_FLAGS.filter((f) => set.has(f));
};

export async function getFeatures(em: EntityManager, user: AuthUser, id: string) {
  const row = await loadVisible(em, user, id);
  return { territoryId: row.id, enabledFlags: canonicalFlags(row.enabled_flags) };
}

/** Replaces the territory's flag set: CURATOR of the territory or SYSTEM_ADMIN. Audited with before and after. */
export async function updateFeatures(em: EntityManager, user: AuthUser, id: string, flags: TerritoryFeatureFlag[]) {
  const after = canonicalFlags(flags);
  await em.transactional(async (tx) => {
    const territory = await tx.findOne(Territory, { id });
    if (!territory) throw notFound('Territory');
    if (!(await holdsCapability(tx, user, id, ['CURATOR']))) throw forbidden('This operation requires CURATOR in this territory.');
    const before = canonicalFlags(territory.enabledFlags);
    territory.enabledFlags = after;
    tx.create(AuditEntry, {
      actorUserId: user.id,
      action: 'territory.features.updated',
      subjectType: 'Territory',
      subjectId: id,
      territoryId: id,
      data: { before, after },
    });
  });
  return { territoryId: id, enabledFlags: after };
}
