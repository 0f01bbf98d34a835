import { type EntityManager, LockMode } from '@mikro-orm/postgresql';
import { TerritoryMembership } from '../../entities/membership.entity.js';
import type { WorkItemOutcome } from '../../entities/work-item.entity.js';
import { clock } from '../../platform/clock.js';
import { conflict } from '../../platform/problems.js';
import type { WorkItemHandler } from '../work-items/work-item-handlers.js';

/**
 * Locks the membership a RESIDENCY_VERIFICATION item is about. Document submissions, residency transfers and
 * decisions lock the membership before the work item, so they serialize instead of deadlocking.
 */
export function lockResidencySubject(em: EntityManager, membershipId: string) {
  return em.findOne(TerritoryMembership, { id: membershipId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/**
 * The effect of completing a RESIDENCY_VERIFICATION item: APPROVED makes the membership DOCUMENTVERIFIED;
 * REJECTED and NOACTION leave it as it is (the resident may send another document).
 */
export async function applyResidencyDecision(em: EntityManager, item: { subjectId: string }, outcome: WorkItemOutcome) {
  if (outcome !== 'APPROVED') return;
  const changed = await em.nativeUpdate(TerritoryMembership, { id: item.subjectId, role: 'RESIDENT' }, { documentVerifiedAtUtc: clock.now() });
  if (changed === 0) throw conflict('The member is no longer RESIDENT of this territory.', 'NOT_RESIDENT');
}

/** RESIDENCY_VERIFICATION: the membership is locked before the work item, then the decision applies. */
export const residencyVerificationHandler: WorkItemHandler = {
  lockSubject: (em, item) => lockResidencySubject(em, item.subjectId),
  apply: (em, item, outcome) => applyResidencyDecision(em, item, outcome),
};
