import type { EntityManager } from '@mikro-orm/postgresql';
import type { TerritoryCapability } from '../../entities/membership.entity.js';
import type { SystemPermission } from '../../entities/user.entity.js';
import { WorkItem, type WorkItemOutcome, type WorkItemStatus, type WorkItemType } from '../../entities/work-item.entity.js';
import type { AuthUser } from '../../platform/service-context.js';
import { forbidden, notFound } from '../../platform/problems.js';
import { requireTerritoryCapability } from '../../trpc/procedures.js';
import { hasPermission } from '../../platform/service-context.js';
import { completeWorkItem, listWorkItems } from '../work-items/work-items.service.js';

/** The territory's queue, newest first: its curators and moderators. */
export async function listForTerritory(
  em: EntityManager,
  user: AuthUser,
  input: { territoryId: string; type?: WorkItemType; status?: WorkItemStatus; pageNumber: number; pageSize: number },
) {
  await requireTerritoryCapability(em, user, input.territoryId, ['CURATOR', 'MODERATOR']);
  return listWorkItems(em, { territoryId: input.territoryId, type: input.type, status: input.status }, input.pageNumber, input.pageSize);
}

/** An item of this territory (another territory's or an unknown id: 404). */
async function itemOfTerritory(em: EntityManager, territoryId: string, workItemId: string, type?: WorkItemType) {
  const item = await em.findOne(WorkItem, { id: workItemId, territoryId, ...(type ? { type } : {}) });
  if (!item) throw notFound('Work item');
  return item;
}

/**
 * Completes an item of the territory's queue. Beyond the queue access (curator or moderator) the caller must
 * hold what the item itself requires: a moderator cannot decide a residency document, which needs a CURATOR.
 */
export async function completeInTerritory(
  em: EntityManager,
  user: AuthUser,
  input: { territoryId: string; workItemId: string; outcome: WorkItemOutcome; notes: string | null },
) {
  await requireTerritoryCapability(em, user, input.territoryId, ['CURATOR', 'MODERATOR']);
  const item = await itemOfTerritory(em, input.territoryId, input.workItemId);
  if (item.requiredPermission && !hasPermission(user, item.requiredPermission as SystemPermission)) {
    throw forbidden(`This work item requires ${item.requiredPermission}.`);
  }
  if (item.requiredCapability) await requireTerritoryCapability(em, user, input.territoryId, [item.requiredCapability as TerritoryCapability]);
  return completeWorkItem(em, item, input.outcome, input.notes, user.id);
}

/** A curator's decision on a residency document of the territory: APPROVED makes the member DOCUMENTVERIFIED. */
export async function decideResidency(
  em: EntityManager,
  user: AuthUser,
  input: { territoryId: string; workItemId: string; outcome: 'APPROVED' | 'REJECTED'; notes: string | null },
) {
  await requireTerritoryCapability(em, user, input.territoryId, ['CURATOR']);
  const item = await itemOfTerritory(em, input.territoryId, input.workItemId, 'RESIDENCY_VERIFICATION');
  return completeWorkItem(em, item, input.outcome, input.notes, user.id);
}
