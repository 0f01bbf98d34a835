import { execSql } from '../../db/sql.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { ModerationRuleType } from '../../entities/moderation-rule.entity.js';
import { badRequest } from '../../platform/problems.js';

/** What a rule is checked against: the content being created (a post today; events and items later). */
export interface ModeratedContent {
  title: string;
  content: string;
  /** The content's type, e.g. the post type POST or ALERT. */
  type: string;
}

interface ActiveRule {
  id: string;
  name: string;
  rule_type: ModerationRuleType;
  config: unknown;
}

// Rule configs as stored. The rule CRUD (a later issue) validates them on write; a config that does not parse
// here cannot be enforced, so it is skipped rather than failing every post of the territory.
const prohibitedWordsConfig = z.object({ words: z.array(z.string()) });
const contentTypeConfig = z.object({ allowedTypes: z.array(z.string()) });

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The first prohibited word found as a whole word (or phrase), case-insensitively. "Whole" means not inside a
 * longer word: letters and digits of any script count as word characters, so `ass` does not match `class`.
 */
export function findProhibitedWord(text: string, words: readonly string[]): string | null {
  const haystack = text.normalize('NFC');
  for (const raw of words) {
    const word = raw.normalize('NFC').trim();
    if (!word) continue;
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(word).replace(/\s+/g, '\\s+')}(?![\\p{L}\\p{N}_])`, 'iu');
    if (pattern.test(haystack)) return word;
  }
  return null;
}

const violation = (rule: ActiveRule, field: string, message: string) =>
  badRequest(`Moderation rule "${rule.name}" (${rule.rule_type}) was violated: ${message}`, 'MODERATION_RULE_VIOLATION', [
    { field, message: `${rule.name}: ${message}` },
  ]);

function enforceProhibitedWords(rule: ActiveRule, item: ModeratedContent) {
  const config = prohibitedWordsConfig.safeParse(rule.config);
  if (!config.success) return;
  for (const field of ['title', 'content'] as const) {
    const word = findProhibitedWord(item[field], config.data.words);
    if (word) throw violation(rule, field, `the ${field} contains the prohibited word "${word}".`);
  }
}

function enforceContentType(rule: ActiveRule, item: ModeratedContent) {
  const config = contentTypeConfig.safeParse(rule.config);
  if (!config.success) return;
  const allowed = config.data.allowedTypes.map((t) => t.trim().toUpperCase());
  if (!allowed.includes(item.type.toUpperCase())) {
    throw violation(rule, 'type', `type ${item.type} is not allowed here (allowed: ${allowed.join(', ') || 'none'}).`);
  }
}

const ENFORCERS: Partial<Record<ModerationRuleType, (rule: ActiveRule, item: ModeratedContent) => void>> = {
  ProhibitedWords: enforceProhibitedWords,
  ContentType: enforceContentType,
};

/**
 * Checks content against the territory's active ProhibitedWords and ContentType rules, oldest rule first; the
 * first violation is a 400 `MODERATION_RULE_VIOLATION` whose detail names the rule. Other rule types (Behavior,
 * MarketplacePolicy, EventPolicy) are not about a single piece of content and are not checked here.
 */
export async function enforceModerationRules(em: EntityManager, territoryId: string, item: ModeratedContent): Promise<void> {
  const rules = await execSql<ActiveRule>(
    em,
    `select id, name, rule_type, config from territory_moderation_rule
      where territory_id = ? and is_active and rule_type in ('ProhibitedWords', 'ContentType')
      order by created_at_utc, id`,
    [territoryId],
  );
  for (const rule of rules) ENFORCERS[rule.rule_type]?.(rule, item);
}
