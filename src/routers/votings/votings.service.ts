import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { execSql, pgArray, runHotRead } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { MODERATION_RULE_TYPES, type ModerationRuleType } from '../../entities/moderation-rule.entity.js';
import { normalizeFeatureFlag, type TerritoryFeatureFlag } from '../../entities/territory.entity.js';
import { Voting, VOTING_TRANSITIONS, type VotingStatus, type VotingType } from '../../entities/voting.entity.js';
import type { AccountEraser } from '../../platform/account-erasure.js';
import { newId } from '../../platform/ids.js';
import { AppError, badRequest, conflict, forbidden, notFound, validationFailed } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory, type TerritoryAccess } from '../../policy/territory-access.js';
import { insertModerationRule, parseRuleConfig } from '../moderation-rules/moderation-rules.service.js';
import { addTerritoryTag, setTerritoryFlag } from '../territories/territory-changes.js';
import { dueVotings, visibleVotingsQuery, voteCounts, votingById, type VotingRow } from './votings.queries.js';
import type { CreateVotingInput, VotingOutput, VotingResultsOutput } from './votings.schemas.js';

const toOutput = (r: VotingRow): VotingOutput => ({
  id: r.id,
  territoryId: r.territory_id,
  createdByUserId: r.created_by_user_id,
  type: r.type,
  title: r.title,
  description: r.description,
  options: r.options,
  visibility: r.visibility,
  status: r.status,
  startsAtUtc: r.starts_at_utc,
  endsAtUtc: r.ends_at_utc,
  payload: r.payload ?? {},
  openedAtUtc: r.opened_at_utc,
  closedAtUtc: r.closed_at_utc,
  winner: r.winner,
  createdRuleId: r.created_rule_id,
  createdAtUtc: r.created_at_utc,
});

/** Types residents (and curators) propose; the others are the curators'. */
const RESIDENT_TYPES: readonly VotingType[] = ['ThemePrioritization', 'TerritoryCharacterization', 'CommunityPolicy'];
const CLOSED: readonly VotingStatus[] = ['Closed', 'Approved', 'Rejected'];

/** Members and the territory's curators and moderators (who may not be members) see its votings. */
const PARTICIPANTS = {
  as: ['member', 'CURATOR', 'MODERATOR'],
  denied: { message: 'Only members of this territory can take part in its votings.', code: 'NOT_MEMBER' },
} as const;

const isCurator = (access: TerritoryAccess) => access.holds('CURATOR');

/** Whether the caller sees the voting at all (a voting they may not see is a 404, like a missing one). */
function sees(access: TerritoryAccess, v: VotingRow): boolean {
  if (isCurator(access)) return true;
  if (v.visibility === 'CuratorsOnly') return false;
  return v.status !== 'Draft' || v.created_by_user_id === access.caller?.id;
}

/** Whether the caller may vote in it: AllMembers members, ResidentsOnly residents, CuratorsOnly curators. */
function mayVote(access: TerritoryAccess, v: VotingRow): boolean {
  if (v.visibility === 'CuratorsOnly') return isCurator(access);
  if (v.visibility === 'ResidentsOnly') return access.isResident;
  return access.isMember || isCurator(access);
}

async function visibleVoting(ctx: ServiceContext, access: TerritoryAccess, votingId: string, lock: '' | 'for update' | 'for share' = '') {
  // Given the context, a plain read runs on the pool; `{ ...ctx, em: tx }` reads (and locks) in the transaction.
  const voting = await votingById(ctx, access.territoryId, votingId, lock);
  if (!voting || !sees(access, voting)) throw notFound('Voting');
  return voting;
}

const ruleJson = z.object({ name: z.string().trim().min(1).max(200).optional(), ruleType: z.enum(MODERATION_RULE_TYPES), config: z.unknown() }).strict();

/**
 * A ModerationRule voting's `payload.ruleJson`, validated (400 naming `payload.ruleJson` or `config.<path>`). Creation
 * stores what it answers and close checks the stored value again, so a proposal that is not a valid rule never is
 * applied as one.
 */
function parseRuleProposal(value: unknown): { name?: string; ruleType: ModerationRuleType; config: Record<string, unknown> } {
  const parsed = ruleJson.safeParse(value);
  if (!parsed.success) throw validationFailed('payload.ruleJson', parsed.error.issues[0]!.message);
  return { ...parsed.data, config: parseRuleConfig(parsed.data.ruleType, parsed.data.config) };
}

/**
 * The rule config an option of a ModerationRule voting without `ruleJson` proposes: ProhibitedWords of the option's
 * comma-separated words. Creation checks every option with it and close applies the winner's, so an option that
 * was accepted can be applied.
 */
