import type { EntityManager } from '@mikro-orm/postgresql';
import { audit } from '../../entities/audit.entity.js';
import { Territory, type TerritoryStatus } from '../../entities/territory.entity.js';
import { conflict, notFound, validationFailed } from '../../platform/problems.js';
import type { WorkItemHandler } from '../work-items/work-item-handlers.js';

const DECIDED_STATUS: Record<'APPROVED' | 'REJECTED', TerritoryStatus> = {
  APPROVED: 'ACTIVE',
  REJECTED: 'REJECTED',
};

/**
 * Applies an admin's decision on a TERRITORY_SUGGESTION work item: APPROVED activates the territory, REJECTED
 * rejects it (DESIGN section 6). NOACTION is a 400: it would complete the item and leave the territory PENDING with
 * nothing left to decide it (a new suggestion of it a duplicate). Meant to run inside the caller's transaction (it
 * only mutates and flushes; a refusal rolls the completion back).
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
  if (outcome === 'NOACTION') throw validationFailed('outcome', 'must be APPROVED or REJECTED for a territory suggestion');
  const previous = territory.status;
  territory.status = DECIDED_STATUS[outcome];
  audit(em, {
    actorUserId,
    action: 'territory.suggestion.decided',
    subjectType: 'Territory',
    subjectId: territory.id,
    territoryId: territory.id,
    data: { outcome, previousStatus: previous, status: territory.status },
  });
  await em.flush();
}

/** TERRITORY_SUGGESTION: completing the work item decides the suggested territory. */
export const territorySuggestionHandler: WorkItemHandler = {
  apply: (em, item, outcome, actorUserId) => decideTerritorySuggestion(em, item, outcome, actorUserId),
};
