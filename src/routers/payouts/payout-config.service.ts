/** The payout configuration of a territory (DESIGN section 13 "Payout configuration"). */
import { execSql, type HotReadSource, runHotRead, runSql } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { newId } from '../../platform/ids.js';
import { forbidden, notFound } from '../../platform/problems.js';
import { hasPermission, type ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { type PayoutConfigRow, payoutConfigQuery } from './payouts.queries.js';
import type { PayoutConfigInput, PayoutConfigOutput } from './payouts.schemas.js';

export const MARKETPLACE = 'MARKETPLACEENABLED' as const;

const toOutput = (r: PayoutConfigRow): PayoutConfigOutput => ({
  id: r.id,
  territoryId: r.territory_id,
  retentionPeriodDays: r.retention_period_days,
  minimumPayoutAmountInCents: Number(r.minimum_payout_amount_in_cents),
  maximumPayoutAmountInCents: r.maximum_payout_amount_in_cents === null ? null : Number(r.maximum_payout_amount_in_cents),
  frequency: r.frequency,
  autoPayoutEnabled: r.auto_payout_enabled,
  requiresApproval: r.requires_approval,
  currency: r.currency,
  isActive: r.is_active,
  createdAtUtc: r.created_at_utc,
  updatedAtUtc: r.updated_at_utc,
});

/** The territory's active payout configuration; null before any. Given a request's context, read on the pool. */
export async function activePayoutConfig(source: HotReadSource, territoryId: string): Promise<PayoutConfigOutput | null> {
  const [row] = await runHotRead<PayoutConfigRow>(source, payoutConfigQuery(territoryId, 'active'), { prepared: true });
  return row ? toOutput(row) : null;
}

/** SYSTEM_ADMIN or FINANCIAL_MANAGER (403 otherwise): the money settings of a territory. */
export function requireFinance(ctx: ServiceContext, what: string) {
  if (!hasPermission(ctx.user, 'SYSTEM_ADMIN', 'FINANCIAL_MANAGER')) throw forbidden(`Only system admins and financial managers can ${what}.`);
}

/** Members of the territory (and system admins, financial managers) read it; 404 before any. */
export async function getPayoutConfig(ctx: ServiceContext, input: { territoryId: string }): Promise<PayoutConfigOutput> {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  if (!access.isMember && !hasPermission(ctx.user, 'SYSTEM_ADMIN', 'FINANCIAL_MANAGER')) {
    throw forbidden('Only members of this territory can read its payout configuration.', 'NOT_MEMBER');
  }
  const config = await activePayoutConfig(ctx, access.territoryId);
  if (!config) throw notFound('Payout configuration');
  return config;
}

/**
 * Creates (`created: true`, 201) or replaces in place (200) the territory's payout configuration: one upsert on the
 * territory's unique row, audited with the values before and after.
 */
export async function putPayoutConfig(ctx: ServiceContext, input: PayoutConfigInput): Promise<{ created: boolean; config: PayoutConfigOutput }> {
  const access = await requireTerritory(ctx, input.territoryId, { flag: MARKETPLACE });
  requireFinance(ctx, 'set the payout configuration');
  const territoryId = access.territoryId;
  const created = await ctx.em.transactional(async (tx) => {
    const [before] = await runSql<PayoutConfigRow>(tx, payoutConfigQuery(territoryId, 'for update'));
    const now = ctx.clock.now();
    const [row] = await execSql<{ created: boolean }>(
      tx,
      `insert into payout_config (id, created_at_utc, territory_id, retention_period_days, minimum_payout_amount_in_cents, maximum_payout_amount_in_cents,
                                  frequency, auto_payout_enabled, requires_approval, currency, is_active, updated_by_user_id, updated_at_utc)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, true, ?, ?)
       on conflict (territory_id) do update set retention_period_days = excluded.retention_period_days,
         minimum_payout_amount_in_cents = excluded.minimum_payout_amount_in_cents, maximum_payout_amount_in_cents = excluded.maximum_payout_amount_in_cents,
         frequency = excluded.frequency, auto_payout_enabled = excluded.auto_payout_enabled, requires_approval = excluded.requires_approval,
         currency = excluded.currency, is_active = true, updated_by_user_id = excluded.updated_by_user_id, updated_at_utc = excluded.updated_at_utc
       returning (xmax = 0) as created`,
      [
        newId(),
        now,
        territoryId,
        input.retentionPeriodDays,
        input.minimumPayoutAmountInCents,
        input.maximumPayoutAmountInCents ?? null,
        input.frequency,
        input.autoPayoutEnabled,
        input.requiresApproval,
        input.currency,
        ctx.user.id,
        now,
      ],
    );
    audit(tx, {
      actorUserId: ctx.user.id,
      action: 'payout-config.updated',
      subjectType: 'PayoutConfig',
      subjectId: territoryId,
      territoryId,
      data: {
        before: before ? toOutput(before) : null,
        after: {
          retentionPeriodDays: input.retentionPeriodDays,
          minimumPayoutAmountInCents: input.minimumPayoutAmountInCents,
          maximumPayoutAmountInCents: input.maximumPayoutAmountInCents ?? null,
          frequency: input.frequency,
          autoPayoutEnabled: input.autoPayoutEnabled,
          requiresApproval: input.requiresApproval,
          currency: input.currency,
        },
      },
    });
    await tx.flush();
    return row!.created;
  });
  return { created, config: (await activePayoutConfig(ctx.em, territoryId))! };
}