export function optionRuleConfig(option: string): { words: string[] } {
  return {
    words: option
      .split(',')
      .map((w) => w.trim())
      .filter(Boolean),
  };
}

/** Each option must make a valid ProhibitedWords rule (400 naming `options.<i>`): any of them may win. */
function checkOptionRules(options: readonly string[]) {
  options.forEach((option, i) => {
    const config = optionRuleConfig(option);
    if (config.words.length === 0) throw validationFailed(`options.${i}`, 'must name at least one word to prohibit (words are separated by commas)');
    try {
      parseRuleConfig('ProhibitedWords', config);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      throw validationFailed(`options.${i}`, error.errors?.[0]?.message ?? error.message);
    }
  });
}

/**
 * The payload each type takes, checked on creation (400 naming `payload.<field>`), and for a ModerationRule voting
 * without `ruleJson` its options (each the rule it proposes). Whatever close would apply is checked here.
 */
function parsePayload(input: CreateVotingInput): Record<string, unknown> {
  if (input.type === 'FeatureFlag') {
    const flag = typeof input.payload.flag === 'string' ? normalizeFeatureFlag(input.payload.flag) : null;
    if (!flag) throw validationFailed('payload.flag', 'must name a territory feature flag');
    if (typeof input.payload.enable !== 'boolean') throw validationFailed('payload.enable', 'must be a boolean');
    return { flag, enable: input.payload.enable };
  }
  if (input.type === 'ModerationRule') {
    if (input.payload.ruleJson !== undefined) return { ruleJson: parseRuleProposal(input.payload.ruleJson) };
    checkOptionRules(input.options);
  }
  return {};
}

export async function createVoting(ctx: ServiceContext, input: CreateVotingInput): Promise<VotingOutput> {
  const residentType = RESIDENT_TYPES.includes(input.type);
  const access = await requireTerritory(ctx, input.territoryId, {
    as: residentType ? ['resident', 'CURATOR'] : 'CURATOR',
    denied: residentType
      ? { message: `Only residents and curators of this territory can propose ${input.type} votings.`, code: 'NOT_RESIDENT' }
      : { message: `Only curators of this territory can propose ${input.type} votings.`, code: 'FORBIDDEN' },
  });
  // A CuratorsOnly voting is invisible to non-curators (DESIGN section 14), its creator too: only curators make one.
  if (input.visibility === 'CuratorsOnly' && !access.holds('CURATOR')) {
    throw forbidden('Only curators of this territory can propose a CuratorsOnly voting.', 'FORBIDDEN');
  }
  const now = ctx.clock.now();
  // A period already over could never be voted on (the schedule would open and close it at once, Rejected).
  if (input.endsAtUtc && input.endsAtUtc <= now) throw validationFailed('endsAtUtc', 'must be in the future');
  const payload = parsePayload(input);
  const { em, user } = ctx;
  const id = await em.transactional(async (tx) => {
    const voting = tx.create(Voting, {
      territoryId: access.territoryId,
      createdByUserId: user.id,
      type: input.type,
      title: input.title,
      description: input.description,
      options: input.options,
      visibility: input.visibility,
      status: 'Draft',
      startsAtUtc: input.startsAtUtc ?? null,
      endsAtUtc: input.endsAtUtc ?? null,
      payload,
    });
    audit(tx, { actorUserId: user.id, action: 'voting.created', subjectType: 'Voting', subjectId: voting.id, territoryId: access.territoryId });
    await tx.flush();
    return voting.id;
  });
  return toOutput((await votingById(em, access.territoryId, id))!);
}

export async function listVotings(ctx: ServiceContext, input: { territoryId: string; status?: VotingStatus; skip: number; take: number }) {
  const access = await requireTerritory(ctx, input.territoryId, PARTICIPANTS);
  const rows = await runHotRead<VotingRow>(
    ctx,
    visibleVotingsQuery({ ...input, territoryId: access.territoryId, viewerId: ctx.user.id, curator: isCurator(access) }),
  );
  return rows.map(toOutput);
}

export async function getVoting(ctx: ServiceContext, input: { territoryId: string; votingId: string }) {
  const access = await requireTerritory(ctx, input.territoryId, PARTICIPANTS);
  return toOutput(await visibleVoting(ctx, access, input.votingId));
}

function requireCreatorOrCurator(access: TerritoryAccess, voting: VotingRow, action: string) {
  if (voting.created_by_user_id !== access.caller?.id && !isCurator(access)) {
    throw forbidden(`Only the creator of this voting or a curator can ${action} it.`);
  }
}

