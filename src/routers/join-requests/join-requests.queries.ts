/**
 * SQL of the join-request reads: a request by id, who it was addressed to, and the requests addressed to a caller
 * (listed and counted). Rows carry the entity's property names, so one output mapping serves rows and entities.
 */
import { pgArray, type SqlQuery } from '../../db/sql.js';
import type { JoinRequestStatus } from '../../entities/join-request.entity.js';

export interface JoinRequestFacts {
  id: string;
  territoryId: string;
  requesterUserId: string;
  message: string | null;
  status: JoinRequestStatus;
  /** Timestamps as the driver gives them: the output renders them (`isoValue`), as it renders an entity's dates. */
  createdAtUtc: Date | string;
  decidedAtUtc: Date | string | null;
  decidedByUserId: string | null;
}

const FACTS = `jr.id, jr.territory_id as "territoryId", jr.requester_user_id as "requesterUserId", jr.message, jr.status,
  jr.created_at_utc as "createdAtUtc", jr.decided_at_utc as "decidedAtUtc", jr.decided_by_user_id as "decidedByUserId"`;

export const joinRequestByIdQuery = (id: string): SqlQuery => ({ sql: `select ${FACTS} from join_request jr where jr.id = ?::uuid`, params: [id] });

/** The stored recipients of the requests, ordered by recipient id. */
export const recipientsOfQuery = (joinRequestIds: string[]): SqlQuery => ({
  sql: 'select join_request_id, recipient_user_id from join_request_recipient where join_request_id = any(?::uuid[]) order by recipient_user_id',
  params: [pgArray(joinRequestIds)],
});

/** One row when the user is a stored recipient of the request (its primary key). */
export const storedRecipientQuery = (joinRequestId: string, userId: string): SqlQuery => ({
  sql: 'select 1 from join_request_recipient where join_request_id = ?::uuid and recipient_user_id = ?::uuid',
  params: [joinRequestId, userId],
});

export interface IncomingFilter {
  userId: string;
  /** The territories where the user is CURATOR. */
  curatedTerritoryIds: string[];
  status?: JoinRequestStatus | undefined;
}

/**
 * Requests addressed to the user, or in a territory where the user is CURATOR (the user's own excluded), as a derived
 * table `incoming`. Two branches, each read through its own index (the recipient's, the territory's); the union
 * keeps a request found by both once. A user who curates nothing (most) gets the first branch alone: a union costs
 * PostgreSQL more to plan than the page costs to read.
 */
function incoming(filter: IncomingFilter, columns: string): SqlQuery {
  const notOwn = 'jr.requester_user_id <> ?::uuid and (?::text is null or jr.status = ?::text)';
  const notOwnParams = [filter.userId, filter.status ?? null, filter.status ?? null];
  const addressed = {
    sql: `select ${columns} from join_request_recipient r join join_request jr on jr.id = r.join_request_id where r.recipient_user_id = ?::uuid and ${notOwn}`,
    params: [filter.userId, ...notOwnParams],
  };
  if (filter.curatedTerritoryIds.length === 0) return { sql: `(${addressed.sql}) incoming`, params: addressed.params };
  return {
    sql: `(${addressed.sql}
           union
           select ${columns} from join_request jr where jr.territory_id = any(?::uuid[]) and ${notOwn}) incoming`,
    params: [...addressed.params, pgArray(filter.curatedTerritoryIds), ...notOwnParams],
  };
}

/** The incoming requests, newest first. */
export function incomingQuery(filter: IncomingFilter, page: { offset: number; limit: number }): SqlQuery {
  const { sql, params } = incoming(filter, FACTS);
  return { sql: `select * from ${sql} order by "createdAtUtc" desc, id desc offset ?::int limit ?::int`, params: [...params, page.offset, page.limit] };
}

/** How many requests `incomingQuery` pages through: the union of their ids only. */
export function incomingCountQuery(filter: IncomingFilter): SqlQuery {
  const { sql, params } = incoming(filter, 'jr.id');
  return { sql: `select count(*)::int as n from ${sql}`, params };
}
