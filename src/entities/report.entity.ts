import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, refuseDeletedAccountTrigger } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

/** Spec "Report and block": what a report is about. */
export const REPORT_TARGET_TYPES = ['POST', 'USER'] as const;
export type ReportTargetType = (typeof REPORT_TARGET_TYPES)[number];
/** OPEN on creation; a moderation case (or the threshold sanction) moves it to ACTIONED or DISMISSED (DESIGN 14). */
export const REPORT_STATUSES = ['OPEN', 'ACTIONED', 'DISMISSED'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];
/** What applied a sanction: enough distinct reporters (the report-threshold job) or a moderator's decision. */
export const SANCTION_SOURCES = ['THRESHOLD', 'MODERATION_CASE'] as const;
export type SanctionSource = (typeof SANCTION_SOURCES)[number];

/**
 * A person's report of a post or a user in a territory. `targetId` names a post or a user by id only (the post's
 * own domain keeps it). The reporter goes (set null) when their account is erased; the report stays for the
 * moderators.
 */
export const Report = defineEntity({
  name: 'Report',
  tableName: 'report',
  triggers: [refuseDeletedAccountTrigger('report', 'reporter_user_id')],
  properties: {
    ...baseProperties,
    reporterUserId: () => p.manyToOne(User).mapToPk().fieldName('reporter_user_id').deleteRule('set null').nullable(),
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    targetType: p.string().length(10).$type<ReportTargetType>(),
    targetId: p.uuid(),
    reason: p.string().length(300),
    details: p.string().length(2000).nullable(),
    status: p.string().length(20).$type<ReportStatus>().default('OPEN'),
    decidedAtUtc: p.datetime().nullable(),
    decidedByUserId: p.uuid().nullable(),
  },
  indexes: [
    // Dedup: the reporter's latest report of a target.
    {
      name: 'report_dedup_idx',
      expression: `create index "report_dedup_idx" on "report" ("reporter_user_id", "target_type", "target_id", "created_at_utc" desc)`,
    },
    // The threshold: distinct reporters of a target in a territory within the window.
    {
      name: 'report_target_idx',
      expression: `create index "report_target_idx" on "report" ("target_type", "target_id", "territory_id", "created_at_utc" desc)`,
    },
    // The curators' list, newest first.
    { name: 'report_territory_idx', expression: `create index "report_territory_idx" on "report" ("territory_id", "created_at_utc" desc, "id" desc)` },
  ],
});

/**
 * A sanction applied to a target in a territory: at most one per target and territory (the unique key makes the
 * threshold job idempotent, however often or concurrently it runs).
 */
export const ReportSanction = defineEntity({
  name: 'ReportSanction',
  tableName: 'report_sanction',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    targetType: p.string().length(10).$type<ReportTargetType>(),
    targetId: p.uuid(),
    source: p.string().length(20).$type<SanctionSource>(),
    reporterCount: p.integer().default(0),
    appliedByUserId: p.uuid().nullable(),
  },
  uniques: [{ name: 'report_sanction_target_unique', properties: ['territoryId', 'targetType', 'targetId'] }],
});

/** A user may not create content in a territory until `endsAtUtc` (read by the territory access check). */
export const PostingRestriction = defineEntity({
  name: 'PostingRestriction',
  tableName: 'posting_restriction',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade'),
    endsAtUtc: p.datetime(),
    sanctionId: () => p.manyToOne(ReportSanction).mapToPk().fieldName('sanction_id').deleteRule('cascade').nullable(),
  },
  indexes: [
    {
      name: 'posting_restriction_user_idx',
      expression: `create index "posting_restriction_user_idx" on "posting_restriction" ("user_id", "territory_id", "ends_at_utc" desc)`,
    },
  ],
});