/**
 * The one writer of a voting's status: moves it to `to` only from a status VOTING_TRANSITIONS allows (the database's
 * trigger refuses anything else too). False when the voting is not in such a status any more.
 */
async function moveVoting(tx: EntityManager, votingId: string, to: VotingStatus, set: { column: string; value: unknown }[]): Promise<boolean> {
  const assignments = set.map((s) => `, ${s.column} = ?`).join('');
  const moved = await execSql(tx, `update voting set status = ?${assignments} where id = ? and status = any(?::text[]) returning id`, [
    to,
    ...set.map((s) => s.value),
    votingId,
    pgArray(VOTING_TRANSITIONS[to]),
  ]);
  return moved.length > 0;
}

/** Draft -> Open, inside the caller's transaction (the voting row locked); false when not a Draft any more. */
const openLocked = (tx: EntityManager, votingId: string, now: Date) => moveVoting(tx, votingId, 'Open', [{ column: 'opened_at_utc', value: now }]);

/** The creator or a curator opens a Draft (200 with the voting); anything else is 409 VOTING_NOT_DRAFT. */
export async function openVoting(ctx: ServiceContext, input: { territoryId: string; votingId: string }) {
  const access = await requireTerritory(ctx, input.territoryId, PARTICIPANTS);
  await ctx.em.transactional(async (tx) => {
    const voting = await visibleVoting({ ...ctx, em: tx }, access, input.votingId, 'for update');
    requireCreatorOrCurator(access, voting, 'open');
    if (voting.status !== 'Draft' || !(await openLocked(tx, voting.id, ctx.clock.now()))) {
      throw conflict('Only a Draft voting can be opened.', 'VOTING_NOT_DRAFT');
    }
    audit(tx, { actorUserId: ctx.user.id, action: 'voting.opened', subjectType: 'Voting', subjectId: voting.id, territoryId: voting.territory_id });
    await tx.flush();
  });
  return toOutput((await votingById(ctx.em, access.territoryId, input.votingId))!);
}

/** One vote per user (unique key): 204. Not open: 409; unknown option: 400; a second vote: 409; not eligible: 403. */
export async function vote(ctx: ServiceContext, input: { territoryId: string; votingId: string; selectedOption: string }): Promise<void> {
  const access = await requireTerritory(ctx, input.territoryId, PARTICIPANTS);
  await ctx.em.transactional(async (tx) => {
    // A share lock: closing (which locks for update) waits for votes in flight and counts them.
    const voting = await visibleVoting({ ...ctx, em: tx }, access, input.votingId, 'for share');
    if (!mayVote(access, voting)) throw forbidden(`This voting is for ${voting.visibility === 'CuratorsOnly' ? 'curators' : 'residents'} only.`);
    const now = ctx.clock.now();
    if (voting.status !== 'Open' || (voting.ends_at_utc && new Date(voting.ends_at_utc) <= now)) {
      throw conflict('This voting is not open.', 'VOTING_NOT_OPEN');
    }
    // The option as written, or with the blanks around it that options lose when they are stored (` Parks `).
    const chosen = voting.options.includes(input.selectedOption) ? input.selectedOption : voting.options.find((o) => o === input.selectedOption.trim());
    if (chosen === undefined) {
      throw badRequest(`"${input.selectedOption}" is not an option of this voting.`, 'UNKNOWN_VOTING_OPTION', [
        { field: 'selectedOption', message: 'must be one of the options' },
      ]);
    }
    const inserted = await execSql(
      tx,
      `insert into vote (id, created_at_utc, voting_id, user_id, selected_option) values (?, ?, ?, ?, ?)
       on conflict (voting_id, user_id) do nothing returning id`,
      [newId(), now, voting.id, ctx.user.id, chosen],
    );
    if (inserted.length === 0) throw conflict('You have already voted in this voting.', 'ALREADY_VOTED');
  });
}

/** Counts per option (every option, zero included), the winner (earliest of the most voted) and the outcome. */
export function tally(options: readonly string[], counts: readonly { selected_option: string; n: number }[]) {
  const results: Record<string, number> = Object.fromEntries(options.map((o) => [o, 0]));
  for (const c of counts) if (c.selected_option in results) results[c.selected_option] = c.n;
  const totalVotes = Object.values(results).reduce((a, b) => a + b, 0);
  const top = Math.max(...Object.values(results));
  const leaders = options.filter((o) => results[o] === top);
  const winner = totalVotes > 0 ? leaders[0]! : null;
  const status: VotingStatus = totalVotes > 0 && leaders.length === 1 ? 'Approved' : 'Rejected';
  return { results, totalVotes, winner, status };
}

