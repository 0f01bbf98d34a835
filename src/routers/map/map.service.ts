import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, isoColumn, runHotRead, runSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { MapEntity, type MapEntityStatus, type MapEntityVisibility } from '../../entities/map.entity.js';
import { newId } from '../../platform/ids.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { forbidden, notFound } from '../../platform/problems.js';
import type { AuthUser, ServiceContext } from '../../platform/service-context.js';
import { requireTerritory, type TerritoryAccess } from '../../policy/territory-access.js';
import { seesAllHidden } from '../feed/feed.service.js';
import {
  entityByIdQuery,
  entityCountQuery,
  entityListQuery,
  type MapEntityRow,
  type MapViewer,
  pinCountsQuery,
  type PinCounts,
  pinsPageQuery,
  pinsQuery,
  type PinRow,
} from './map.queries.js';
import { type CreateEntityInput, type MapEntityOutput, PIN_TYPES, type PinFilters, type PinOutput, type RelationOutput } from './map.schemas.js';

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

/**
 * The reader of a map listing: the ACTIVE territory (explicit, else the session's), whether they see
 * RESIDENTS_ONLY content (the feed's rule 4: residents, curators and moderators of that territory, system admins),
 * whom they blocked, and, for the pins (`pins`: the listings that show posts), which HIDDEN posts they still see (the
 * feed's rule: their own; all of them for the territory's curators and moderators).
 */
async function viewerOf(ctx: ServiceContext, explicitTerritoryId: string | undefined, pins: boolean): Promise<{ viewer: MapViewer; access: TerritoryAccess }> {
  // Whether the caller has HIDDEN posts here is read with the access (a key probe), as the feed does: only then do
  // their statements carry the hidden posts' branches.
  const access = await requireTerritory(ctx, explicitTerritoryId, { ownHiddenPosts: pins });
  const viewer = { territoryId: access.territoryId, residentsOnlyVisible: access.seesResidentsOnly, blockedUserIds: access.blockedUserIds };
  if (!pins) return { viewer, access };
  return { viewer: { ...viewer, ...(access.hasOwnHiddenPosts ? { userId: ctx.user.id } : {}), seesAllHiddenPosts: seesAllHidden(access) }, access };
}

// ---- Entities ----

export async function listEntities(ctx: ServiceContext, input: { territoryId?: string; skip: number; take: number }) {
  const { viewer } = await viewerOf(ctx, input.territoryId, false);
  const rows = await runHotRead<MapEntityRow>(ctx, entityListQuery(viewer, input.skip, input.take));
  return rows.map(toEntityOutput);
}

export async function pageEntities(ctx: ServiceContext, input: { territoryId?: string; pageNumber: number; pageSize: number }) {
  const { viewer } = await viewerOf(ctx, input.territoryId, false);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const [rows, count] = await Promise.all([
    runHotRead<MapEntityRow>(ctx, entityListQuery(viewer, offset, limit)),
    // The pins' stored counts, prepared as theirs (pagePins).
    runHotRead<{ total: number }>(ctx, entityCountQuery(viewer), { prepared: true }),
  ]);
  return toPage(rows.map(toEntityOutput), count[0]?.total ?? 0, input.pageNumber, input.pageSize);
}

async function loadEntity(em: EntityManager, entityId: string): Promise<MapEntityOutput> {
  const [row] = await runSql<MapEntityRow>(em, entityByIdQuery(entityId));
  if (!row) throw notFound('Map entity');
  return toEntityOutput(row);
}

