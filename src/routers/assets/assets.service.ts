import { type EntityManager, type InferEntity, LockMode } from '@mikro-orm/postgresql';
import { execSql, type HotReadSource, isoValue, runHotRead } from '../../db/sql.js';
import { type AssetStatus, NATURAL_ASSET_TYPE, TerritoryAsset } from '../../entities/asset.entity.js';
import { audit } from '../../entities/audit.entity.js';
import { newId } from '../../platform/ids.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { conflict, forbidden, notFound, validationFailed } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory, type RequireTerritoryOptions } from '../../policy/territory-access.js';
import { residentCountsQuery } from '../memberships/memberships.queries.js';
import { cancelPendingWorkItems, completeWorkItem, createWorkItem, findPendingWorkItem } from '../work-items/work-items.service.js';
import { applyAssetCuration, assetNotSuggested } from './asset-curation.js';
import { assetByIdQuery, assetCountQuery, type AssetFacts, assetListQuery, type AssetListWhere, residentValidationsQuery } from './assets.queries.js';
import { type AssetListFilter, type AssetOutput, type CreateAssetInput, SUBTYPE_ONLY_FOR_NATURAL, type UpdateAssetInput } from './assets.schemas.js';

type AssetRow = InferEntity<typeof TerritoryAsset>;

/** Assets listed when no status is asked for: the live ones. */
const DEFAULT_LISTED: AssetStatus[] = ['Suggested', 'Active'];
/** Members validate assets that are awaiting curation or in use. */
const VALIDATABLE: AssetStatus[] = ['Suggested', 'Active'];

/**
 * Who may create assets and natural assets: a verified resident (RESIDENT with a residency verification) or a
 * curator of the territory (SYSTEM_ADMIN holds every capability); anyone else 403.
 */
export const verifiedResidentOrCurator = (what: string): RequireTerritoryOptions => ({
  as: ['verifiedResident', 'CURATOR'],
  denied: { message: `Only verified residents or curators of this territory can ${what}.`, code: 'NOT_VERIFIED_RESIDENT' },
});

/** Per asset, how many of its validations come from current residents of its territory. */
async function residentValidations(source: HotReadSource, assetIds: string[]): Promise<Map<string, number>> {
  if (assetIds.length === 0) return new Map();
  const rows = await runHotRead<{ asset_id: string; n: number }>(source, residentValidationsQuery(assetIds));
  return new Map(rows.map((r) => [r.asset_id, r.n]));
}

async function residentCounts(source: HotReadSource, territoryIds: string[]): Promise<Map<string, number>> {
  if (territoryIds.length === 0) return new Map();
  const rows = await runHotRead<{ territory_id: string; n: number }>(source, residentCountsQuery(territoryIds));
  return new Map(rows.map((r) => [r.territory_id, r.n]));
}

const percentage = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((Math.min(part, whole) / whole) * 10000) / 100);

/**
 * Entities or rows to outputs, with the validation percentages of all of them read in two queries (a GET gives the
 * context, so they run on the pool without forking its manager).
 */
async function toOutputs(source: HotReadSource, assets: (AssetRow | AssetFacts)[]): Promise<AssetOutput[]> {
  const [validations, residents] = await Promise.all([
    residentValidations(
      source,
      assets.map((a) => a.id),
    ),
    residentCounts(
      source,
      assets.map((a) => a.territoryId),
    ),
  ]);
  return assets.map((a) => ({
    id: a.id,
    territoryId: a.territoryId,
    type: a.type,
    subtype: a.subtype ?? null,
    name: a.name,
    description: a.description ?? null,
    geoAnchors: a.geoAnchors.map((g) => ({ latitude: g.latitude, longitude: g.longitude })),
    status: a.status,
    createdByUserId: a.createdByUserId,
    validationCount: a.validationCount,
    validationPercentage: percentage(validations.get(a.id) ?? 0, residents.get(a.territoryId) ?? 0),
    createdAtUtc: isoValue(a.createdAtUtc)!,
    updatedAtUtc: isoValue(a.updatedAtUtc)!,
  }));
}

async function toOutput(source: HotReadSource, asset: AssetRow | AssetFacts): Promise<AssetOutput> {
  const [out] = await toOutputs(source, [asset]);
  return out!;
}

