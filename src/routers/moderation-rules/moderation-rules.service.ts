import { execSql, runHotRead, runSql } from '../../db/sql.js';
import { type EntityManager, LockMode } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { audit } from '../../entities/audit.entity.js';
import { type ModerationRuleType, TerritoryModerationRule } from '../../entities/moderation-rule.entity.js';
import { badRequest, notFound, validationFailed } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { ruleByIdQuery, type RuleRow, rulesOfTerritoryQuery } from './moderation-rules.queries.js';
import { type CreateRuleInput, type ModerationRuleOutput, RULE_CONFIGS, type UpdateRuleInput } from './moderation-rules.schemas.js';

/** What a rule is checked against: the content being created (a post today; events and items later). */
export interface ModeratedContent {
  title: string;
  content: string;
  /** The content's type, e.g. the post type POST or ALERT. */
  type: string;
  /** An event's place: it goes out in the residents' EVENT_CREATED notification, so the words rules apply to it too. */
  locationLabel?: string | null | undefined;
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
  for (const field of ['title', 'content', 'locationLabel'] as const) {
    const word = findProhibitedWord(item[field] ?? '', config.data.words);
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

/** EventPolicy: its words are prohibited in events (title, description and location label). */
function enforceEventPolicy(rule: ActiveRule, item: ModeratedContent) {
  if (item.type.toUpperCase() !== 'EVENT') return;
  enforceProhibitedWords(rule, item);
}

const ENFORCERS: Partial<Record<ModerationRuleType, (rule: ActiveRule, item: ModeratedContent) => void>> = {
  ProhibitedWords: enforceProhibitedWords,
  ContentType: enforceContentType,
  EventPolicy: enforceEventPolicy,
};

/**
 * Checks content against the territory's active ProhibitedWords, ContentType and (for events) EventPolicy rules,
 * oldest rule first; the first violation is a 400 `MODERATION_RULE_VIOLATION` whose detail names the rule.
 * MarketplacePolicy applies to items (items/marketplace-policy.ts); Behavior is guidance, never enforced.
 */
export async function enforceModerationRules(em: EntityManager, territoryId: string, item: ModeratedContent): Promise<void> {
  const rules = await execSql<ActiveRule>(
    em,
    `select id, name, rule_type, config from territory_moderation_rule
      where territory_id = ? and is_active and rule_type in ('ProhibitedWords', 'ContentType', 'EventPolicy')
      order by created_at_utc, id`,
    [territoryId],
  );
  for (const rule of rules) ENFORCERS[rule.rule_type]?.(rule, item);
}

/**
 * Checks a text without a title or a type (a comment, a chat message) against the territory's active
 * ProhibitedWords rules: the first violation is a 400 `MODERATION_RULE_VIOLATION` on `field`.
 */
export async function enforceProhibitedWordsOn(em: EntityManager, territoryId: string, text: string, field = 'text'): Promise<void> {
  const rules = await execSql<ActiveRule>(
    em,
    `select id, name, rule_type, config from territory_moderation_rule
      where territory_id = ? and is_active and rule_type = 'ProhibitedWords' order by created_at_utc, id`,
    [territoryId],
  );
  for (const rule of rules) {
    const config = prohibitedWordsConfig.safeParse(rule.config);
    if (!config.success) continue;
    const word = findProhibitedWord(text, config.data.words);
    if (word) throw violation(rule, field, `the ${field} contains the prohibited word "${word}".`);
  }
}

// ---- Administration (DESIGN section 14): curators write, members read ----

const toOutput = (r: RuleRow): ModerationRuleOutput => ({
  id: r.id,
  territoryId: r.territory_id,
  name: r.name,
  ruleType: r.rule_type,
  config: r.config ?? {},
  isActive: r.is_active,
  createdByVotingId: r.created_by_voting_id,
  createdAtUtc: r.created_at_utc,
});

/** The config of a rule type, validated (400 VALIDATION_FAILED naming `config.<path>`). */
export function parseRuleConfig(ruleType: ModerationRuleType, config: unknown): Record<string, unknown> {
  const parsed = RULE_CONFIGS[ruleType].safeParse(config);
  if (parsed.success) return parsed.data as Record<string, unknown>;
  const issue = parsed.error.issues[0]!;
  const field = ['config', ...issue.path.map(String)].join('.');
  throw validationFailed(field, `${issue.message} (${ruleType} config)`);
}

const CURATORS = { as: 'CURATOR', denied: { message: 'Only curators of this territory can manage its moderation rules.', code: 'FORBIDDEN' } } as const;
const READERS = {
  as: ['member', 'CURATOR', 'MODERATOR'],
  denied: { message: 'Only members of this territory can read its moderation rules.', code: 'NOT_MEMBER' },
} as const;

async function ruleById(em: EntityManager, territoryId: string, ruleId: string): Promise<ModerationRuleOutput> {
  const [row] = await runSql<RuleRow>(em, ruleByIdQuery(territoryId, ruleId));
  if (!row) throw notFound('Moderation rule');
  return toOutput(row);
}

/** Writes a rule inside the caller's transaction (the CRUD, an approved ModerationRule voting); config validated. */
export async function insertModerationRule(
  em: EntityManager,
  rule: { territoryId: string; name: string; ruleType: ModerationRuleType; config: unknown; isActive: boolean; createdByUserId: string | null },
): Promise<string> {
  const config = parseRuleConfig(rule.ruleType, rule.config);
  const row = em.create(TerritoryModerationRule, {
    territoryId: rule.territoryId,
    name: rule.name,
    ruleType: rule.ruleType,
    config,
    isActive: rule.isActive,
    createdByUserId: rule.createdByUserId,
  });
  await em.flush();
  return row.id;
}

export async function listRules(ctx: ServiceContext, input: { territoryId: string }): Promise<ModerationRuleOutput[]> {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, READERS);
  return (await runHotRead<RuleRow>(ctx, rulesOfTerritoryQuery(territoryId), { prepared: true })).map(toOutput);
}

export async function createRule(ctx: ServiceContext, input: CreateRuleInput): Promise<ModerationRuleOutput> {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, CURATORS);
  const { em, user } = ctx;
  const id = await em.transactional(async (tx) => {
    const ruleId = await insertModerationRule(tx, { ...input, territoryId, createdByUserId: user.id });
    audit(tx, { actorUserId: user.id, action: 'moderation_rule.created', subjectType: 'TerritoryModerationRule', subjectId: ruleId, territoryId });
    await tx.flush();
    return ruleId;
  });
  return ruleById(em, territoryId, id);
}