/** A member (VISITOR or RESIDENT) of an ACTIVE territory suggests an entity: it starts SUGGESTED. */
export async function suggestEntity(ctx: ServiceContext, input: CreateEntityInput): Promise<MapEntityOutput> {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, {
    as: 'member',
    denied: { message: 'Only members (visitors or residents) of this territory can suggest map entities.', code: 'NOT_MEMBER' },
  });
  const { em, user } = ctx;
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
export async function validateEntity(ctx: ServiceContext, input: { entityId: string; validated: boolean }): Promise<MapEntityOutput> {
  const { em, user } = ctx;
  const { entityId, validated } = input;
  const entity = await em.findOne(MapEntity, { id: entityId });
  if (!entity) throw notFound('Map entity');
  await requireTerritory(ctx, entity.territoryId, { as: 'CURATOR', status: 'ANY' });
  const previousStatus = entity.status;
  await em.transactional(async (tx) => {
    const status: MapEntityStatus = validated ? 'VALIDATED' : 'REJECTED';
    await tx.nativeUpdate(MapEntity, { id: entityId }, { status, validatedAtUtc: ctx.clock.now(), validatedByUserId: user.id });
    audit(tx, {
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
 * An entity the user may act on: it exists in a listed status and the user may see it as the map lists show it (a
 * RESIDENTS_ONLY entity is unknown to whoever the feed would not show RESIDENTS_ONLY content, except its creator; one
 * created by a user they blocked to them; a REJECTED one to everybody). Returns what the user is in its territory.
 * `lock` (inside a transaction) locks the entity's row first, so the status read stays true until the caller commits.
 */
async function visibleEntityFor(em: EntityManager, user: AuthUser, entityId: string, territoryId?: string, lock = false) {
  const [row] = await runSql<MapEntityRow>(em, entityByIdQuery(entityId, lock));
  if (!row || (territoryId && row.territory_id !== territoryId) || row.status === 'REJECTED') throw notFound('Map entity');
  const access = await requireTerritory({ em, user, sessionId: null }, row.territory_id, { status: 'ANY' });
  const hidden =
    (row.visibility === 'RESIDENTS_ONLY' && row.created_by_user_id !== user.id && !access.seesResidentsOnly) ||
    access.blockedUserIds.includes(row.created_by_user_id);
  if (hidden) throw notFound('Map entity');
  return { row, access };
}

/**
 * A member of the territory confirms an entity; counted once per user (repeating changes nothing). The entity
 * must belong to the given territory. `created` tells the first confirmation from a repeat.
 */
export async function confirmEntity(ctx: ServiceContext, input: { entityId: string; territoryId: string }) {
  const { em, user } = ctx;
  const { entityId } = input;
  const created = await em.transactional(async (tx) => {
    // Checked on the locked row: a rejection committing meanwhile is waited for and seen (404), never counted past.
    const { access } = await visibleEntityFor(tx, user, entityId, input.territoryId, true);
    if (!access.isMember) throw forbidden('Only members (visitors or residents) of this territory can confirm map entities.', 'NOT_MEMBER');
    // The insert and the counter change commit together; concurrent repeats insert (and count) once.
    const inserted = await execSql<{ entity_id: string }>(
      tx,
      `insert into map_entity_confirmation (entity_id, user_id, created_at_utc) values (?, ?, ?)
       on conflict (entity_id, user_id) do nothing returning entity_id`,
      [entityId, user.id, ctx.clock.now()],
    );
    if (inserted.length === 0) return false;
    await execSql(tx, 'update map_entity set confirmation_count = confirmation_count + 1 where id = ?', [entityId]);
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
const RELATION_COLUMNS = `id, entity_id, user_id, ${isoColumn('created_at_utc')} as created_at_utc`;

/**
 * A verified resident (RESIDENT with a residency verification) of the entity's territory relates themselves to
 * it; one relation per user and entity, so a repeat answers the existing one (`created` false).
 */
export async function relateToEntity(ctx: ServiceContext, input: { entityId: string }): Promise<{ created: boolean; relation: RelationOutput }> {
  const { em, user } = ctx;
  const { entityId } = input;
  const { access } = await visibleEntityFor(em, user, entityId);
  if (!access.isVerifiedResident) {
    throw forbidden('Only verified residents of this territory can relate to map entities.', 'NOT_VERIFIED_RESIDENT');
  }
  const inserted = await execSql<RelationDbRow>(
    em,
    `insert into map_entity_relation (id, created_at_utc, entity_id, user_id) values (?, ?, ?, ?)
     on conflict (entity_id, user_id) do nothing returning ${RELATION_COLUMNS}`,
    [newId(), ctx.clock.now(), entityId, user.id],
  );
  const [row] =
    inserted.length > 0
      ? inserted
      : await execSql<RelationDbRow>(em, `select ${RELATION_COLUMNS} from map_entity_relation where entity_id = ? and user_id = ?`, [entityId, user.id]);
  if (!row) throw notFound('Map entity');
  return {
    created: inserted.length > 0,
    relation: { id: row.id, entityId: row.entity_id, userId: row.user_id, createdAtUtc: row.created_at_utc },
  };
}

// ---- Pins ----

type PinsInput = PinFilters & { territoryId?: string };

/** The pins asked for; alert pins only where alerts are enabled (the spec: "alerts work only when enabled", AlertPosts). */
const pinFilter = (input: PinsInput, access: TerritoryAccess) => ({
  types: (input.types ?? PIN_TYPES).filter((type) => type !== 'alert' || access.hasFlag('ALERTPOSTS')),
  assetId: input.assetId,
  assetTypes: input.assetTypes,
  assetSubtypes: input.assetSubtypes,
});

export async function listPins(ctx: ServiceContext, input: PinsInput & { skip: number; take: number }) {
  const { viewer, access } = await viewerOf(ctx, input.territoryId, true);
  const query = pinsQuery(viewer, pinFilter(input, access), input.skip, input.take);
  return query ? (await runHotRead<PinRow>(ctx, query)).map(toPinOutput) : [];
}

/**
 * A page of pins with the exact total: the per-type counts first (stored counters, one prepared statement: the blocked
 * users, if any, are an InitPlan value, one text however many), which tell which types the page reaches and from
 * where, then just those slices.
 */
export async function pagePins(ctx: ServiceContext, input: PinsInput & { pageNumber: number; pageSize: number }) {
  const { viewer, access } = await viewerOf(ctx, input.territoryId, true);
  const filter = pinFilter(input, access);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const countsQuery = pinCountsQuery(viewer, filter);
  const [counts] = countsQuery ? await runHotRead<PinCounts>(ctx, countsQuery, { prepared: true }) : [];
  const total = Object.values(counts ?? {}).reduce((sum, n) => sum + n, 0);
  const query = counts ? pinsPageQuery(viewer, filter, counts, offset, limit) : null;
  const rows = query ? await runHotRead<PinRow>(ctx, query) : [];
  return toPage(rows.map(toPinOutput), total, input.pageNumber, input.pageSize);
}
