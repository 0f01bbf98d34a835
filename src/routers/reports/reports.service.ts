import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, runSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { Report, type ReportTargetType } from '../../entities/report.entity.js';
import type { AccountEraser } from '../../platform/account-erasure.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { AppError, badRequest, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory, type TerritoryAccess } from '../../policy/territory-access.js';
import { canSeePost } from '../feed/feed.service.js';
import { curatorIdsOf } from '../memberships/memberships.queries.js';
import { enqueueNotification } from '../notifications/outbox.js';
import { readConfigNumber } from '../system-config/system-config.queries.js';
import { createWorkItem } from '../work-items/work-items.service.js';
import { DEFAULT_THRESHOLD_REPORTERS, DEFAULT_THRESHOLD_WINDOW_DAYS, type JobSender, sendThresholdJob } from './report-threshold.job.js';
import {
  postFactsOf,
  recentReportByQuery,
  type ReportRow,
  reportByIdQuery,
  reportsCountQuery,
  reportsPageQuery,
  targetsOverThreshold,
  userExists,
} from './reports.queries.js';
import { lockTarget, type SanctionTarget } from './reports.sanctions.js';
import type { ReportFilter, ReportOutput, ReportPostInput, ReportUserInput } from './reports.schemas.js';

export const DEFAULT_DEDUP_WINDOW_HOURS = 24;
const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

const toOutput = (r: ReportRow): ReportOutput => ({
  id: r.id,
  targetType: r.target_type,
  targetId: r.target_id,
  territoryId: r.territory_id,
  reason: r.reason,
  details: r.details,
  status: r.status,
  createdAtUtc: r.created_at_utc,
});

const cannotReportSelf = (what: string) => badRequest(`You cannot report ${what}.`, 'CANNOT_REPORT_SELF');

interface NewReport {
  targetType: ReportTargetType;
  targetId: string;
  /** Whom the report is about (the user, or the post's author): never told of it by REPORT_CREATED. */
  reportedUserId: string;
  reason: string;
  details: string | null;
}

/**
 * Whether this new report brought its target to the threshold (distinct reporters within
 * `Reports:ThresholdWindowDays` reach `Reports:ThresholdReporters`, no sanction yet): then the threshold job is sent
 * for the target in this transaction. The target's advisory lock (the one every sanction writer takes) serialises
 * the reports of one target, so of concurrent reports the one that completes the count sees the others: without
 * it, each could count only itself and none would send.
 */
async function sendJobAtThreshold(tx: EntityManager, jobs: JobSender | null, target: SanctionTarget, now: Date) {
  await lockTarget(tx, target);
  const threshold = await readConfigNumber(tx, 'Reports:ThresholdReporters', DEFAULT_THRESHOLD_REPORTERS);
  const windowDays = await readConfigNumber(tx, 'Reports:ThresholdWindowDays', DEFAULT_THRESHOLD_WINDOW_DAYS);
  const due = await targetsOverThreshold(tx, { since: new Date(now.getTime() - windowDays * DAY_MS), threshold, target });
  if (due.length > 0) await sendThresholdJob(tx, jobs, target);
}

/**
 * Files the report, or answers the reporter's report of the same target within `Reports:DedupWindowHours` (created:
 * false, nothing written). A transaction-scoped advisory lock on (reporter, target) makes concurrent repeats
 * one report. A new report notifies the territory's curators (REPORT_CREATED) and opens a MODERATION_CASE in the
 * territory's queue, in the same transaction; when it brings the target to the threshold, the report-threshold job
 * is sent for the target in that transaction too (`jobs`: this process's job runner), and sanctions it.
 */
async function fileReport(
  ctx: ServiceContext,
  access: TerritoryAccess,
  report: NewReport,
  jobs: JobSender | null,
): Promise<{ created: boolean; report: ReportOutput }> {
  const { em, user } = ctx;
  const territoryId = access.territoryId;
  const now = ctx.clock.now();
  const id = await em.transactional(async (tx): Promise<{ existing: ReportOutput } | { id: string }> => {
    await execSql(tx, 'select pg_advisory_xact_lock(hashtextextended(?, 0))', [`report:${user.id}:${report.targetType}:${report.targetId}`]);
    const windowHours = await readConfigNumber(tx, 'Reports:DedupWindowHours', DEFAULT_DEDUP_WINDOW_HOURS);
    const [existing] = await runSql<ReportRow>(
      tx,
      recentReportByQuery(user.id, report.targetType, report.targetId, new Date(now.getTime() - windowHours * HOUR_MS)),
    );
    if (existing) return { existing: toOutput(existing) };
    const row = tx.create(Report, {
      reporterUserId: user.id,
      territoryId,
      targetType: report.targetType,
      targetId: report.targetId,
      reason: report.reason,
      details: report.details,
      status: 'OPEN',
      createdAtUtc: now,
    });
    createWorkItem(tx, {
      type: 'MODERATION_CASE',
      subjectType: 'Report',
      subjectId: row.id,
      territoryId,
      payload: { targetType: report.targetType, targetId: report.targetId, reason: report.reason },
      createdByUserId: user.id,
    });
    enqueueNotification(tx, {
      type: 'REPORT_CREATED',
      // The curators, but not the reporter nor whom the report is about (a reported curator learns of it from the decision).
      recipientUserIds: (await curatorIdsOf(tx, territoryId, user.id)).filter((id) => id !== report.reportedUserId),
      title: `New report in ${access.territory.name}`,
      body: `A ${report.targetType === 'POST' ? 'post' : 'user'} was reported: ${report.reason}`,
      data: { territoryId, reportId: row.id, targetType: report.targetType, targetId: report.targetId },
      sourceKey: `report:${row.id}:created`,
    });
    audit(tx, {
      actorUserId: user.id,
      action: 'report.created',
      subjectType: report.targetType === 'POST' ? 'Post' : 'User',
      subjectId: report.targetId,
      territoryId,
      data: { reportId: row.id },
    });
    await tx.flush();
    await sendJobAtThreshold(tx, jobs, { territoryId, targetType: report.targetType, targetId: report.targetId }, now);
    return { id: row.id };
  });
  if ('existing' in id) return { created: false, report: id.existing };
  const [row] = await runSql<ReportRow>(em, reportByIdQuery(id.id));
  return { created: true, report: toOutput(row!) };
}

