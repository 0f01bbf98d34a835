import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Territory } from './territory.entity.js';

export const WORK_ITEM_TYPES = ['IDENTITY_VERIFICATION', 'RESIDENCY_VERIFICATION', 'TERRITORY_SUGGESTION', 'ASSET_CURATION', 'MODERATION_CASE'] as const;
export type WorkItemType = (typeof WORK_ITEM_TYPES)[number];
export const WORK_ITEM_STATUSES = ['PENDING', 'COMPLETED', 'CANCELLED'] as const;
export type WorkItemStatus = (typeof WORK_ITEM_STATUSES)[number];
export const WORK_ITEM_OUTCOMES = ['APPROVED', 'REJECTED', 'NOACTION'] as const;
export type WorkItemOutcome = (typeof WORK_ITEM_OUTCOMES)[number];

/** A human decision waiting in an admin or curator queue. */
export const WorkItem = defineEntity({
  name: 'WorkItem',
  tableName: 'work_item',
  properties: {
    ...baseProperties,
    type: p.string().length(40).$type<WorkItemType>(),
    status: p.string().length(20).$type<WorkItemStatus>().default('PENDING'),
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').nullable().deleteRule('cascade'),
    subjectType: p.string().length(40),
    subjectId: p.uuid(),
    payload: p.json<Record<string, unknown>>().default('{}'),
    requiredPermission: p.string().length(40).nullable(),
    requiredCapability: p.string().length(40).nullable(),
    outcome: p.string().length(20).$type<WorkItemOutcome>().nullable(),
    notes: p.string().length(2000).nullable(),
    completedAtUtc: p.datetime().nullable(),
    completedByUserId: p.uuid().nullable(),
    createdByUserId: p.uuid().nullable(),
  },
  indexes: [{ properties: ['status', 'type', 'createdAtUtc'] }, { properties: ['territoryId', 'status', 'createdAtUtc'] }],
});
