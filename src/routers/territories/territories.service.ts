import { type EntityManager, ForeignKeyConstraintViolationException, type InferEntity, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import type { z } from 'zod';
import { execSql, type HotReadSource, runHotRead, runSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { normalizeFeatureFlag, Territory, TERRITORY_FEATURE_FLAGS, type TerritoryFeatureFlag, type TerritoryStatus } from '../../entities/territory.entity.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { conflict, notFound, validationFailed } from '../../platform/problems.js';
import { type AuthUser, hasPermission, type PublicServiceContext, type ServiceContext } from '../../platform/service-context.js';
import { noTerritorySelected, requireTerritory } from '../../policy/territory-access.js';
import { createWorkItem } from '../work-items/work-items.service.js';
import type { adminCreateInput, NearbyTerritoryOutput, nearbyInput, suggestionInput, TerritoryOutput } from './territories.schemas.js';
import { nearbyQuery, type SearchFilter, searchCountQuery, searchTerritoryRows, territoryByIdQuery, type TerritoryRow } from './territories.queries.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

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

type ByIdRow = TerritoryRow & { suggested_by_user_id: string | null; enabled_flags: string[] };

/** Suggestions awaiting (or refused by) curation are seen only by their suggester and system admins. */
const HIDDEN_STATUSES: readonly string[] = ['PENDING', 'REJECTED'];

async function loadVisible(source: HotReadSource, user: AuthUser, id: string): Promise<ByIdRow> {
  const [row] = await runHotRead<ByIdRow>(source, territoryByIdQuery(id), { prepared: true });
  const visible = row && (!HIDDEN_STATUSES.includes(row.status) || row.suggested_by_user_id === user.id || hasPermission(user, 'SYSTEM_ADMIN'));
  if (!row || !visible) throw notFound('Territory');
  return row;
}

/** ACTIVE territories by name (stable paging); lists carry no membership data. */
export async function listActive(ctx: PublicServiceContext, input: { skip: number; take: number }) {
  return search(ctx, input);
}

export async function pageActive(ctx: PublicServiceContext, input: { pageNumber: number; pageSize: number }) {
  return searchPaged(ctx, input);
}

export async function search(ctx: PublicServiceContext, input: SearchFilter & { skip: number; take: number }) {
  const { skip, take, ...filter } = input;
  const rows = await searchTerritoryRows((query, options) => runHotRead<TerritoryRow>(ctx, query, options), { ...filter, offset: skip, limit: take });
  return rows.map(rowToOutput);
}

export async function searchPaged(ctx: PublicServiceContext, input: SearchFilter & { pageNumber: number; pageSize: number }) {
  const { pageNumber, pageSize, ...filter } = input;
  const { offset, limit } = pageOffset(pageNumber, pageSize);
  const [rows, count] = await Promise.all([
    searchTerritoryRows((query, options) => runHotRead<TerritoryRow>(ctx, query, options), { ...filter, offset, limit }),
    runHotRead<{ total: number }>(ctx, searchCountQuery(filter)),
  ]);
  return toPage(rows.map(rowToOutput), count[0]?.total ?? 0, pageNumber, pageSize);
}

export async function nearby(ctx: PublicServiceContext, input: z.infer<typeof nearbyInput>): Promise<NearbyTerritoryOutput[]> {
  const rows = await runHotRead<TerritoryRow & { distance_km: number }>(
    ctx,
    nearbyQuery({ lat: input.lat, lng: input.lng, radiusKm: input.radiusKm, limit: input.limit }),
    // A few statement texts (plain box, split or polar box), each planned once per connection: planning the two-scan
    // statement costs about as much as running it.
    { prepared: true },
  );
  return rows.map((r) => ({ ...rowToOutput(r), distanceKm: Math.round(r.distance_km * 1000) / 1000 }));
}

/** ACTIVE (and INACTIVE) territories to any signed-in user; PENDING/REJECTED only to the suggester and admins. */
export async function getById(ctx: ServiceContext, input: { id: string }) {
  return rowToOutput(await loadVisible(ctx, ctx.user, input.id));
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

export async function createActive(ctx: ServiceContext, input: z.infer<typeof adminCreateInput>) {
  const { em } = ctx;
  const actorId = ctx.user.id;
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
      audit(tx, { actorUserId: actorId, action: 'territory.created', subjectType: 'Territory', subjectId: territory.id, territoryId: territory.id });
      await tx.flush();
      return toTerritoryOutput(territory);
    }),
  );
}

