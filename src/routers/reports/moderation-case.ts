import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql } from '../../db/sql.js';
import type { ReportStatus, ReportTargetType } from '../../entities/report.entity.js';
import type { WorkItemOutcome } from '../../entities/work-item.entity.js';
import { clock } from '../../platform/clock.js';
import { conflict, forbidden } from '../../platform/problems.js';
import type { WorkItemHandler, WorkItemRow } from '../work-items/work-item-handlers.js';
import { applySanction, dismissReports, lockTarget } from './reports.sanctions.js';

interface ReportFacts {
  id: string;
  territory_id: string;
  target_type: ReportTargetType;
  target_id: string;
  status: ReportStatus;
}

/** The case's report; null for a case about something else (only recorded, like a type without a handler). */
async function reportOf(em: EntityManager, item: WorkItemRow): Promise<ReportFacts | null> {
  if (item.subjectType !== 'Report') return null;
  const [report] = await execSql<ReportFacts>(em, 'select id, territory_id, target_type, target_id, status from report where id = ?', [item.subjectId]);
  return report ?? null;
}

/** Whether the report is about the user: they are its target, or the author of the post it targets. */
async function isAbout(em: EntityManager, report: ReportFacts, userId: string): Promise<boolean> {
  if (report.target_type === 'USER') return report.target_id === userId;
  const [post] = await execSql<{ author_user_id: string }>(em, 'select author_user_id from post where id = ?', [report.target_id]);
  return post?.author_user_id === userId;
}

/**
 * MODERATION_CASE: the decision on a report. APPROVED acts like the threshold sanction (the post is hidden, the
 * user restricted in the territory; the target's open reports become ACTIONED and their other cases are
 * cancelled); REJECTED and NOACTION dismiss the report (DISMISSED). Runs in the work item's completion transaction,
 * after the target's advisory lock (the order the threshold job uses too).
 */
export const moderationCaseHandler: WorkItemHandler = {
  async lockSubject(em, item) {
    const report = await reportOf(em, item);
    if (!report) return;
    await lockTarget(em, { territoryId: report.territory_id, targetType: report.target_type, targetId: report.target_id });
  },
  async apply(em: EntityManager, item, outcome: WorkItemOutcome, actorUserId) {
    const report = await reportOf(em, item);
    if (!report) return;
    if (report.status !== 'OPEN') throw conflict('This report has already been decided.', 'WORK_ITEM_NOT_PENDING');
    // No one decides a report about themselves or their post (dismissed reports stop counting toward the sanction).
    if (await isAbout(em, report, actorUserId)) throw forbidden('You cannot decide a report about yourself or your content.', 'OWN_REQUEST');
    const at = clock.now();
    if (outcome === 'APPROVED') {
      await applySanction(
        em,
        { territoryId: report.territory_id, targetType: report.target_type, targetId: report.target_id },
        { source: 'MODERATION_CASE', reporterCount: 0, actorUserId, at },
      );
      return;
    }
    await dismissReports(em, [report.id], at, actorUserId);
  },
};
