import type { FilterQuery, InferEntity } from '@mikro-orm/postgresql';
import { audit } from '../../entities/audit.entity.js';
import { NaturalAsset, type NaturalAssetStatus } from '../../entities/natural-asset.entity.js';
import { newId } from '../../platform/ids.js';
import { conflict, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { verifiedResidentOrCurator } from '../assets/assets.service.js';
import type { CreateNaturalAssetInput, NaturalAssetOutput } from './natural-assets.schemas.js';

type NaturalAssetRow = InferEntity<typeof NaturalAsset>;

function toOutput(a: NaturalAssetRow): NaturalAssetOutput {
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
    createdAtUtc: a.createdAtUtc.toISOString(),
    publishedAtUtc: a.publishedAtUtc ? a.publishedAtUtc.toISOString() : null,
  };
}

/**
 * The territory's natural assets, newest first: PUBLISHED ones to any signed-in user; PENDING ones to its curators,
 * and to their creator.
 */
export async function listNaturalAssets(
  ctx: ServiceContext,
  input: { territoryId: string; status?: NaturalAssetStatus; skip: number; take: number },
): Promise<NaturalAssetOutput[]> {
  const access = await requireTerritory(ctx, input.territoryId, { status: 'VISIBLE' });
  const { em, user } = ctx;
  const curator = access.holds('CURATOR');
  const statuses: NaturalAssetStatus[] = input.status ? [input.status] : ['PENDING', 'PUBLISHED'];
  const visible: FilterQuery<NaturalAssetRow> = curator
    ? { status: { $in: statuses } }
    : {
        $or: [
          ...(statuses.includes('PUBLISHED') ? [{ status: 'PUBLISHED' as const }] : []),
          ...(statuses.includes('PENDING') ? [{ status: 'PENDING' as const, createdByUserId: user.id }] : []),
        ],
      };
  const rows = await em.find(
    NaturalAsset,
    { territoryId: input.territoryId, ...visible },
    { orderBy: { createdAtUtc: 'desc', id: 'desc' }, offset: input.skip, limit: input.take },
  );
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