async function loadAsset(em: EntityManager, assetId: string, refresh = false): Promise<AssetRow> {
  const asset = await em.findOne(TerritoryAsset, { id: assetId }, { refresh });
  if (!asset) throw notFound('Asset');
  return asset;
}

/**
 * A verified resident or curator proposes an asset: it starts Suggested, with an ASSET_CURATION work item in the
 * territory's queue for its curators, both in one transaction.
 */
export async function createAsset(ctx: ServiceContext, input: CreateAssetInput): Promise<AssetOutput> {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, verifiedResidentOrCurator('register assets'));
  const { em, user } = ctx;
  const asset = await em.transactional(async (tx) => {
    const created = tx.create(TerritoryAsset, {
      id: newId(),
      territoryId,
      createdByUserId: user.id,
      type: input.type,
      subtype: input.type === NATURAL_ASSET_TYPE ? (input.subtype ?? null) : null,
      name: input.name,
      description: input.description,
      geoAnchors: input.geoAnchors.map((g) => ({ latitude: g.latitude, longitude: g.longitude })),
      status: 'Suggested',
      validationCount: 0,
      curatedAtUtc: null,
      curatedByUserId: null,
      archivedAtUtc: null,
    });
    curationWorkItem(tx, created, user.id);
    await tx.flush();
    return created;
  });
  return toOutput(em, asset);
}

/** Any asset by id, whatever its status: a prepared key lookup on the pool (GETs pass the context: no fork). */
export async function getAsset(ctx: ServiceContext, input: { assetId: string }): Promise<AssetOutput> {
  const [asset] = await runHotRead<AssetFacts>(ctx, assetByIdQuery(input.assetId), { prepared: true });
  if (!asset) throw notFound('Asset');
  return toOutput(ctx, asset);
}

async function listWhere(ctx: ServiceContext, filter: AssetListFilter): Promise<AssetListWhere> {
  const { territoryId } = await requireTerritory(ctx, filter.territoryId);
  // `type` and `types` both name types (compared with the type only); together they are one set.
  const types = [...new Set([...(filter.type ? [filter.type] : []), ...(filter.types ?? [])])];
  return { territoryId, statuses: filter.status ? [filter.status] : DEFAULT_LISTED, assetId: filter.assetId, types };
}

export async function listAssets(ctx: ServiceContext, input: AssetListFilter & { skip: number; take: number }) {
  const where = await listWhere(ctx, input);
  return toOutputs(ctx, await runHotRead<AssetFacts>(ctx, assetListQuery(where, input.skip, input.take)));
}

export async function pageAssets(ctx: ServiceContext, input: AssetListFilter & { pageNumber: number; pageSize: number }) {
  const where = await listWhere(ctx, input);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const [assets, count] = await Promise.all([
    runHotRead<AssetFacts>(ctx, assetListQuery(where, offset, limit)),
    runHotRead<{ total: number }>(ctx, assetCountQuery(where)),
  ]);
  return toPage(await toOutputs(ctx, assets), count[0]?.total ?? 0, input.pageNumber, input.pageSize);
}

/** Assets that can no longer be edited: an archived or rejected asset is a closed record. */
const NOT_EDITABLE: AssetStatus[] = ['Archived', 'Rejected'];
/** The fields an edit may change, compared before and after for the audit entry. */
const EDITABLE_FIELDS = ['type', 'subtype', 'name', 'description', 'geoAnchors'] as const;
type EditableField = (typeof EDITABLE_FIELDS)[number];

function editableValues(asset: AssetRow): Record<EditableField, unknown> {
  return {
    type: asset.type,
    subtype: asset.subtype ?? null,
    name: asset.name,
    description: asset.description ?? null,
    geoAnchors: asset.geoAnchors.map((g) => ({ latitude: g.latitude, longitude: g.longitude })),
  };
}

/** Only the fields whose value differs, as `{before, after}` maps. */
function changedFields(before: Record<EditableField, unknown>, after: Record<EditableField, unknown>) {
  const changed = EDITABLE_FIELDS.filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]));
  return {
    fields: changed,
    before: Object.fromEntries(changed.map((f) => [f, before[f]])),
    after: Object.fromEntries(changed.map((f) => [f, after[f]])),
  };
}

