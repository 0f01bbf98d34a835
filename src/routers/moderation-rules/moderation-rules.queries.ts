import { isoColumn, type SqlQuery } from '../../db/sql.js';
import type { ModerationRuleType } from '../../entities/moderation-rule.entity.js';

export interface RuleRow {
  id: string;
  territory_id: string;
  name: string;
  rule_type: ModerationRuleType;
  config: Record<string, unknown>;
  is_active: boolean;
  created_by_voting_id: string | null;
  created_at_utc: string;
}

// The voting that created a rule is recorded on the voting (governance), read here.
const RULE_COLUMNS = `r.id, r.territory_id, r.name, r.rule_type, r.config, r.is_active,
  (select v.id from voting v where v.created_rule_id = r.id limit 1) as created_by_voting_id,
  ${isoColumn('r.created_at_utc')} as created_at_utc`;

export const rulesOfTerritoryQuery = (territoryId: string): SqlQuery => ({
  sql: `select ${RULE_COLUMNS} from territory_moderation_rule r where r.territory_id = ? order by r.created_at_utc, r.id`,
  params: [territoryId],
});

export const ruleByIdQuery = (territoryId: string, ruleId: string): SqlQuery => ({
  sql: `select ${RULE_COLUMNS} from territory_moderation_rule r where r.territory_id = ? and r.id = ?`,
  params: [territoryId, ruleId],
});
