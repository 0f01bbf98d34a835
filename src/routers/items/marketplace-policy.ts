import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { execSql } from '../../db/sql.js';
import { badRequest } from '../../platform/problems.js';
import { findProhibitedWord } from '../moderation-rules/moderation-rules.service.js';

/**
 * The territory's active MarketplacePolicy rules applied to an item (DESIGN section 14: config `{words,
 * blockedCategories?}`): a prohibited word in the title or description, or a blocked category, is a 400
 * `MODERATION_RULE_VIOLATION` naming the rule and the word. The moderation-rules module checks only post rule types
 * (ProhibitedWords, ContentType) today; this read moves there with the rule administration issue.
 */
const marketplacePolicyConfig = z.object({ words: z.array(z.string()).default([]), blockedCategories: z.array(z.string()).optional() });

export async function enforceMarketplacePolicy(
  em: EntityManager,
  territoryId: string,
  item: { title: string; description: string | null; category: string | null },
): Promise<void> {
  const rules = await execSql<{ name: string; config: unknown }>(
    em,
    `select name, config from territory_moderation_rule
      where territory_id = ? and is_active and rule_type = 'MarketplacePolicy' order by created_at_utc, id`,
    [territoryId],
  );
  for (const rule of rules) {
    const config = marketplacePolicyConfig.safeParse(rule.config);
    // A config that does not parse cannot be enforced; it is skipped rather than failing every item.
    if (!config.success) continue;
    for (const field of ['title', 'description'] as const) {
      const word = findProhibitedWord(item[field] ?? '', config.data.words);
      if (word) throw violation(rule.name, field, `the ${field} contains the prohibited word "${word}".`);
    }
    const blocked = (config.data.blockedCategories ?? []).map((c) => c.trim().toLowerCase());
    if (item.category && blocked.includes(item.category.trim().toLowerCase())) {
      throw violation(rule.name, 'category', `the category "${item.category}" is not allowed.`);
    }
  }
}

const violation = (rule: string, field: string, message: string) =>
  badRequest(`Moderation rule "${rule}" (MarketplacePolicy) was violated: ${message}`, 'MODERATION_RULE_VIOLATION', [
    { field, message: `${rule}: ${message}` },
  ]);
