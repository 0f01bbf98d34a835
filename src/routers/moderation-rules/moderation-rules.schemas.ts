import { z } from 'zod';
import { MODERATION_RULE_TYPES } from '../../entities/moderation-rule.entity.js';
import { POST_TYPES } from '../../entities/post.entity.js';
import { zId } from '../../platform/ids.js';
import { zText } from '../../platform/text.js';

export const RULE_NAME_MAX = 200;
const WORDS_MAX = 500;
const WORD_MAX = 100;
const GUIDELINES_MAX = 4000;

const word = zText({ max: WORD_MAX });
const words = z.array(word).min(1).max(WORDS_MAX);

/** Each rule type's `config`, validated on write (DESIGN section 14). */
export const RULE_CONFIGS = {
  ContentType: z.object({ allowedTypes: z.array(z.enum(POST_TYPES)).min(1).max(POST_TYPES.length) }).strict(),
  ProhibitedWords: z.object({ words }).strict(),
  MarketplacePolicy: z.object({ words: z.array(word).max(WORDS_MAX), blockedCategories: z.array(word).max(WORDS_MAX).optional() }).strict(),
  EventPolicy: z.object({ words }).strict(),
  Behavior: z.object({ guidelines: zText({ max: GUIDELINES_MAX }) }).strict(),
} as const;

const configInput = z.record(z.string(), z.unknown()).meta({
  description:
    'Depends on ruleType: ContentType {allowedTypes: [POST|ALERT|EVENT]}, ProhibitedWords {words}, MarketplacePolicy {words, blockedCategories?}, EventPolicy {words}, Behavior {guidelines}.',
});

export const moderationRuleOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    name: z.string(),
    ruleType: z.enum(MODERATION_RULE_TYPES),
    config: z.record(z.string(), z.unknown()),
    isActive: z.boolean(),
    /** The approved ModerationRule voting that created the rule, if any. */
    createdByVotingId: z.uuid().nullable(),
    createdAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'ModerationRule' });
export type ModerationRuleOutput = z.infer<typeof moderationRuleOutput>;

export const territoryRulesInput = z.object({ territoryId: zId });
export const ruleIdInput = z.object({ territoryId: zId, ruleId: zId });

export const createRuleInput = z.object({
  territoryId: zId,
  name: zText({ max: RULE_NAME_MAX }),
  ruleType: z.enum(MODERATION_RULE_TYPES),
  config: configInput,
  isActive: z.boolean().default(true),
});
export type CreateRuleInput = z.infer<typeof createRuleInput>;

export const updateRuleInput = z.object({
  territoryId: zId,
  ruleId: zId,
  name: zText({ max: RULE_NAME_MAX }).optional(),
  config: configInput.optional(),
  isActive: z.boolean().optional(),
});
export type UpdateRuleInput = z.infer<typeof updateRuleInput>;
