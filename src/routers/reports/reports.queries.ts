/**
 * Reads of the reports domain, and its reads of other domains' rows (the reported post's facts, whether a reported
 * user exists). Other domains never type SQL against `report`, `report_sanction` or `posting_restriction`.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, type HotReadSource, isoColumn, runHotRead, type SqlQuery } from '../../db/sql.js';
import type { ReportStatus, ReportTargetType } from '../../entities/report.entity.js';
import type { ReportFilter } from './reports.schemas.js';

export interface ReportRow {
  id: string;
  target_type: ReportTargetType;
  target_id: string;
  territory_id: string;
  reason: string;
  details: string | null;
  status: ReportStatus;
  created_at_utc: string;
}

const REPORT_COLUMNS = `id, target_type, target_id, territory_id, reason, details, status, ${isoColumn('created_at_utc')} as created_at_utc`;

export const reportByIdQuery = (id: string): SqlQuery => ({ sql: `select ${REPORT_COLUMNS} from report where id = ?`, params: [id] });

/** The reporter's report of the target created after `since` (the dedup window), newest first. */
export const recentReportByQuery = (reporterUserId: string, targetType: ReportTargetType, targetId: string, since: Date): SqlQuery => ({
  sql: `select ${REPORT_COLUMNS} from report
         where reporter_user_id = ? and target_type = ? and target_id = ? and created_at_utc > ?
         order by created_at_utc desc limit 1`,
  params: [reporterUserId, targetType, targetId, since],
});

function filterSql(filter: ReportFilter & { territoryId: string }) {
  const where = ['territory_id = ?'];
  const params: unknown[] = [filter.territoryId];
  if (filter.targetType) {
    where.push('target_type = ?');
    params.push(filter.targetType);
  }
  if (filter.status) {
    where.push('status = ?');
    params.push(filter.status);
  }
  return { where: where.join(' and '), params };
}

export function reportsPageQuery(filter: ReportFilter & { territoryId: string }, page: { offset: number; limit: number }): SqlQuery {
  const { where, params } = filterSql(filter);
  return {
    sql: `select ${REPORT_COLUMNS} from report where ${where} order by created_at_utc desc, id desc limit ? offset ?`,
    params: [...params, page.limit, page.offset],
  };
}

export function reportsCountQuery(filter: ReportFilter & { territoryId: string }): SqlQuery {
  const { where, params } = filterSql(filter);
  return { sql: `select count(*)::int as total from report where ${where}`, params };
}

/** The reported post's territory and author (any status: a hidden post may still be reported again: deduped). */
export async function postFactsOf(em: EntityManager, postId: string) {
  const [row] = await execSql<{ territory_id: string; author_user_id: string }>(em, 'select territory_id, author_user_id from post where id = ?', [postId]);
  return row ?? null;
}

export async function userExists(em: EntityManager, userId: string): Promise<boolean> {
  const rows = await execSql(em, 'select 1 from app_user where id = ? and deleted_at_utc is null', [userId]);
  return rows.length > 0;
}

/**
 * Targets whose distinct reporters within the window reached the threshold and that carry no sanction yet. Reports a
 * moderator dismissed do not count: the sanction never overrides that decision (new reporters are needed).
 */
export async function targetsOverThreshold(
  em: EntityManager,
  opts: { since: Date; threshold: number; target?: { territoryId: string; targetType: ReportTargetType; targetId: string } },
) {
  const params: unknown[] = [opts.since];
  let narrow = '';
  if (opts.target) {
    narrow = 'and r.territory_id = ? and r.target_type = ? and r.target_id = ?';
    params.push(opts.target.territoryId, opts.target.targetType, opts.target.targetId);
  }
  params.push(opts.threshold);
  return execSql<{ territory_id: string; target_type: ReportTargetType; target_id: string; reporters: number }>(
    em,
    `select r.territory_id, r.target_type, r.target_id, count(distinct r.reporter_user_id)::int as reporters
       from report r
      where r.created_at_utc > ? and r.reporter_user_id is not null and r.status <> 'DISMISSED' ${narrow}
        and not exists (select 1 from report_sanction s
                         where s.territory_id = r.territory_id and s.target_type = r.target_type and s.target_id = r.target_id)
      group by r.territory_id, r.target_type, r.target_id
     having count(distinct r.reporter_user_id) >= ?`,
    params,
  );
}

/** Governance profile: the user's reports filed and how many were actioned (on the pool). */
export async function reportContributionsOf(source: HotReadSource, userId: string) {
  const [row] = await runHotRead<{ filed: number; actioned: number }>(source, {
    sql: `select count(*)::int as filed, (count(*) filter (where status = 'ACTIONED'))::int as actioned from report where reporter_user_id = ?::uuid`,
    params: [userId],
  });
  return { reportsFiled: row?.filed ?? 0, reportsActioned: row?.actioned ?? 0 };
}
