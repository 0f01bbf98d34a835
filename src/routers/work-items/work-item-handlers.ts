/**
 * What completing a work item of one type does to its subject. The domain that owns the subject defines its
 * handler (assets: ASSET_CURATION, memberships: RESIDENCY_VERIFICATION, ...) and the composition root
 * (`src/routers/index.ts`) registers it here, so the work-items module depends on no domain it serves.
 */
import type { EntityManager, InferEntity } from '@mikro-orm/postgresql';
import type { WorkItem, WorkItemOutcome, WorkItemType } from '../../entities/work-item.entity.js';

export type WorkItemRow = InferEntity<typeof WorkItem>;

export interface WorkItemHandler {
  /** Locks the subject's rows before the work item's (the order the other writers of both use). */
  lockSubject?(em: EntityManager, item: WorkItemRow): Promise<unknown>;
  /** The effect on the subject, in the completion's transaction. */
  apply?(em: EntityManager, item: WorkItemRow, outcome: WorkItemOutcome, actorUserId: string): Promise<void>;
  /** After the commit: caches to drop and the like. */
  afterCommit?(item: WorkItemRow, outcome: WorkItemOutcome): void;
}

const handlers = new Map<WorkItemType, WorkItemHandler>();

export function registerWorkItemHandlers(table: Partial<Record<WorkItemType, WorkItemHandler>>) {
  for (const [type, handler] of Object.entries(table) as [WorkItemType, WorkItemHandler][]) handlers.set(type, handler);
}

/** A type without a registered handler only records the outcome (MODERATION_CASE until moderation lands). */
export const workItemHandler = (type: WorkItemType): WorkItemHandler => handlers.get(type) ?? {};