export async function updateRule(ctx: ServiceContext, input: UpdateRuleInput): Promise<ModerationRuleOutput> {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, CURATORS);
  const { em, user } = ctx;
  await em.transactional(async (tx) => {
    const rule = await tx.findOne(TerritoryModerationRule, { id: input.ruleId, territoryId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!rule) throw notFound('Moderation rule');
    if (input.name !== undefined) rule.name = input.name;
    if (input.config !== undefined) rule.config = parseRuleConfig(rule.ruleType, input.config);
    if (input.isActive !== undefined) rule.isActive = input.isActive;
    audit(tx, {
      actorUserId: user.id,
      action: 'moderation_rule.updated',
      subjectType: 'TerritoryModerationRule',
      subjectId: rule.id,
      territoryId,
      data: { fields: Object.keys(input).filter((k) => k !== 'territoryId' && k !== 'ruleId' && input[k as keyof UpdateRuleInput] !== undefined) },
    });
    await tx.flush();
  });
  return ruleById(em, territoryId, input.ruleId);
}

export async function deleteRule(ctx: ServiceContext, input: { territoryId: string; ruleId: string }): Promise<void> {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, CURATORS);
  const { em, user } = ctx;
  await em.transactional(async (tx) => {
    const deleted = await tx.nativeDelete(TerritoryModerationRule, { id: input.ruleId, territoryId });
    if (deleted === 0) throw notFound('Moderation rule');
    audit(tx, { actorUserId: user.id, action: 'moderation_rule.deleted', subjectType: 'TerritoryModerationRule', subjectId: input.ruleId, territoryId });
    await tx.flush();
  });
}