/**
 * The creator or a curator of the asset's territory edits it; Archived and Rejected assets are closed (409). Subtype
 * is tri-state (omitted keeps it while the type stays natural, null removes it, a value replaces it); a type other
 * than natural carries no subtype: changing the type away from natural clears it, and a subtype sent with such a
 * type is a 400. The row is locked for the edit, so concurrent edits apply one after the other (each on the other's
 * result) instead of overwriting each other; an edit that changes something is audited with before/after values.
 */
export async function updateAsset(ctx: ServiceContext, input: UpdateAssetInput): Promise<AssetOutput> {
  const { em, user } = ctx;
  const asset = await em.transactional(async (tx) => {
    const locked = await tx.findOne(TerritoryAsset, { id: input.assetId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!locked) throw notFound('Asset');
    const curator = (await requireTerritory({ ...ctx, em: tx }, locked.territoryId, { status: 'ANY' })).holds('CURATOR');
    if (locked.createdByUserId !== user.id && !curator) throw forbidden('Only the creator or a curator of the territory can edit this asset.');
    if (NOT_EDITABLE.includes(locked.status)) throw conflict(`A ${locked.status} asset cannot be edited.`, 'ASSET_NOT_EDITABLE');
    const type = input.type ?? locked.type;
    if (typeof input.subtype === 'string' && type !== NATURAL_ASSET_TYPE) throw validationFailed('subtype', SUBTYPE_ONLY_FOR_NATURAL);
    const subtype = type !== NATURAL_ASSET_TYPE ? null : input.subtype === undefined ? (locked.subtype ?? null) : input.subtype;

    const before = editableValues(locked);
    locked.type = type;
    locked.subtype = subtype;
    if (input.name !== undefined) locked.name = input.name;
    if (input.description !== undefined) locked.description = input.description || null;
    if (input.geoAnchors !== undefined) locked.geoAnchors = input.geoAnchors.map((g) => ({ latitude: g.latitude, longitude: g.longitude }));
    const change = changedFields(before, editableValues(locked));
    if (change.fields.length > 0) {
      audit(tx, {
        actorUserId: user.id,
        action: 'asset.updated',
        subjectType: 'TerritoryAsset',
        subjectId: locked.id,
        territoryId: locked.territoryId,
        data: { fields: change.fields, before: change.before, after: change.after },
      });
      // What the curators approved is not what its creator may turn it into: a changed Active asset goes back to
      // Suggested, with a new curation in the territory's queue (a curator's own edit stands).
      if (locked.status === 'Active' && !curator) sendBackToCuration(tx, locked, user.id, ctx.clock.now());
    }
    await tx.flush();
    return locked;
  });
  return toOutput(em, asset);
}

function sendBackToCuration(tx: EntityManager, asset: AssetRow, actorUserId: string, now: Date) {
  asset.status = 'Suggested';
  asset.curatedAtUtc = null;
  asset.curatedByUserId = null;
  asset.updatedAtUtc = now;
  curationWorkItem(tx, asset, actorUserId);
  audit(tx, { actorUserId, action: 'asset.sent_back_to_curation', subjectType: 'TerritoryAsset', subjectId: asset.id, territoryId: asset.territoryId });
}

/** The ASSET_CURATION item of an asset awaiting its curators. */
function curationWorkItem(tx: EntityManager, asset: AssetRow, suggestedByUserId: string) {
  createWorkItem(tx, {
    type: 'ASSET_CURATION',
    subjectType: 'TerritoryAsset',
    subjectId: asset.id,
    territoryId: asset.territoryId,
    payload: { name: asset.name, type: asset.type, subtype: asset.subtype ?? null, suggestedByUserId },
    requiredCapability: 'CURATOR',
    createdByUserId: suggestedByUserId,
  });
}

/**
 * A member of the asset's territory validates it (Suggested or Active assets); once per user, so a repeat changes
 * nothing. The first validation is audited. Answers the asset with its count and percentage.
 */
export async function validateAsset(ctx: ServiceContext, input: { assetId: string }): Promise<AssetOutput> {
  const { em, user } = ctx;
  const { assetId } = input;
  await em.transactional(async (tx) => {
    // The status is checked on the locked row: an archive (or curation) committing meanwhile is waited for and seen
    // (409), never counted past.
    const asset = await tx.findOne(TerritoryAsset, { id: assetId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!asset) throw notFound('Asset');
    await requireTerritory({ ...ctx, em: tx }, asset.territoryId, {
      as: 'member',
      status: 'ANY',
      denied: { message: 'Only members (visitors or residents) of this territory can validate its assets.', code: 'NOT_MEMBER' },
    });
    if (!VALIDATABLE.includes(asset.status)) throw conflict(`A ${asset.status} asset cannot be validated.`, 'ASSET_NOT_VALIDATABLE');
    // The insert and the counter change commit together; concurrent repeats insert (and count) once.
    const inserted = await execSql<{ asset_id: string }>(
      tx,
      `insert into asset_validation (asset_id, user_id, created_at_utc) values (?, ?, ?)
       on conflict (asset_id, user_id) do nothing returning asset_id`,
      [assetId, user.id, ctx.clock.now()],
    );
    if (inserted.length === 0) return;
    await execSql(tx, 'update territory_asset set validation_count = validation_count + 1 where id = ?', [assetId]);
    audit(tx, { actorUserId: user.id, action: 'asset.validated', subjectType: 'TerritoryAsset', subjectId: assetId, territoryId: asset.territoryId });
  });
  return toOutput(em, await loadAsset(em, assetId, true));
}

/**
 * A curator decides on a Suggested asset: APPROVED -> Active, REJECTED -> Rejected. The decision completes the
 * asset's pending ASSET_CURATION work item (whose handler applies it); without one (left with NOACTION) it is
 * applied directly. Anything but Suggested is a 409.
 */
export async function curateAsset(ctx: ServiceContext, input: { assetId: string; outcome: 'APPROVED' | 'REJECTED' }): Promise<AssetOutput> {
  const { em, user } = ctx;
  const { assetId, outcome } = input;
  const asset = await loadAsset(em, assetId);
  await requireTerritory(ctx, asset.territoryId, { as: 'CURATOR', status: 'ANY' });
  if (asset.status !== 'Suggested') throw assetNotSuggested();
  const item = await findPendingWorkItem(em, { type: 'ASSET_CURATION', subjectType: 'TerritoryAsset', subjectId: assetId });
  if (item) {
    await completeWorkItem(em, item, outcome, null, user.id);
  } else {
    await em.transactional(async (tx) => {
      await applyAssetCuration(tx, { subjectId: assetId }, outcome, user.id);
      await tx.flush();
    });
  }
  return toOutput(em, await loadAsset(em, assetId, true));
}

/**
 * A curator archives a Suggested or Active asset (its pending curation is cancelled). Archiving an archived asset
 * changes nothing; a Rejected one is a 409.
 */
export async function archiveAsset(ctx: ServiceContext, input: { assetId: string }): Promise<AssetOutput> {
  const { em, user } = ctx;
  const { assetId } = input;
  const asset = await loadAsset(em, assetId);
  await requireTerritory(ctx, asset.territoryId, { as: 'CURATOR', status: 'ANY' });
  if (asset.status === 'Archived') return toOutput(em, asset);
  if (asset.status === 'Rejected') throw conflict('A Rejected asset cannot be archived.', 'ASSET_REJECTED');
  await em.transactional(async (tx) => {
    const now = ctx.clock.now();
    const changed = await tx.nativeUpdate(
      TerritoryAsset,
      { id: assetId, status: { $in: ['Suggested', 'Active'] } },
      { status: 'Archived', archivedAtUtc: now, updatedAtUtc: now },
    );
    if (changed === 0) throw conflict('The asset changed status meanwhile; try again.', 'ASSET_STATUS_CHANGED');
    await cancelPendingWorkItems(tx, { type: 'ASSET_CURATION', subjectIds: [assetId], notes: 'Asset archived', actorUserId: user.id, at: now });
    audit(tx, {
      actorUserId: user.id,
      action: 'asset.archived',
      subjectType: 'TerritoryAsset',
      subjectId: assetId,
      territoryId: asset.territoryId,
      data: { previousStatus: asset.status },
    });
  });
  return toOutput(em, await loadAsset(em, assetId, true));
}
