import type { EntityManager } from '@mikro-orm/postgresql';
import { audit } from '../../entities/audit.entity.js';
import { TerritoryAsset } from '../../entities/asset.entity.js';
import type { WorkItemOutcome } from '../../entities/work-item.entity.js';
import { clock } from '../../platform/clock.js';
import { conflict } from '../../platform/problems.js';
import type { WorkItemHandler } from '../work-items/work-item-handlers.js';

export const assetNotSuggested = () => conflict('The asset is no longer awaiting curation.', 'ASSET_NOT_SUGGESTED');

/**
 * The effect of a curation decision on a Suggested asset: APPROVED makes it Active, REJECTED Rejected; NOACTION
 * leaves it Suggested. Conditional on the status, so of two concurrent decisions one wins and the other is a 409.
 * Runs inside the caller's transaction (an ASSET_CURATION work item's completion, or a direct curation).
 */
export async function applyAssetCuration(em: EntityManager, item: { subjectId: string }, outcome: WorkItemOutcome, actorUserId: string) {
  if (outcome === 'NOACTION') return;
  const status = outcome === 'APPROVED' ? 'Active' : 'Rejected';
  const asset = await em.findOne(TerritoryAsset, { id: item.subjectId });
  const changed = await em.nativeUpdate(
    TerritoryAsset,
    { id: item.subjectId, status: 'Suggested' },
    { status, curatedAtUtc: clock.now(), curatedByUserId: actorUserId, updatedAtUtc: clock.now() },
  );
  if (changed === 0 || !asset) throw assetNotSuggested();
  audit(em, {
    actorUserId,
    action: 'asset.curated',
    subjectType: 'TerritoryAsset',
    subjectId: item.subjectId,
    territoryId: asset.territoryId,
    data: { outcome, status },
  });
}

/** ASSET_CURATION: completing the work item decides the suggested asset. */
export const assetCurationHandler: WorkItemHandler = {
  apply: (em, item, outcome, actorUserId) => applyAssetCuration(em, item, outcome, actorUserId),
};
