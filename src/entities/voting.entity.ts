import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, textArray, refuseDeletedAccountTrigger } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

/** Spec "Voting", spelled as the spec spells them. */
export const VOTING_TYPES = ['ThemePrioritization', 'ModerationRule', 'TerritoryCharacterization', 'FeatureFlag', 'CommunityPolicy'] as const;
export type VotingType = (typeof VOTING_TYPES)[number];
export const VOTING_VISIBILITIES = ['AllMembers', 'ResidentsOnly', 'CuratorsOnly'] as const;
export type VotingVisibility = (typeof VOTING_VISIBILITIES)[number];
/** Draft -> Open -> Approved | Rejected (Closed is never stored: closing decides the result at once, DESIGN 14). */
export const VOTING_STATUSES = ['Draft', 'Open', 'Closed', 'Approved', 'Rejected'] as const;
export type VotingStatus = (typeof VOTING_STATUSES)[number];
/**
 * The voting state machine, in one table: the statuses each status may be reached from. The service's one status
 * writer (`moveVoting`) and the database trigger of migration `voting_status_transitions` both read it, so an
 * illegal transition is refused even when the application code is bypassed.
 */
export const VOTING_TRANSITIONS: Readonly<Record<VotingStatus, readonly VotingStatus[]>> = {
  Draft: [],
  Open: ['Draft'],
  Closed: ['Open'],
  Approved: ['Open', 'Closed'],
  Rejected: ['Open', 'Closed'],
};

/** A community voting of a territory. `results` (option -> count) and `winner` are recorded on close. */
export const Voting = defineEntity({
  name: 'Voting',
  tableName: 'voting',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    createdByUserId: () => p.manyToOne(User).mapToPk().fieldName('created_by_user_id').deleteRule('set null').nullable(),
    type: p.string().length(40).$type<VotingType>(),
    title: p.string().length(200),
    description: p.string().length(2000).nullable(),
    options: textArray().$type<string[]>(),
    visibility: p.string().length(20).$type<VotingVisibility>(),
    status: p.string().length(20).$type<VotingStatus>().default('Draft'),
    startsAtUtc: p.datetime().nullable(),
    endsAtUtc: p.datetime().nullable(),
    payload: p.json<Record<string, unknown>>().default('{}'),
    openedAtUtc: p.datetime().nullable(),
    closedAtUtc: p.datetime().nullable(),
    results: p.json<Record<string, number>>().nullable(),
    winner: p.string().length(100).nullable(),
    /** The moderation rule an approved ModerationRule voting created. */
    createdRuleId: p.uuid().nullable(),
  },
  indexes: [
    { name: 'voting_territory_idx', expression: `create index "voting_territory_idx" on "voting" ("territory_id", "created_at_utc" desc, "id" desc)` },
    // The votings-schedule job: Drafts to open and Open ones to close.
    {
      name: 'voting_schedule_idx',
      expression: `create index "voting_schedule_idx" on "voting" ("status", "starts_at_utc", "ends_at_utc") where status in ('Draft', 'Open')`,
    },
    { name: 'voting_rule_idx', expression: `create index "voting_rule_idx" on "voting" ("created_rule_id") where created_rule_id is not null` },
  ],
  // VOTING_TRANSITIONS held by the database: the function is created by migration Migration20261125152000.
  triggers: [
    {
      name: 'voting_status_transition',
      timing: 'before',
      events: ['update'],
      expression: `create trigger "voting_status_transition" before update of "status" on "voting" for each row execute function voting_status_transition()`,
    },
  ],
});

/** One vote per user and voting (a unique key). */
export const Vote = defineEntity({
  name: 'Vote',
  tableName: 'vote',
  triggers: [refuseDeletedAccountTrigger('vote', 'user_id')],
  properties: {
    ...baseProperties,
    votingId: () => p.manyToOne(Voting).mapToPk().fieldName('voting_id').deleteRule('cascade'),
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade'),
    selectedOption: p.string().length(100),
  },
  uniques: [{ name: 'vote_voting_user_unique', properties: ['votingId', 'userId'] }],
  indexes: [{ name: 'vote_user_idx', expression: `create index "vote_user_idx" on "vote" ("user_id", "created_at_utc" desc)` }],
});
