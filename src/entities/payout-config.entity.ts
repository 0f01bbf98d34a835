import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';
import { Territory } from './territory.entity.js';

export const PAYOUT_FREQUENCIES = ['Daily', 'Weekly', 'Monthly', 'Manual'] as const;
export type PayoutFrequency = (typeof PAYOUT_FREQUENCIES)[number];

/** The longest retention period a territory may set (days). */
export const MAX_RETENTION_PERIOD_DAYS = 365;

/**
 * The payout configuration of a territory (DESIGN section 13 "Payout configuration"): one per territory, replaced in
 * place by each POST. Amounts are integer cents; `requiresApproval` is stored but does not act (the spec says so).
 * PostgreSQL checks the ranges the API validates.
 */
export const PayoutConfig = defineEntity({
  name: 'PayoutConfig',
  tableName: 'payout_config',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade').unique(),
    retentionPeriodDays: p.integer(),
    minimumPayoutAmountInCents: p.bigint('number'),
    maximumPayoutAmountInCents: p.bigint('number').nullable(),
    frequency: p.string().length(20).$type<PayoutFrequency>(),
    autoPayoutEnabled: p.boolean(),
    requiresApproval: p.boolean(),
    currency: p.string().length(3),
    isActive: p.boolean().default(true),
    updatedByUserId: p.uuid().nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [
    { name: 'payout_config_retention_check', expression: `retention_period_days >= 0 and retention_period_days <= ${MAX_RETENTION_PERIOD_DAYS}` },
    {
      name: 'payout_config_amounts_check',
      expression:
        'minimum_payout_amount_in_cents >= 0 and (maximum_payout_amount_in_cents is null or (maximum_payout_amount_in_cents > 0 and maximum_payout_amount_in_cents >= minimum_payout_amount_in_cents))',
    },
    { name: 'payout_config_frequency_check', expression: `frequency in (${PAYOUT_FREQUENCIES.map((f) => `'${f}'`).join(', ')})` },
    { name: 'payout_config_currency_check', expression: `currency ~ '^[A-Z]{3}$'` },
  ],
});
