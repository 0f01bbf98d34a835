import { z } from 'zod';
import { VOTING_STATUSES, VOTING_TYPES, VOTING_VISIBILITIES } from '../../entities/voting.entity.js';
import { lenientEnum } from '../../platform/enums.js';
import { zId } from '../../platform/ids.js';
import { skipTakeInput } from '../../platform/pagination.js';
import { zOptionalText, zText } from '../../platform/text.js';

export const VOTING_TITLE_MAX = 200;
export const VOTING_DESCRIPTION_MAX = 2000;
export const VOTING_OPTION_MAX = 100;
export const VOTING_OPTIONS_MIN = 2;
export const VOTING_OPTIONS_MAX = 10;

export const votingOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    createdByUserId: z.uuid().nullable(),
    type: z.enum(VOTING_TYPES),
    title: z.string(),
    description: z.string().nullable(),
    options: z.array(z.string()),
    visibility: z.enum(VOTING_VISIBILITIES),
    status: z.enum(VOTING_STATUSES),
    startsAtUtc: z.iso.datetime().nullable(),
    endsAtUtc: z.iso.datetime().nullable(),
    /** FeatureFlag: `{flag, enable}`; ModerationRule: optionally `{ruleJson: {name?, ruleType, config}}`. */
    payload: z.record(z.string(), z.unknown()),
    openedAtUtc: z.iso.datetime().nullable(),
    closedAtUtc: z.iso.datetime().nullable(),
    /** The winning option once closed (the earliest of a tie; null without votes). */
    winner: z.string().nullable(),
    /** The moderation rule an approved ModerationRule voting created. */
    createdRuleId: z.uuid().nullable(),
    createdAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'Voting' });
export type VotingOutput = z.infer<typeof votingOutput>;

export const votingResultsOutput = z
  .object({
    votingId: z.uuid(),
    status: z.enum(VOTING_STATUSES),
    totalVotes: z.number().int(),
    /** Every option with its count, zero included. */
    results: z.record(z.string(), z.number().int()),
    winner: z.string().nullable(),
  })
  .meta({ id: 'VotingResults' });
export type VotingResultsOutput = z.infer<typeof votingResultsOutput>;

const timestamp = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' }).transform((v) => new Date(v));

export const createVotingInput = z
  .object({
    territoryId: zId,
    type: z.enum(VOTING_TYPES),
    title: zText({ max: VOTING_TITLE_MAX }),
    description: zOptionalText(VOTING_DESCRIPTION_MAX),
    options: z
      // `__proto__` cannot be a key of the results object ({option: count}): a JSON reader would lose it.
      .array(zText({ max: VOTING_OPTION_MAX }).refine((option) => option !== '__proto__', 'is a reserved name'))
      .min(VOTING_OPTIONS_MIN)
      .max(VOTING_OPTIONS_MAX)
      .refine((options) => new Set(options).size === options.length, 'options must be distinct'),
    visibility: z.enum(VOTING_VISIBILITIES).default('AllMembers'),
    startsAtUtc: timestamp.nullish(),
    endsAtUtc: timestamp.nullish(),
    payload: z.record(z.string(), z.unknown()).default({}),
  })
  .refine((v) => !v.startsAtUtc || !v.endsAtUtc || v.endsAtUtc > v.startsAtUtc, { message: 'must be after startsAtUtc', path: ['endsAtUtc'] });
export type CreateVotingInput = z.infer<typeof createVotingInput>;

export const listVotingsInput = z.object({ territoryId: zId, status: lenientEnum(VOTING_STATUSES).optional(), ...skipTakeInput(20) });
export const votingIdInput = z.object({ territoryId: zId, votingId: zId });
export const voteInput = z.object({ territoryId: zId, votingId: zId, selectedOption: z.string().min(1).max(VOTING_OPTION_MAX) });
