import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

/** Spec "Report and block": the community moderation rule types, spelled as the spec spells them. */
export const MODERATION_RULE_TYPES = ['ContentType', 'ProhibitedWords', 'Behavior', 'MarketplacePolicy', 'EventPolicy'] as const;
export type ModerationRuleType = (typeof MODERATION_RULE_TYPES)[number];

/**
 * A community moderation rule of a territory. `config` depends on the type (ProhibitedWords: `{words: [...]}`,
 * ContentType: `{allowedTypes: [...]}`); only active rules are enforced.
 */
export const TerritoryModerationRule = defineEntity({
  name: 'TerritoryModerationRule',
  tableName: 'territory_moderation_rule',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    ruleType: p.string().length(40).$type<ModerationRuleType>(),
    name: p.string().length(200),
    config: p.json<Record<string, unknown>>().default('{}'),
    isActive: p.boolean().default(true),
    createdByUserId: () => p.manyToOne(User).mapToPk().fieldName('created_by_user_id').deleteRule('set null').nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  // Every post creation reads the territory's active rules.
  indexes: [
    {
      name: 'territory_moderation_rule_active_idx',
      expression: `create index "territory_moderation_rule_active_idx" on "territory_moderation_rule" ("territory_id", "rule_type") where is_active`,
    },
  ],
});
