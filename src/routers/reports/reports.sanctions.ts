/**
 * The effect of a sanction on its target (DESIGN section 14): a post becomes HIDDEN (through the feed domain), a
 * user may not create content in the territory for `Reports:RestrictionDays`. Applied by the report-threshold job
 * (once per target and territory: the unique key of `report_sanction`) or by a moderator's decision on a
 * MODERATION_CASE. Both take the target's advisory lock first, so they never interleave on one target.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, pgArray } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import type { ReportTargetType, SanctionSource } from '../../entities/report.entity.js';
import { newId } from '../../platform/ids.js';
import { hidePost } from '../feed/feed.service.js';
import { readConfigNumber } from '../system-config/system-config.queries.js';
import { cancelPendingWorkItems } from '../work-items/work-items.service.js';

export const DEFAULT_RESTRICTION_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface SanctionTarget {
  territoryId: string;
  targetType: ReportTargetType;
  targetId: string;
}

/** Serialises every sanction writer of one target (threshold job runs, moderation-case decisions). */
export async function lockTarget(em: EntityManager, target: SanctionTarget) {
  await execSql(em, `select pg_advisory_xact_lock(hashtextextended(?, 0))`, [`report-target:${target.territoryId}:${target.targetType}:${target.targetId}`]);
}

/** Hides the post or restricts the user. */
async function applyEffect(em: EntityManager, target: SanctionTarget, sanctionId: string | null, at: Date) {
  if (target.targetType === 'POST') {
    await hidePost(em, target.targetId);
    return;
  }
  const days = await readConfigNumber(em, 'Reports:RestrictionDays', DEFAULT_RESTRICTION_DAYS);
  await execSql(
    em,
    `insert into posting_restriction (id, created_at_utc, territory_id, user_id, ends_at_utc, sanction_id)
     select ?, ?, ?, u.id, ?, ? from app_user u where u.id = ?`,
    [newId(), at, target.territoryId, new Date(at.getTime() + days * DAY_MS), sanctionId, target.targetId],
  );
}

/** The target's OPEN reports become ACTIONED and their pending moderation cases are cancelled. */
async function actionOpenReports(em: EntityManager, target: SanctionTarget, at: Date, actorUserId: string | null) {
  const actioned = await execSql<{ id: string }>(
    em,
    `update report set status = 'ACTIONED', decided_at_utc = ?, decided_by_user_id = ?
      where territory_id = ? and target_type = ? and target_id = ? and status = 'OPEN' returning id`,
    [at, actorUserId, target.territoryId, target.targetType, target.targetId],
  );
  await cancelPendingWorkItems(em, {
    type: 'MODERATION_CASE',
    subjectIds: actioned.map((r) => r.id),
    notes: 'The reported content was sanctioned.',
    actorUserId,
    at,
  });
}

/**
 * Records the sanction of a target and applies it, inside the caller's transaction. THRESHOLD applies only when
 * no sanction of the target was recorded before (answers whether this call applied it); a moderator's decision
 * always applies its effect (records the sanction when it is the first).
 *
 * "Once" is for good, per target and territory: DESIGN 14 and issue 12 say the automatic sanction "is applied
 * once", and the spec only says a threshold "can trigger an automatic sanction", nowhere that a restriction that
 * ended re-arms it. So a new wave of reports after a user's 7-day restriction ended (or against a post a moderator
 * already hid) sanctions nothing by itself: each of those reports still opens a MODERATION_CASE, and a moderator's
 * APPROVED applies the effect again (a new restriction). The unique key of `report_sanction` (territory, target type,
 * target) is what enforces it, for concurrent job runs too; `targetsOverThreshold` skips sanctioned targets.
 */
export async function applySanction(
  em: EntityManager,
  target: SanctionTarget,
  opts: { source: SanctionSource; reporterCount: number; actorUserId: string | null; at: Date },
): Promise<boolean> {
  await lockTarget(em, target);
  const [inserted] = await execSql<{ id: string }>(
    em,
    `insert into report_sanction (id, created_at_utc, territory_id, target_type, target_id, source, reporter_count, applied_by_user_id)
     values (?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (territory_id, target_type, target_id) do nothing returning id`,
    [newId(), opts.at, target.territoryId, target.targetType, target.targetId, opts.source, opts.reporterCount, opts.actorUserId],
  );
  if (!inserted && opts.source === 'THRESHOLD') return false;
  await applyEffect(em, target, inserted?.id ?? null, opts.at);
  await actionOpenReports(em, target, opts.at, opts.actorUserId);
  audit(em, {
    actorUserId: opts.actorUserId,
    action: 'report.sanction_applied',
    subjectType: target.targetType === 'POST' ? 'Post' : 'User',
    subjectId: target.targetId,
    territoryId: target.territoryId,
    data: { source: opts.source, reporterCount: opts.reporterCount },
  });
  await em.flush();
  return true;
}

/** Dismisses OPEN reports (a moderator's REJECTED or NOACTION). */
export async function dismissReports(em: EntityManager, reportIds: string[], at: Date, actorUserId: string) {
  if (reportIds.length === 0) return;
  await execSql(em, `update report set status = 'DISMISSED', decided_at_utc = ?, decided_by_user_id = ? where id = any(?::uuid[]) and status = 'OPEN'`, [
    at,
    actorUserId,
    pgArray(reportIds),
  ]);
}
