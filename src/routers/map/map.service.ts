import type { EntityManager } from '@mikro-orm/postgresql';
import { AuditEntry } from '../../entities/audit.entity.js';
import { MapEntity, type MapEntityStatus, type MapEntityVisibility } from '../../entities/map.entity.js';
import { type MembershipRole, residencyVerificationOf, TerritoryMembership } from '../../entities/membership.entity.js';
import type { AuthUser } from '../../platform/service-context.js';
import { clock } from '../../platform/clock.js';
import { newId } from '../../platform/ids.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { forbidden, notFound } from '../../platform/problems.js';
import { requireTerritoryCapability } from '../../trpc/procedures.js';
import { blockedUserIdsOf } from '../blocks/blocks.service.js';
import { seesResidentsOnly } from '../feed/feed.service.js';
import { activeTerritory } from '../memberships/memberships.service.js';
import type { SqlQuery } from '../territories/territories.queries.js';
import { resolveTerritoryId } from '../territories/territories.service.js';
import {
  entityByIdQuery,
  entityCountQuery,
  entityListQuery,
  type MapEntityRow,
  type MapViewer,
  pinsCountQuery,
  pinsQuery,
  type PinRow,
} from './map.queries.js';
import { type CreateEntityInput, type MapEntityOutput, PIN_TYPES, type PinFilters, type PinOutput, type RelationOutput } from './map.schemas.js';

const run = <T>(em: EntityManager, query: SqlQuery) => em.getConnection().execute<T[]>(query.sql, query.params);

export function toEntityOutput(r: MapEntityRow): MapEntityOutput {
  return {
    id: r.id,
    territoryId: r.territory_id,
    name: r.name,
    category: r.category,
    latitude: r.latitude,
    longitude: r.longitude,
    visibility: r.visibility as MapEntityVisibility,
    status: r.status as MapEntityStatus,
    confirmationCount: r.confirmation_count,
    createdByUserId: r.created_by_user_id,
    createdAtUtc: r.created_at_utc,
  };
}

const toPinOutput = (r: PinRow): PinOutput => ({
  type: r.type,
  id: r.id,
  latitude: r.latitude,
  longitude: r.longitude,
  title: r.title,
  assetType: r.asset_type,
  assetSubtype: r.asset_subtype,
});

async function membershipOf(em: EntityManager, territoryId: string, userId: string) {
  return em.findOne(TerritoryMembership, { territoryId, userId });
}

async function roleIn(em: EntityManager, territoryId: string, userId: string): Promise<MembershipRole | null> {
  return (await membershipOf(em, territoryId, userId))?.role ?? null;
}

/**
 * The reader of a map listing: the territory (explicit, else the session's; 404 when unknown), whether they see
 * RESIDENTS_ONLY content (the feed's rule: residents, curators and moderators of that territory, system admins)
 * and whom they blocked.
 */
async function viewerOf(em: EntityManager, user: AuthUser, sessionId: string | null, explicitTerritoryId?: string): Promise<MapViewer> {
  const territoryId = await resolveTerritoryId(em, user.id, sessionId, explicitTerritoryId);
  const exists = await em.getConnection().execute('select 1 from territory where id = ?', [territoryId]);
  if (exists.length === 0) throw notFound('Territory');
  const [membership, blockedUserIds] = await Promise.all([membershipOf(em, territoryId, user.id), blockedUserIdsOf(em, user.id)]);
  return { territoryId, residentsOnlyVisible: seesResidentsOnly(user, membership), blockedUserIds };
}

// ---- Entities ----

export async function listEntities(em: EntityManager, user: AuthUser, sessionId: string | null, input: { territoryId?: string; skip: number; take: number }) {
  const viewer = await viewerOf(em, user, sessionId, input.territoryId);
  const rows = await run<MapEntityRow>(em, entityListQuery(viewer, input.skip, input.take));
  return rows.map(toEntityOutput);
}