/** What an approved result does, decided before anything is written. */
type Effect =
  | { kind: 'none' }
  | { kind: 'tag'; tag: string }
  | { kind: 'flag'; flag: TerritoryFeatureFlag; enable: boolean }
  | { kind: 'rule'; name: string; ruleType: ModerationRuleType; config: Record<string, unknown> }
  /** The stored voting's result is not a valid change (a voting created before creation checked it). */
  | { kind: 'notApplicable'; reason: string };

const NO_EFFECT: Effect = { kind: 'none' };

/** The reason of a validation problem, or the error itself when it is anything else. */
function validationReason(error: unknown): string {
  if (error instanceof AppError && error.problemCode === 'VALIDATION_FAILED') return error.message;
  throw error;
}

/**
 * What an approved result does (DESIGN 14): TerritoryCharacterization adds the winner to the territory's tags;
 * FeatureFlag sets the flag and ModerationRule with `ruleJson` creates that rule when the first option (the
 * proposal) wins; a ModerationRule without `ruleJson` creates a ProhibitedWords rule of the winning option's
 * words (`optionRuleConfig`). ThemePrioritization and CommunityPolicy are recorded only. The stored values are
 * checked as creation checks them: a voting stored before those checks may hold a result that is no valid change.
 */
function effectOf(voting: VotingRow, winner: string): Effect {
  const proposalWon = winner === voting.options[0];
  switch (voting.type) {
    case 'TerritoryCharacterization':
      if (!winner.trim()) return { kind: 'notApplicable', reason: 'the winning option is an empty tag' };
      return { kind: 'tag', tag: winner };
    case 'FeatureFlag': {
      if (!proposalWon) return NO_EFFECT;
      const flag = normalizeFeatureFlag(String(voting.payload.flag ?? ''));
      if (!flag) return { kind: 'notApplicable', reason: 'payload.flag: not a territory feature flag' };
      if (typeof voting.payload.enable !== 'boolean') return { kind: 'notApplicable', reason: 'payload.enable: not a boolean' };
      return { kind: 'flag', flag, enable: voting.payload.enable };
    }
    case 'ModerationRule': {
      try {
        if (voting.payload.ruleJson !== undefined) {
          if (!proposalWon) return NO_EFFECT;
          const proposal = parseRuleProposal(voting.payload.ruleJson);
          return { kind: 'rule', name: proposal.name ?? voting.title, ruleType: proposal.ruleType, config: proposal.config };
        }
        return { kind: 'rule', name: voting.title, ruleType: 'ProhibitedWords', config: parseRuleConfig('ProhibitedWords', optionRuleConfig(winner)) };
      } catch (error) {
        return { kind: 'notApplicable', reason: validationReason(error) };
      }
    }
    default:
      return NO_EFFECT;
  }
}

async function applyEffect(tx: EntityManager, voting: VotingRow, effect: Effect, actorUserId: string | null) {
  switch (effect.kind) {
    case 'tag':
      await addTerritoryTag(tx, voting.territory_id, effect.tag);
      return;
    case 'flag':
      await setTerritoryFlag(tx, voting.territory_id, effect.flag, effect.enable);
      return;
    case 'rule': {
      const ruleId = await insertModerationRule(tx, {
        territoryId: voting.territory_id,
        name: effect.name,
        ruleType: effect.ruleType,
        config: effect.config,
        isActive: true,
        createdByUserId: actorUserId,
      });
      await execSql(tx, 'update voting set created_rule_id = ? where id = ?', [ruleId, voting.id]);
      return;
    }
    case 'notApplicable':
      // The community's decision stands (status and winner recorded) but is no valid change, so nothing is applied:
      // refusing the close instead would leave the voting Open for ever. The trail says why.
      audit(tx, {
        actorUserId,
        action: 'voting.result_not_applied',
        subjectType: 'Voting',
        subjectId: voting.id,
        territoryId: voting.territory_id,
        data: { winner: voting.winner, reason: effect.reason },
      });
      return;
    default:
      return;
  }
}

/**
 * Closes an Open voting inside the caller's transaction (its row locked for update): tally, status, effects. A
 * result that is no valid change is recorded and not applied; a failure while applying one fails the whole close
 * (nothing is Approved without its effect).
 */
