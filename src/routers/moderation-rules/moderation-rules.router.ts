import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { createRuleInput, moderationRuleOutput, ruleIdInput, territoryRulesInput, updateRuleInput } from './moderation-rules.schemas.js';
import * as rules from './moderation-rules.service.js';

const TAGS = ['Moderation'];
const BASE = '/api/v1/territories/{territoryId}/moderation-rules';

export const moderationRulesRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: BASE, tags: TAGS, summary: "The territory's moderation rules, oldest first (members)" } })
    .input(territoryRulesInput)
    .output(z.array(moderationRuleOutput))
    .query(({ ctx, input }) => rules.listRules(ctx, input)),

  create: authedProcedure
    .meta({
      openapi: { method: 'POST', path: BASE, tags: TAGS, summary: 'Create a moderation rule (curator; config validated per ruleType)' },
      successStatus: 201,
    })
    .input(createRuleInput)
    .output(moderationRuleOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await rules.createRule(ctx, input);
      ctx.resp.headers.Location = `/api/v1/territories/${created.territoryId}/moderation-rules/${created.id}`;
      return created;
    }),

  update: authedProcedure
    .meta({ openapi: { method: 'PATCH', path: `${BASE}/{ruleId}`, tags: TAGS, summary: 'Change a moderation rule: name, config, isActive (curator)' } })
    .input(updateRuleInput)
    .output(moderationRuleOutput)
    .mutation(({ ctx, input }) => rules.updateRule(ctx, input)),

  delete: authedProcedure
    .meta({ openapi: { method: 'DELETE', path: `${BASE}/{ruleId}`, tags: TAGS, summary: 'Delete a moderation rule (curator)' }, successStatus: 204 })
    .input(ruleIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => rules.deleteRule(ctx, input)),
});
