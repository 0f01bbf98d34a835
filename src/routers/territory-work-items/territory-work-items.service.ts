import type { TerritoryCapability } from '../../entities/membership.entity.js';
import type { SystemPermission } from '../../entities/user.entity.js';
import type { WorkItemOutcome } from '../../entities/work-item.entity.js';
import { forbidden } from '../../platform/problems.js';
import { hasPermission, type ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { openEvidence } from '../evidence/evidence.service.js';
import { completeWorkItem, findWorkItem, listWorkItems, pageWorkItems, type WorkItemFilter } from '../work-items/work-items.service.js';

/** The territory queue is its curators' and moderators' (any territory status: suggestions are PENDING). */
const QUEUE_KEEPERS = { as: ['CURATOR', 'MODERATOR'], status: 'VISIBLE' } as const;

type TerritoryQueueFilter = WorkItemFilter & { territoryId: string };

/** The territory's queue, newest first: its curators and moderators. */
export async function listForTerritory(ctx: ServiceContext, input: TerritoryQueueFilter & { skip: number; take: number }) {
  await requireTerritory(ctx, input.territoryId, QUEUE_KEEPERS);
  return listWorkItems(ctx.em, { territoryId: input.territoryId, type: input.type, status: input.status }, input.skip, input.take);
}

/** The territory's queue, newest first, paged: its curators and moderators. */
export async function pageForTerritory(ctx: ServiceContext, input: TerritoryQueueFilter & { pageNumber: number; pageSize: number }) {
  await requireTerritory(ctx, input.territoryId, QUEUE_KEEPERS);
  return pageWorkItems(ctx.em, { territoryId: input.territoryId, type: input.type, status: input.status }, input.pageNumber, input.pageSize);
}

/**
 * Completes an item of the territory's queue. Beyond the queue access (curator or moderator) the caller must
 * hold what the item itself requires: a moderator cannot decide a residency document, which needs a CURATOR.
 */
export async function completeInTerritory(
  ctx: ServiceContext,
  input: { territoryId: string; workItemId: string; outcome: WorkItemOutcome; notes: string | null },
) {
  const access = await requireTerritory(ctx, input.territoryId, QUEUE_KEEPERS);
  const { em, user } = ctx;
  // Another territory's item or an unknown id: 404.
  const item = await findWorkItem(em, input.workItemId, { territoryId: input.territoryId });
  if (item.requiredPermission && !hasPermission(user, item.requiredPermission as SystemPermission)) {
    throw forbidden(`This work item requires ${item.requiredPermission}.`);
  }
  const capability = item.requiredCapability as TerritoryCapability | null;
  if (capability && !access.holds(capability)) throw forbidden(`This operation requires ${capability} in this territory.`);
  return completeWorkItem(em, item, input.outcome, input.notes, user.id);
}

/** A curator's decision on a residency document of the territory: APPROVED makes the member DOCUMENTVERIFIED. */
export async function decideResidency(
  ctx: ServiceContext,
  input: { territoryId: string; workItemId: string; outcome: 'APPROVED' | 'REJECTED'; notes: string | null },
) {
  await requireTerritory(ctx, input.territoryId, { as: 'CURATOR', status: 'VISIBLE' });
  const item = await findWorkItem(ctx.em, input.workItemId, { territoryId: input.territoryId, type: 'RESIDENCY_VERIFICATION' });
  return completeWorkItem(ctx.em, item, input.outcome, input.notes, ctx.user.id);
}

/** Curators and moderators read the evidence of their territory's queue (another territory's evidence: 404). */
export async function openTerritoryEvidence(ctx: ServiceContext, input: { territoryId: string; evidenceId: string }) {
  await requireTerritory(ctx, input.territoryId, QUEUE_KEEPERS);
  return openEvidence(ctx, input);
}