/**
 * Anyone who can see a post reports it (in the post's territory); an unknown or unseen post is 404, one's own 400.
 * `jobs` sends the threshold job at once when this report reaches the threshold (null: the schedule does).
 */
export async function reportPost(ctx: ServiceContext, input: ReportPostInput, jobs: JobSender | null = null) {
  const { em, user } = ctx;
  const post = await postFactsOf(em, input.postId);
  if (!post || !(await canSeePost(em, user, input.postId, { includeHidden: false, despiteBlocks: true }))) {
    // A post the caller cannot see (residents-only) is not reportable: 404 like unknown. Nor is a HIDDEN one, even
    // for the curators and moderators who still see it: it is already sanctioned. One whose author the caller blocked
    // is: block, then report, is a common order.
    throw notFound('Post');
  }
  const access = await requireTerritory(ctx, post.territory_id);
  if (post.author_user_id === user.id) throw cannotReportSelf('your own post');
  const report = { targetType: 'POST', targetId: input.postId, reportedUserId: post.author_user_id, reason: input.reason, details: input.details } as const;
  return fileReport(ctx, access, report, jobs);
}

/**
 * Anyone reports a user in a territory: the body's `territoryId`, else the X-Session-Id selection; none is a 400
 * (NO_TERRITORY_SELECTED). Reporting oneself is 400; an unknown user 404. `jobs` as for `reportPost`.
 */
export async function reportUser(ctx: ServiceContext, input: ReportUserInput, jobs: JobSender | null = null) {
  const access = await requireTerritory(ctx, input.territoryId).catch((error: unknown) => {
    if (error instanceof AppError && error.problemCode === 'NO_TERRITORY_SELECTED') {
      throw badRequest('Name the territory of the report (territoryId) or select one for the session (X-Session-Id).', 'NO_TERRITORY_SELECTED');
    }
    throw error;
  });
  if (input.userId.toLowerCase() === ctx.user.id.toLowerCase()) throw cannotReportSelf('yourself');
  if (!(await userExists(ctx.em, input.userId))) throw notFound('User');
  const report = {
    targetType: 'USER',
    targetId: input.userId,
    reportedUserId: input.userId.toLowerCase(),
    reason: input.reason,
    details: input.details,
  } as const;
  return fileReport(ctx, access, report, jobs);
}

/** Curators and moderators of the territory (the given one, else the session's selection). */
const REPORT_READERS = {
  as: ['CURATOR', 'MODERATOR'],
  denied: { message: 'Only curators and moderators of this territory can read its reports.', code: 'FORBIDDEN' },
} as const;

async function readReports(em: EntityManager, filter: ReportFilter & { territoryId: string }, offset: number, limit: number) {
  const [rows, count] = await Promise.all([
    runSql<ReportRow>(em, reportsPageQuery(filter, { offset, limit })),
    runSql<{ total: number }>(em, reportsCountQuery(filter)),
  ]);
  return { items: rows.map(toOutput), total: count[0]?.total ?? 0 };
}

export async function listReports(ctx: ServiceContext, input: ReportFilter & { skip: number; take: number }) {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, REPORT_READERS);
  return (await readReports(ctx.em, { ...input, territoryId }, input.skip, input.take)).items;
}

export async function pageReports(ctx: ServiceContext, input: ReportFilter & { pageNumber: number; pageSize: number }) {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, REPORT_READERS);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const { items, total } = await readReports(ctx.em, { ...input, territoryId }, offset, limit);
  return toPage(items, total, input.pageNumber, input.pageSize);
}

/**
 * Account deletion: the person's reports stay for the moderators (the report is about someone else), without
 * naming them (reporter_user_id is also set null by the foreign key when the row itself goes).
 */
export const eraseReports: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'update report set reporter_user_id = null where reporter_user_id = ?', [userId]);
};