export async function pageEntities(
  em: EntityManager,
  user: AuthUser,
  sessionId: string | null,
  input: { territoryId?: string; pageNumber: number; pageSize: number },
) {
  const viewer = await viewerOf(em, user, sessionId, input.territoryId);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const [rows, count] = await Promise.all([
    run<MapEntityRow>(em, entityListQuery(viewer, offset, limit)),
    run<{ total: number }>(em, entityCountQuery(viewer)),
  ]);
  return toPage(rows.map(toEntityOutput), count[0]?.total ?? 0, input.pageNumber, input.pageSize);
}

async function loadEntity(em: EntityManager, entityId: string): Promise<MapEntityOutput> {
  const [row] = await run<MapEntityRow>(em, entityByIdQuery(entityId));
  if (!row) throw notFound('Map entity');
  return toEntityOutput(row);
}

/** A member (VISITOR or RESIDENT) of an ACTIVE territory suggests an entity: it starts SUGGESTED. */
export async function suggestEntity(em: EntityManager, user: AuthUser, sessionId: string | null, input: CreateEntityInput): Promise<MapEntityOutput> {
  const territoryId = await resolveTerritoryId(em, user.id, sessionId, input.territoryId);
  await activeTerritory(em, territoryId);
  if (!(await roleIn(em, territoryId, user.id))) {
    throw forbidden('Only members (visitors or residents) of this territory can suggest map entities.', 'NOT_MEMBER');
  }
  const entity = em.create(MapEntity, {
    id: newId(),
    territoryId,
    createdByUserId: user.id,
    name: input.name,
    category: input.category,
    latitude: input.latitude,
    longitude: input.longitude,
    visibility: input.visibility,
    status: 'SUGGESTED',
    confirmationCount: 0,
    validatedAtUtc: null,
    validatedByUserId: null,
  });
  await em.flush();
  return loadEntity(em, entity.id);
}

/**
 * A curator of the entity's territory decides: true -> VALIDATED, false -> REJECTED (hidden from lists and pins).
 * Repeatable either way; every decision is audited.
 */
export async function validateEntity(em: EntityManager, user: AuthUser, entityId: string, validated: boolean): Promise<MapEntityOutput> {
  const entity = await em.findOne(MapEntity, { id: entityId });
  if (!entity) throw notFound('Map entity');
  await requireTerritoryCapability(em, user, entity.territoryId, ['CURATOR']);
  const previousStatus = entity.status;
  await em.transactional(async (tx) => {
    const status: MapEntityStatus = validated ? 'VALIDATED' : 'REJECTED';
    await tx.nativeUpdate(MapEntity, { id: entityId }, { status, validatedAtUtc: clock.now(), validatedByUserId: user.id });
    tx.create(AuditEntry, {
      actorUserId: user.id,
      action: 'map_entity.validated',
      subjectType: 'MapEntity',
      subjectId: entityId,
      territoryId: entity.territoryId,
      data: { validated, previousStatus, status },
    });
  });
  return loadEntity(em, entityId);
}

/**
 * An entity the user may act on: it exists in a listed status and the user may see it (a RESIDENTS_ONLY entity is
 * unknown to whoever the feed would not show RESIDENTS_ONLY content, except its creator; a REJECTED one to
 * everybody). Returns the user's membership of its territory.
 */
async function visibleEntityFor(em: EntityManager, user: AuthUser, entityId: string, territoryId?: string) {
  const [row] = await run<MapEntityRow>(em, entityByIdQuery(entityId));
  if (!row || (territoryId && row.territory_id !== territoryId) || row.status === 'REJECTED') throw notFound('Map entity');
  const membership = await membershipOf(em, row.territory_id, user.id);
  const hidden = row.visibility === 'RESIDENTS_ONLY' && row.created_by_user_id !== user.id && !seesResidentsOnly(user, membership);
  if (hidden) throw notFound('Map entity');
  return { row, membership };
}

/**
 * A member of the territory confirms an entity; counted once per user (repeating changes nothing). The entity
 * must belong to the given territory. `created` tells the first confirmation from a repeat.
 */
