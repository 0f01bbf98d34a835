import { defineEntity, p } from '@mikro-orm/postgresql';

/**
 * A rate-limit counter shared by every API process (src/http/rate-limit.ts): one row per caller key and bucket,
 * counting hits in a fixed window. The table is UNLOGGED (see its migration): counters need no crash safety, and
 * skipping the WAL halves the cost of the one upsert each counted request makes.
 */
export const RateLimitCounter = defineEntity({
  name: 'RateLimitCounter',
  tableName: 'rate_limit_counter',
  properties: {
    key: p.string().length(300).primary(),
    windowStartedAtUtc: p.datetime(),
    hits: p.integer(),
  },
});
