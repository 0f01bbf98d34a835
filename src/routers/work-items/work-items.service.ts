import type { ServiceContext } from '../../platform/service-context.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { audit } from '../../entities/audit.entity.js';
import type { TerritoryCapability } from '../../entities/membership.entity.js';
import type { SystemPermission } from '../../entities/user.entity.js';
import { WorkItem, type WorkItemOutcome, type WorkItemStatus, type WorkItemType } from '../../entities/work-item.entity.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { conflict, forbidden, notFound } from '../../platform/problems.js';
import { type WorkItemRow, workItemHandler } from './work-item-handlers.js';
import type { WorkItemOutput } from './work-items.schemas.js';
import type { AccountEraser } from '../../platform/account-erasure.js';

export type { WorkItemRow };

export function toWorkItemOutput(w: WorkItemRow): WorkItemOutput {
  return {
    id: w.id,
    type: w.type,
    status: w.status,
    territoryId: w.territoryId ?? null,
    subjectType: w.subjectType,
    subjectId: w.subjectId,
    payload: w.payload ?? {},
    requiredPermission: w.requiredPermission ?? null,
    requiredCapability: w.requiredCapability ?? null,
    outcome: w.outcome ?? null,
    notes: w.notes ?? null,
    createdAtUtc: w.createdAtUtc.toISOString(),
    completedAtUtc: w.completedAtUtc ? w.completedAtUtc.toISOString() : null,
    completedByUserId: w.completedByUserId ?? null,
  };
}

export interface NewWorkItem {
  type: WorkItemType;
  subjectType: string;
  subjectId: string;
  territoryId?: string | null;
  payload?: Record<string, unknown>;
  requiredPermission?: SystemPermission | null;
  requiredCapability?: TerritoryCapability | null;
  createdByUserId?: string | null;
}

/** Opens a PENDING work item; it is written by the caller's next flush, inside the caller's transaction. */
export function createWorkItem(em: EntityManager, input: NewWorkItem): WorkItemRow {
  return em.create(WorkItem, {
    type: input.type,
    status: 'PENDING',
    subjectType: input.subjectType,
    subjectId: input.subjectId,
    territoryId: input.territoryId ?? null,
    payload: input.payload ?? {},
    requiredPermission: input.requiredPermission ?? null,
    requiredCapability: input.requiredCapability ?? null,
    createdByUserId: input.createdByUserId ?? null,
  });
}

/**
 * Completes a PENDING item and applies its type's effect in one transaction. The status change is a conditional
 * update (`where status = 'PENDING'`), so of two concurrent completions exactly one succeeds; the other is a 409.
 * Access checks are the caller's (admin queue, territory queue).
 */
export async function completeWorkItem(
  em: EntityManager,
  item: WorkItemRow,
  outcome: WorkItemOutcome,
  notes: string | null,
  actorUserId: string,
): Promise<WorkItemOutput> {
  // No one decides their own request (a residency or identity document, a territory they suggested): spec rule 3,
  // "no founder is self-approved"; another curator or a system admin does.
  if (item.createdByUserId !== null && item.createdByUserId === actorUserId) throw forbidden('You cannot decide your own request.', 'OWN_REQUEST');
  if (item.status !== 'PENDING') throw notPending();
  const handler = workItemHandler(item.type);
  const completedAtUtc = new Date();
  await em.transactional(async (tx) => {
    await handler.lockSubject?.(tx, item);
    const changed = await tx.nativeUpdate(
      WorkItem,
      { id: item.id, status: 'PENDING' },
      { status: 'COMPLETED', outcome, notes, completedAtUtc, completedByUserId: actorUserId },
    );
    if (changed === 0) throw notPending();
    await handler.apply?.(tx, item, outcome, actorUserId);
    audit(tx, {
      actorUserId,
      action: 'work_item.completed',
      subjectType: 'WorkItem',
      subjectId: item.id,
      territoryId: item.territoryId ?? null,
      data: { type: item.type, outcome, subjectType: item.subjectType, subjectId: item.subjectId },
    });
    await tx.flush();
  });
  handler.afterCommit?.(item, outcome);
  return toWorkItemOutput({ ...item, status: 'COMPLETED', outcome, notes, completedAtUtc, completedByUserId: actorUserId });
}

/** The PENDING item of a subject, if any (e.g. an asset's curation). */
export function findPendingWorkItem(em: EntityManager, subject: { type: WorkItemType; subjectType: string; subjectId: string }) {
  return em.findOne(WorkItem, { type: subject.type, subjectType: subject.subjectType, subjectId: subject.subjectId, status: 'PENDING' });
}