export async function confirmEntity(em: EntityManager, user: AuthUser, entityId: string, territoryId: string) {
  const { membership } = await visibleEntityFor(em, user, entityId, territoryId);
  if (!membership) throw forbidden('Only members (visitors or residents) of this territory can confirm map entities.', 'NOT_MEMBER');
  const created = await em.transactional(async (tx) => {
    // The insert and the counter change commit together; concurrent repeats insert (and count) once.
    const inserted = await tx.execute<{ entity_id: string }[]>(
      `insert into map_entity_confirmation (entity_id, user_id, created_at_utc) values (?, ?, ?)
       on conflict (entity_id, user_id) do nothing returning entity_id`,
      [entityId, user.id, clock.now()],
    );
    if (inserted.length === 0) return false;
    await tx.execute('update map_entity set confirmation_count = confirmation_count + 1 where id = ?', [entityId]);
    return true;
  });
  return { created, entity: await loadEntity(em, entityId) };
}

interface RelationDbRow {
  id: string;
  entity_id: string;
  user_id: string;
  created_at_utc: string;
}
const RELATION_COLUMNS = `id, entity_id, user_id, to_char(created_at_utc at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at_utc`;

/**
 * A verified resident (RESIDENT with a residency verification) of the entity's territory relates themselves to
 * it; one relation per user and entity, so a repeat answers the existing one (`created` false).
 */
export async function relateToEntity(em: EntityManager, user: AuthUser, entityId: string): Promise<{ created: boolean; relation: RelationOutput }> {
  const { membership } = await visibleEntityFor(em, user, entityId);
  if (!membership || membership.role !== 'RESIDENT' || residencyVerificationOf(membership) === 'NONE') {
    throw forbidden('Only verified residents of this territory can relate to map entities.', 'NOT_VERIFIED_RESIDENT');
  }
  const inserted = await em.execute<RelationDbRow[]>(
    `insert into map_entity_relation (id, created_at_utc, entity_id, user_id) values (?, ?, ?, ?)
     on conflict (entity_id, user_id) do nothing returning ${RELATION_COLUMNS}`,
    [newId(), clock.now(), entityId, user.id],
  );
  const [row] =
    inserted.length > 0
      ? inserted
      : await em.execute<RelationDbRow[]>(`select ${RELATION_COLUMNS} from map_entity_relation where entity_id = ? and user_id = ?`, [entityId, user.id]);
  if (!row) throw notFound('Map entity');
  return {
    created: inserted.length > 0,
    relation: { id: row.id, entityId: row.entity_id, userId: row.user_id, createdAtUtc: row.created_at_utc },
  };
}

// ---- Pins ----

type PinsInput = PinFilters & { territoryId?: string };

const pinFilter = (input: PinsInput) => ({
  types: input.types ?? PIN_TYPES,
  assetId: input.assetId,
  assetTypes: input.assetTypes,
  assetSubtypes: input.assetSubtypes,
});

export async function listPins(em: EntityManager, user: AuthUser, sessionId: string | null, input: PinsInput & { skip: number; take: number }) {
  const viewer = await viewerOf(em, user, sessionId, input.territoryId);
  const query = pinsQuery(viewer, pinFilter(input), input.skip, input.take);
  return query ? (await run<PinRow>(em, query)).map(toPinOutput) : [];
}

export async function pagePins(em: EntityManager, user: AuthUser, sessionId: string | null, input: PinsInput & { pageNumber: number; pageSize: number }) {
  const viewer = await viewerOf(em, user, sessionId, input.territoryId);
  const filter = pinFilter(input);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const query = pinsQuery(viewer, filter, offset, limit);
  const count = pinsCountQuery(viewer, filter);
  const [rows, total] = await Promise.all([
    query ? run<PinRow>(em, query) : Promise.resolve([]),
    count ? run<{ total: number }>(em, count) : Promise.resolve([{ total: 0 }]),
  ]);
  return toPage(rows.map(toPinOutput), total[0]?.total ?? 0, input.pageNumber, input.pageSize);
}
