import { type EntityManager, LockMode } from '@mikro-orm/postgresql';
import { type IdentityVerificationStatus, User } from '../../entities/user.entity.js';
import type { WorkItemOutcome } from '../../entities/work-item.entity.js';
import { forgetCachedUser } from '../../policy/caller.js';
import type { WorkItemHandler } from '../work-items/work-item-handlers.js';

/**
 * Locks the user row. Every path that touches both a user and their identity work item (upload, decision) takes
 * this lock first, then the work item's, so concurrent uploads and decisions serialize instead of deadlocking.
 */
export async function lockIdentitySubject(em: EntityManager, userId: string) {
  return em.findOne(User, { id: userId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/**
 * The effect of completing an IDENTITY_VERIFICATION work item on its user. NOACTION puts the user back to
 * Unverified: the document was neither accepted nor refused, and the user may send another one.
 */
const STATUS_BY_OUTCOME: Record<WorkItemOutcome, IdentityVerificationStatus> = {
  APPROVED: 'Verified',
  REJECTED: 'Rejected',
  NOACTION: 'Unverified',
};

export async function applyIdentityDecision(em: EntityManager, item: { subjectId: string }, outcome: WorkItemOutcome) {
  await em.nativeUpdate(User, { id: item.subjectId }, { identityVerificationStatus: STATUS_BY_OUTCOME[outcome] });
}

/** Called after the commit, so no request re-caches the old status in between. */
export function afterIdentityDecision(item: { subjectId: string }) {
  forgetCachedUser(item.subjectId);
}

/** IDENTITY_VERIFICATION: the user is locked before the work item; the bearer cache forgets them after the commit. */
export const identityVerificationHandler: WorkItemHandler = {
  lockSubject: (em, item) => lockIdentitySubject(em, item.subjectId),
  apply: (em, item, outcome) => applyIdentityDecision(em, item, outcome),
  afterCommit: (item) => afterIdentityDecision(item),
};