/**
 * A signed-in user proposes a territory: it starts PENDING, with a TERRITORY_SUGGESTION work item for the system
 * admins, both in one transaction. A live (non-REJECTED) territory of the same name, city and state is a 409.
 */
export async function suggest(ctx: ServiceContext, input: z.infer<typeof suggestionInput>) {
  const { em } = ctx;
  const userId = ctx.user.id;
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
      createWorkItem(tx, {
        type: 'TERRITORY_SUGGESTION',
        territoryId: territory.id,
        subjectType: 'Territory',
        subjectId: territory.id,
        payload: { ...input, suggestedByUserId: userId },
        requiredPermission: 'SYSTEM_ADMIN',
        requiredCapability: null,
        createdByUserId: userId,
      });
      audit(tx, { actorUserId: userId, action: 'territory.suggested', subjectType: 'Territory', subjectId: territory.id, territoryId: territory.id });
      await tx.flush();
      return toTerritoryOutput(territory);
    }),
  );
}

// ---- Session selection (X-Session-Id) ----

const sessionRequired = () => validationFailed('X-Session-Id', 'the X-Session-Id header is required');

/** Selects an ACTIVE territory for the caller's session (one row per user and session, replaced on re-select). */
export async function selectTerritory(ctx: ServiceContext, input: { territoryId: string }) {
  const { em, sessionId } = ctx;
  const userId = ctx.user.id;
  if (!sessionId) throw sessionRequired();
  const { territoryId } = await requireTerritory(ctx, input.territoryId);
  const [row] = await runSql<ByIdRow>(em, territoryByIdQuery(territoryId));
  if (!row) throw notFound('Territory');
  try {
    await execSql(
      em,
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
  const [row] = await execSql<{ territory_id: string }>(em, 'select territory_id from territory_selection where user_id = ? and session_id = ?', [
    userId,
    sessionId,
  ]);
  return row?.territory_id ?? null;
}

export async function getSelection(ctx: ServiceContext) {
  const { em, sessionId } = ctx;
  const userId = ctx.user.id;
  if (!sessionId) throw sessionRequired();
  const territoryId = await selectedTerritoryId(em, userId, sessionId);
  const [row] = territoryId ? await runSql<ByIdRow>(em, territoryByIdQuery(territoryId)) : [];
  if (!territoryId || !row) throw noTerritorySelected();
  return { sessionId, territoryId, territory: rowToOutput(row) };
}

// ---- Feature flags ----

/** Canonical flags in the constant's order; anything unknown in storage is dropped. */
const canonicalFlags = (flags: readonly string[]): TerritoryFeatureFlag[] => {
  const set = new Set(flags.map(normalizeFeatureFlag));
  return TERRITORY_FEATURE_FLAGS.filter((f) => set.has(f));
};

export async function getFeatures(ctx: ServiceContext, input: { id: string }) {
  const row = await loadVisible(ctx, ctx.user, input.id);
  return { territoryId: row.id, enabledFlags: canonicalFlags(row.enabled_flags) };
}

/** Replaces the territory's flag set: CURATOR of the territory or SYSTEM_ADMIN. Audited with before and after. */
export async function updateFeatures(ctx: ServiceContext, input: { id: string; enabledFlags: TerritoryFeatureFlag[] }) {
  const { em, user } = ctx;
  const { id } = input;
  await requireTerritory(ctx, id, { as: 'CURATOR', status: 'VISIBLE' });
  const after = canonicalFlags(input.enabledFlags);
  await em.transactional(async (tx) => {
    const territory = await tx.findOneOrFail(Territory, { id });
    const before = canonicalFlags(territory.enabledFlags);
    territory.enabledFlags = after;
    audit(tx, {
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

/** Account deletion: the user's territory selections go. */
export const eraseTerritorySelections: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from territory_selection where user_id = ?', [userId]);
};
