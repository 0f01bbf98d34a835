/**
 * SQL of the alert list (a territory's VALIDATED alerts, newest first, and its count): both on the partial
 * `alert_validated_territory_idx` (territory, created, id) where status = 'VALIDATED'.
 */
import { isoColumn, type SqlQuery } from '../../db/sql.js';
import type { AlertStatus } from '../../entities/alert.entity.js';

/** An alert under the entity's own property names, so one output mapping serves entities and rows; ISO timestamps. */
export interface AlertFacts {
  id: string;
  territoryId: string;
  title: string;
  description: string;
  latitude: number | null;
  longitude: number | null;
  status: AlertStatus;
  reportedByUserId: string;
  postId: string | null;
  createdAtUtc: string;
  decidedAtUtc: string | null;
  decidedByUserId: string | null;
}

const FACTS = `a.id, a.territory_id as "territoryId", a.title, a.description, a.latitude, a.longitude, a.status,
  a.reported_by_user_id as "reportedByUserId", a.post_id as "postId", ${isoColumn('a.created_at_utc')} as "createdAtUtc",
  ${isoColumn('a.decided_at_utc')} as "decidedAtUtc", a.decided_by_user_id as "decidedByUserId"`;

const VALIDATED_OF_TERRITORY = `from alert a where a.territory_id = ?::uuid and a.status = 'VALIDATED'`;

export function validatedAlertsQuery(territoryId: string, offset: number, limit: number): SqlQuery {
  return {
    sql: `select ${FACTS} ${VALIDATED_OF_TERRITORY} order by a.created_at_utc desc, a.id desc offset ?::int limit ?::int`,
    params: [territoryId, offset, limit],
  };
}

/** How many alerts `validatedAlertsQuery` pages through (the `/paged` envelope's totalCount). */
export function validatedAlertsCountQuery(territoryId: string): SqlQuery {
  return { sql: `select count(*)::int as total ${VALIDATED_OF_TERRITORY}`, params: [territoryId] };
}
