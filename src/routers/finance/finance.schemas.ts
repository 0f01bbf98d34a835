import { z } from 'zod';
import { zCurrency } from '../../platform/currency.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput } from '../../platform/pagination.js';

const timestamp = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' }).transform((v) => new Date(v));

export const financeBalanceInput = z.object({
  territoryId: zId,
  /** Default: the payout configuration's currency, else that of the territory's latest revenue, else BRL. */
  currency: zCurrency.optional(),
});
export type FinanceBalanceInput = z.infer<typeof financeBalanceInput>;

export const financeListInput = z
  .object({
    territoryId: zId,
    currency: zCurrency.optional(),
    /** Inclusive lower bound of the line's time. */
    fromUtc: timestamp.optional(),
    /** Exclusive upper bound of the line's time. */
    toUtc: timestamp.optional(),
    ...pageInput,
  })
  .superRefine((v, ctx) => {
    if (v.fromUtc && v.toUtc && v.toUtc < v.fromUtc) ctx.addIssue({ code: 'custom', path: ['toUtc'], message: 'must not be before fromUtc' });
  });
export type FinanceListInput = z.infer<typeof financeListInput>;

export const platformBalanceOutput = z
  .object({
    territoryId: z.uuid(),
    /** Fees collected (platform_revenue), net of refunds. */
    totalRevenueInCents: z.number().int(),
    /** Payouts processed (paid to sellers). */
    totalExpensesInCents: z.number().int(),
    netBalanceInCents: z.number().int(),
    currency: z.string(),
  })
  .meta({ id: 'PlatformBalance' });
export type PlatformBalanceOutput = z.infer<typeof platformBalanceOutput>;

export const revenueLineOutput = z
  .object({ id: z.uuid(), checkoutId: z.uuid().nullable(), amountInCents: z.number().int(), currency: z.string(), createdAtUtc: z.iso.datetime() })
  .meta({ id: 'PlatformRevenueLine' });
export const expenseLineOutput = z
  .object({ id: z.uuid(), payoutId: z.uuid().nullable(), amountInCents: z.number().int(), currency: z.string(), createdAtUtc: z.iso.datetime() })
  .meta({ id: 'PlatformExpenseLine' });

export const revenuePageOutput = pagedOutput(revenueLineOutput).meta({ id: 'PlatformRevenuePage' });
export const expensePageOutput = pagedOutput(expenseLineOutput).meta({ id: 'PlatformExpensePage' });
