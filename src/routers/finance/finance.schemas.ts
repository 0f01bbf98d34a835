import { z } from 'zod';
import { FINANCIAL_RELATED_ENTITY_TYPES, FINANCIAL_TRANSACTION_STATUSES, FINANCIAL_TRANSACTION_TYPES } from '../../entities/financial-transaction.entity.js';
import { zCurrency } from '../../platform/currency.js';
import { lenientEnum } from '../../platform/enums.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput } from '../../platform/pagination.js';

const timestamp = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' }).transform((v) => new Date(v));

export const financeBalanceInput = z.object({
  territoryId: zId,
  /** Default: the payout configuration's currency, else that of the territory's latest revenue, else BRL. */
  currency: zCurrency.optional(),
});
export type FinanceBalanceInput = z.infer<typeof financeBalanceInput>;

const period = {
  /** Inclusive lower bound of the line's time. */
  fromUtc: timestamp.optional(),
  /** Exclusive upper bound of the line's time. */
  toUtc: timestamp.optional(),
};
const periodInOrder = (v: { fromUtc?: Date; toUtc?: Date }, ctx: z.RefinementCtx) => {
  if (v.fromUtc && v.toUtc && v.toUtc < v.fromUtc) ctx.addIssue({ code: 'custom', path: ['toUtc'], message: 'must not be before fromUtc' });
};

export const financeListInput = z.object({ territoryId: zId, currency: zCurrency.optional(), ...period, ...pageInput }).superRefine(periodInOrder);
export type FinanceListInput = z.infer<typeof financeListInput>;

export const financialTransactionListInput = z
  .object({
    territoryId: zId,
    type: lenientEnum(FINANCIAL_TRANSACTION_TYPES).optional(),
    status: lenientEnum(FINANCIAL_TRANSACTION_STATUSES).optional(),
    /** The checkout, payment, seller transaction or payout whose amounts are wanted. */
    relatedEntityId: zId.optional(),
    /** Default: every currency. */
    currency: zCurrency.optional(),
    ...period,
    ...pageInput,
  })
  .superRefine(periodInOrder);
export type FinancialTransactionListInput = z.infer<typeof financialTransactionListInput>;

export const financialTransactionInput = z.object({ territoryId: zId, financialTransactionId: zId });
export type FinancialTransactionInput = z.infer<typeof financialTransactionInput>;

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

export const financialTransactionOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    type: z.enum(FINANCIAL_TRANSACTION_TYPES),
    status: z.enum(FINANCIAL_TRANSACTION_STATUSES),
    amountInCents: z.number().int(),
    currency: z.string(),
    relatedEntityType: z.enum(FINANCIAL_RELATED_ENTITY_TYPES),
    relatedEntityId: z.uuid(),
    createdAtUtc: z.iso.datetime(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'FinancialTransaction' });
export type FinancialTransactionOutput = z.infer<typeof financialTransactionOutput>;

export const financialTransactionDetailOutput = financialTransactionOutput
  .extend({
    /** Oldest first: each financial status taken, with the related record's own status then (READY, REFUNDED...). */
    statusHistory: z.array(z.object({ status: z.enum(FINANCIAL_TRANSACTION_STATUSES), entityStatus: z.string(), changedAtUtc: z.iso.datetime() })),
  })
  .meta({ id: 'FinancialTransactionDetail' });
export type FinancialTransactionDetailOutput = z.infer<typeof financialTransactionDetailOutput>;

export const financialTransactionPageOutput = pagedOutput(financialTransactionOutput).meta({ id: 'FinancialTransactionPage' });
