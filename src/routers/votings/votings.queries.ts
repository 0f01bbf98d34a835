import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, type HotReadSource, isoColumn, runHotRead, type SqlQuery } from '../../db/sql.js';
import type { VotingStatus, VotingType, VotingVisibility } from '../../entities/voting.entity.js';

export interface VotingRow {
  id: string;
  territory_id: string;
  created_by_user_id: string | null;
  type: VotingType;
  title: string;
  description: string | null;
  options: string[];
  visibility: VotingVisibility;
  status: VotingStatus;
  starts_at_utc: string | null;
  ends_at_utc: string | null;
  payload: Record<string, unknown>;
  opened_at_utc: string | null;
  closed_at_utc: string | null;
  results: Record<string, number> | null;
  winner: string | null;
  created_rule_id: string | null;
  created_at_utc: string;
}

const VOTING_COLUMNS = `id, territory_id, created_by_user_id, type, title, description, options, visibility, status,
  ${isoColumn('starts_at_utc')} as starts_at_utc, ${isoColumn('ends_at_utc')} as ends_at_utc, payload,
  ${isoColumn('opened_at_utc')} as opened_at_utc, ${isoColumn('closed_at_utc')} as closed_at_utc, results, winner, created_rule_id,
  ${isoColumn('created_at_utc')} as created_at_utc`;

/** A voting of the territory (a key lookup: prepared on the pool; `lock` only inside the caller's transaction). */
export async function votingById(source: HotReadSource, territoryId: string, votingId: string, lock: '' | 'for update' | 'for share' = '') {
  const [row] = await runHotRead<VotingRow>(
    source,
    { sql: `select ${VOTING_COLUMNS} from voting where id = ?::uuid and territory_id = ?::uuid ${lock}`, params: [votingId, territoryId] },
    { prepared: true },
  );
  return row ?? null;
}

/**
 * A territory's votings the viewer may see, newest first: Drafts only to their creator and curators, CuratorsOnly
 * only to curators (`curator` covers SYSTEM_ADMIN).
 */
export function visibleVotingsQuery(filter: {
  territoryId: string;
  status?: VotingStatus;
  viewerId: string;
  curator: boolean;
  skip: number;
  take: number;
}): SqlQuery {
  const params: unknown[] = [filter.territoryId];
  let where = 'territory_id = ?::uuid';
  if (filter.status) {
    where += ' and status = ?';
    params.push(filter.status);
  }
  if (!filter.curator) {
    where += ` and visibility <> 'CuratorsOnly' and (status <> 'Draft' or created_by_user_id = ?::uuid)`;
    params.push(filter.viewerId);
  }
  params.push(filter.take, filter.skip);
  return { sql: `select ${VOTING_COLUMNS} from voting where ${where} order by created_at_utc desc, id desc limit ?::int offset ?::int`, params };
}

/** The votes of a voting per option (on the pool, or inside the caller's transaction). */
export function voteCounts(source: HotReadSource, votingId: string) {
  return runHotRead<{ selected_option: string; n: number }>(source, {
    sql: 'select selected_option, count(*)::int as n from vote where voting_id = ?::uuid group by selected_option',
    params: [votingId],
  });
}

/** Drafts due to open and Open votings due to close (the votings-schedule job). */
export function dueVotings(em: EntityManager, now: Date) {
  return execSql<{ id: string; territory_id: string; status: VotingStatus }>(
    em,
    `select id, territory_id, status from voting
      where (status = 'Draft' and starts_at_utc <= ?) or (status = 'Open' and ends_at_utc <= ?)
      order by created_at_utc limit 500`,
    [now, now],
  );
}

/** The user's votes, newest first, with their votings (governance profile; a list, on the pool). */
export function votingHistoryOf(source: HotReadSource, userId: string) {
  return runHotRead<{ voting_id: string; territory_id: string; title: string; type: VotingType; selected_option: string; voted_at_utc: string }>(source, {
    sql: `select v.id as voting_id, v.territory_id, v.title, v.type, x.selected_option, ${isoColumn('x.created_at_utc')} as voted_at_utc
       from vote x join voting v on v.id = x.voting_id
      where x.user_id = ?::uuid order by x.created_at_utc desc, x.id desc limit 500`,
    params: [userId],
  });
}

/** How many moderation-rule votings the user voted in (governance profile; on the pool). */
export async function moderationRuleVotesOf(source: HotReadSource, userId: string): Promise<number> {
  const [row] = await runHotRead<{ n: number }>(source, {
    sql: `select count(*)::int as n from vote x join voting v on v.id = x.voting_id where x.user_id = ?::uuid and v.type = 'ModerationRule'`,
    params: [userId],
  });
  return row?.n ?? 0;
}
