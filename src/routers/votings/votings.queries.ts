import type { EntityManager } from '@mikro-orm/postgresql';
import { execSql, isoColumn } from '../../db/sql.js';
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

export async function votingById(em: EntityManager, territoryId: string, votingId: string, lock: '' | 'for update' | 'for share' = '') {
  const [row] = await execSql<VotingRow>(em, `select ${VOTING_COLUMNS} from voting where id = ? and territory_id = ? ${lock}`, [votingId, territoryId]);
  return row ?? null;
}

/**
 * A territory's votings the viewer may see, newest first: Drafts only to their creator and curators, CuratorsOnly
 * only to curators (`curator` covers SYSTEM_ADMIN).
 */
export function visibleVotings(
  em: EntityManager,
  filter: { territoryId: string; status?: VotingStatus; viewerId: string; curator: boolean; skip: number; take: number },
) {
  const params: unknown[] = [filter.territoryId];
  let where = 'territory_id = ?';
  if (filter.status) {
    where += ' and status = ?';
    params.push(filter.status);
  }
  if (!filter.curator) {
    where += ` and visibility <> 'CuratorsOnly' and (status <> 'Draft' or created_by_user_id = ?)`;
    params.push(filter.viewerId);
  }
  params.push(filter.take, filter.skip);
  return execSql<VotingRow>(em, `select ${VOTING_COLUMNS} from voting where ${where} order by created_at_utc desc, id desc limit ? offset ?`, params);
}

export async function voteCounts(em: EntityManager, votingId: string) {
  return execSql<{ selected_option: string; n: number }>(
    em,
    'select selected_option, count(*)::int as n from vote where voting_id = ? group by selected_option',
    [votingId],
  );
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

/** The user's votes, newest first, with their votings (governance profile). */
export function votingHistoryOf(em: EntityManager, userId: string) {
  return execSql<{ voting_id: string; territory_id: string; title: string; type: VotingType; selected_option: string; voted_at_utc: string }>(
    em,
    `select v.id as voting_id, v.territory_id, v.title, v.type, x.selected_option, ${isoColumn('x.created_at_utc')} as voted_at_utc
       from vote x join voting v on v.id = x.voting_id
      where x.user_id = ? order by x.created_at_utc desc, x.id desc limit 500`,
    [userId],
  );
}

export async function moderationRuleVotesOf(em: EntityManager, userId: string): Promise<number> {
  const [row] = await execSql<{ n: number }>(
    em,
    `select count(*)::int as n from vote x join voting v on v.id = x.voting_id where x.user_id = ? and v.type = 'ModerationRule'`,
    [userId],
  );
  return row?.n ?? 0;
}
