import type { InferEntity } from '@mikro-orm/postgresql';
import { isoValue, runHotRead } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { NaturalAsset, type NaturalAssetStatus } from '../../entities/natural-asset.entity.js';
import { newId } from '../../platform/ids.js';
import { conflict, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { verifiedResidentOrCurator } from '../assets/assets.service.js';
import { type NaturalAssetFacts, territoryNaturalAssetsQuery } from './natural-assets.queries.js';
import type { CreateNaturalAssetInput, NaturalAssetOutput } from './natural-assets.schemas.js';

type NaturalAssetRow = InferEntity<typeof NaturalAsset>;

function toOutput(a: NaturalAssetRow | NaturalAssetFacts): NaturalAssetOutput {
  return {
    id: a.id,
    territoryId: a.territoryId,
    type: a.type,
    name: a.name,
    description: a.description ?? null,
    latitude: a.latitude,
    longitude: a.longitude,
    status: a.status,
    createdByUserId: a.createdByUserId,
    createdAtUtc: isoValue(a.createdAtUtc)!,
    publishedAtUtc: isoValue(a.publishedAtUtc),
  };
}

/**
 * The territory's natural assets, newest first: PUBLISHED ones to any signed-in user; PENDING ones to its curators,
 * and to their creator. Read on the pool, given the context: a listing never forks the request's manager.
 */
export async function listNaturalAssets(
  ctx: ServiceContext,
  input: { territoryId: string; status?: NaturalAssetStatus; skip: number; take: number },
): Promise<NaturalAssetOutput[]> {
  const access = await requireTerritory(ctx, input.territoryId, { status: 'VISIBLE' });
  const statuses: NaturalAssetStatus[] = input.status ? [input.status] : ['PENDING', 'PUBLISHED'];
  const visible = { statuses, pendingOnlyOf: access.holds('CURATOR') ? undefined : ctx.user.id };
  const rows = await runHotRead<NaturalAssetFacts>(ctx, territoryNaturalAssetsQuery(input.territoryId, visible, input.skip, input.take));
  return rows.map(toOutput);
}

/** A verified resident or curator of an ACTIVE territory registers a natural asset: PENDING until published. */
export async function createNaturalAsset(ctx: ServiceContext, input: CreateNaturalAssetInput): Promise<NaturalAssetOutput> {
  await requireTerritory(ctx, input.territoryId, verifiedResidentOrCurator('register natural assets'));
  const { em, user } = ctx;
  const asset = em.create(NaturalAsset, {
    id: newId(),
    territoryId: input.territoryId,
    createdByUserId: user.id,
    type: input.type,
    name: input.name,
    description: input.description,
    latitude: input.latitude,
    longitude: input.longitude,
    status: 'PENDING',
    publishedAtUtc: null,
    publishedByUserId: null,
  });
  await em.flush();
  return toOutput(asset);
}

/** A curator publishes a PENDING natural asset of the territory (another territory's id: 404; not PENDING: 409). */
export async function publishNaturalAsset(ctx: ServiceContext, input: { territoryId: string; id: string }): Promise<NaturalAssetOutput> {
  const { territoryId, id } = input;
  await requireTerritory(ctx, territoryId, { as: 'CURATOR', status: 'VISIBLE' });
  const { em, user } = ctx;
  const asset = await em.findOne(NaturalAsset, { id, territoryId });
  if (!asset) throw notFound('Natural asset');
  const notPending = () => conflict(`The natural asset is ${asset.status}, not PENDING.`, 'NATURAL_ASSET_NOT_PENDING');
  if (asset.status !== 'PENDING') throw notPending();
  const now = ctx.clock.now();
  await em.transactional(async (tx) => {
    // Conditional: of two concurrent publications one wins, the other is a 409.
    const changed = await tx.nativeUpdate(NaturalAsset, { id, status: 'PENDING' }, { status: 'PUBLISHED', publishedAtUtc: now, publishedByUserId: user.id });
    if (changed === 0) throw notPending();
    audit(tx, { actorUserId: user.id, action: 'natural_asset.published', subjectType: 'NaturalAsset', subjectId: id, territoryId });
  });
  return toOutput({ ...asset, status: 'PUBLISHED', publishedAtUtc: now, publishedByUserId: user.id });
}