async function closeLocked(tx: EntityManager, voting: VotingRow, now: Date, actorUserId: string | null) {
  const outcome = tally(voting.options, await voteCounts(tx, voting.id));
  const effect = outcome.status === 'Approved' && outcome.winner ? effectOf(voting, outcome.winner) : NO_EFFECT;
  const closed = await moveVoting(tx, voting.id, outcome.status, [
    { column: 'closed_at_utc', value: now },
    { column: 'results', value: JSON.stringify(outcome.results) },
    { column: 'winner', value: outcome.winner },
  ]);
  if (!closed) throw conflict('Only an Open voting can be closed.', 'VOTING_NOT_OPEN');
  await applyEffect(tx, { ...voting, winner: outcome.winner }, effect, actorUserId);
  audit(tx, {
    actorUserId,
    action: 'voting.closed',
    subjectType: 'Voting',
    subjectId: voting.id,
    territoryId: voting.territory_id,
    data: { status: outcome.status, winner: outcome.winner, totalVotes: outcome.totalVotes },
  });
  await tx.flush();
}

/** The creator or a curator closes an Open voting; the result is decided and applied at once (200 with it). */
export async function closeVoting(ctx: ServiceContext, input: { territoryId: string; votingId: string }) {
  const access = await requireTerritory(ctx, input.territoryId, PARTICIPANTS);
  await ctx.em.transactional(async (tx) => {
    const voting = await visibleVoting({ ...ctx, em: tx }, access, input.votingId, 'for update');
    requireCreatorOrCurator(access, voting, 'close');
    if (voting.status !== 'Open') throw conflict('Only an Open voting can be closed.', 'VOTING_NOT_OPEN');
    await closeLocked(tx, voting, ctx.clock.now(), ctx.user.id);
  });
  return toOutput((await votingById(ctx.em, access.territoryId, input.votingId))!);
}

export async function getResults(ctx: ServiceContext, input: { territoryId: string; votingId: string }): Promise<VotingResultsOutput> {
  const access = await requireTerritory(ctx, input.territoryId, PARTICIPANTS);
  const voting = await visibleVoting(ctx, access, input.votingId);
  if (!CLOSED.includes(voting.status)) throw conflict('Results are available once the voting is closed.', 'VOTING_NOT_CLOSED');
  const recorded = voting.results ?? tally(voting.options, await voteCounts(ctx, voting.id)).results;
  // In the proposal's order of options (jsonb keeps its keys in its own order).
  const results: Record<string, number> = Object.fromEntries(voting.options.map((o) => [o, recorded[o] ?? 0]));
  const totalVotes = Object.values(results).reduce((a, b) => a + b, 0);
  return { votingId: voting.id, status: voting.status, totalVotes, results, winner: voting.winner };
}

/** A due voting the votings-schedule job could not move (its transaction rolled back: the voting is unchanged). */
export interface ScheduleFailure {
  votingId: string;
  territoryId: string;
  error: string;
}

/** Opens or closes one due voting in its own transaction under its row lock; false when nothing was due any more. */
function runDueVoting(em: EntityManager, due: { id: string; territory_id: string }, now: Date): Promise<boolean> {
  return em.fork().transactional(async (tx) => {
    const voting = await votingById(tx, due.territory_id, due.id, 'for update');
    if (!voting) return false;
    if (voting.status === 'Draft' && voting.starts_at_utc && new Date(voting.starts_at_utc) <= now) {
      if (voting.ends_at_utc && new Date(voting.ends_at_utc) <= now) {
        // Its whole period passed while it waited: it opens and closes at once (with no votes: Rejected).
        await openLocked(tx, voting.id, now);
        await closeLocked(tx, { ...voting, status: 'Open' }, now, null);
        return true;
      }
      return openLocked(tx, voting.id, now);
    }
    if (voting.status === 'Open' && voting.ends_at_utc && new Date(voting.ends_at_utc) <= now) {
      await closeLocked(tx, voting, now, null);
      return true;
    }
    return false;
  });
}

/**
 * The votings-schedule job: opens Drafts whose `startsAtUtc` has come and closes Open votings whose `endsAtUtc`
 * has passed, one transaction each under the voting's row lock (a run racing another, or a manual open/close, finds
 * the status changed and skips it). A voting that fails is left as it was and reported; the others are still moved,
 * so one voting cannot hold back every territory's. Answers how many it changed and which failed.
 */
export async function runVotingsSchedule(em: EntityManager, now: Date): Promise<{ changed: number; failed: ScheduleFailure[] }> {
  let changed = 0;
  const failed: ScheduleFailure[] = [];
  for (const due of await dueVotings(em, now)) {
    try {
      if (await runDueVoting(em, due, now)) changed++;
    } catch (error) {
      failed.push({ votingId: due.id, territoryId: due.territory_id, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return { changed, failed };
}

/** Account deletion: how the person voted goes (results of closed votings are recorded on the voting). */
export const eraseVotes: AccountEraser = async ({ em, userId }) => {
  await execSql(em, 'delete from vote where user_id = ?', [userId]);
};