/**
 * Cancels the PENDING items of these subjects, inside the caller's transaction (the caller has locked the subjects
 * first, the order every writer of both uses). Answers how many were cancelled.
 */
export async function cancelPendingWorkItems(
  em: EntityManager,
  cancel: { type: WorkItemType; subjectIds: string[]; notes: string; actorUserId?: string | null; at: Date },
): Promise<number> {
  if (cancel.subjectIds.length === 0) return 0;
  return em.nativeUpdate(
    WorkItem,
    { type: cancel.type, subjectId: { $in: cancel.subjectIds }, status: 'PENDING' },
    { status: 'CANCELLED', completedAtUtc: cancel.at, completedByUserId: cancel.actorUserId ?? null, notes: cancel.notes },
  );
}

const notPending = () => conflict('This work item has already been completed or cancelled.', 'WORK_ITEM_NOT_PENDING');

/** The item, narrowed to a territory and/or a type when given (an item outside them is a 404 like an unknown id). */
export async function findWorkItem(em: EntityManager, workItemId: string, where: { type?: WorkItemType; territoryId?: string } = {}) {
  const item = await em.findOne(WorkItem, {
    id: workItemId,
    ...(where.type ? { type: where.type } : {}),
    ...(where.territoryId ? { territoryId: where.territoryId } : {}),
  });
  if (!item) throw notFound('Work item');
  return item;
}

export interface WorkItemFilter {
  type?: WorkItemType;
  status?: WorkItemStatus;
  territoryId?: string;
}

const workItemWhere = (filter: WorkItemFilter) => ({
  ...(filter.type ? { type: filter.type } : {}),
  ...(filter.status ? { status: filter.status } : {}),
  ...(filter.territoryId ? { territoryId: filter.territoryId } : {}),
});

const NEWEST_FIRST = { createdAtUtc: 'desc', id: 'desc' } as const;

/** The queue's items, newest first, from `offset` (the one query of the listing and its `/paged` variant). */
export async function listWorkItems(em: EntityManager, filter: WorkItemFilter, offset: number, limit: number): Promise<WorkItemOutput[]> {
  const rows = await em.find(WorkItem, workItemWhere(filter), { orderBy: NEWEST_FIRST, offset, limit });
  return rows.map(toWorkItemOutput);
}

/** One page of the queue, newest first, with its total. */
export async function pageWorkItems(em: EntityManager, filter: WorkItemFilter, pageNumber: number, pageSize: number) {
  const { offset, limit } = pageOffset(pageNumber, pageSize);
  const items = await listWorkItems(em, filter, offset, limit);
  const totalCount = await em.count(WorkItem, workItemWhere(filter));
  return toPage(items, totalCount, pageNumber, pageSize);
}

type QueueFilter = Omit<WorkItemFilter, 'territoryId'>;

/** Admin queue: every item, newest first (the router checks SYSTEM_ADMIN). */
export function listAdminQueue(ctx: ServiceContext, input: QueueFilter & { skip: number; take: number }) {
  return listWorkItems(ctx.em, { type: input.type, status: input.status }, input.skip, input.take);
}

/** Admin queue, paged: every item, newest first (the router checks SYSTEM_ADMIN). */
export function pageAdminQueue(ctx: ServiceContext, input: QueueFilter & { pageNumber: number; pageSize: number }) {
  return pageWorkItems(ctx.em, { type: input.type, status: input.status }, input.pageNumber, input.pageSize);
}

/** Admin queue: SYSTEM_ADMIN completes any item (the router checks the permission). */
export async function completeAsAdmin(ctx: ServiceContext, input: { workItemId: string; outcome: WorkItemOutcome; notes: string | null }) {
  const { em } = ctx;
  const { workItemId, outcome, notes } = input;
  const actorUserId = ctx.user.id;
  const item = await findWorkItem(em, workItemId);
  return completeWorkItem(em, item, outcome, notes, actorUserId);
}

/** Account deletion: the user's own pending verification requests are cancelled (their documents go with them). */
export const eraseWorkItems: AccountEraser = async ({ em, userId, at }) => {
  await em.nativeUpdate(
    WorkItem,
    { type: { $in: ['IDENTITY_VERIFICATION', 'RESIDENCY_VERIFICATION'] }, createdByUserId: userId, status: 'PENDING' },
    { status: 'CANCELLED', completedAtUtc: at, notes: 'The account was deleted.' },
  );
};
