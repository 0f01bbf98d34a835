import { z } from 'zod';
import { SELLER_TRANSACTION_STATUSES } from '../../entities/checkout.entity.js';
import { MAX_RETENTION_PERIOD_DAYS, PAYOUT_FREQUENCIES } from '../../entities/payout-config.entity.js';
import { PAYOUT_STATUSES } from '../../entities/payout.entity.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { DEFAULT_CURRENCY, zCurrency } from '../../platform/currency.js';

/** The largest payout amount accepted (cents), so amounts stay exact integers everywhere. */
export const MAX_PAYOUT_AMOUNT_IN_CENTS = 1_000_000_000_000;

const cents = z.number().int().min(0).max(MAX_PAYOUT_AMOUNT_IN_CENTS);
/** Frequencies read in any case (`daily`, `DAILY`) and answered as the spec spells them. */
const frequency = z.preprocess(
  (v) => (typeof v === 'string' ? (PAYOUT_FREQUENCIES.find((f) => f.toLowerCase() === v.trim().toLowerCase()) ?? v) : v),
  z.enum(PAYOUT_FREQUENCIES),
);

export const territoryIdInput = z.object({ territoryId: zId });

/**
 * `GET .../seller-balance/me`: a seller who sold in several currencies has one balance per currency (the ledger keeps
 * its accounts per territory and currency); `currency` picks one, by default the one of the latest sale.
 */
export const sellerBalanceInput = z.object({ territoryId: zId, currency: zCurrency.optional() });
export type SellerBalanceInput = z.infer<typeof sellerBalanceInput>;

/** `GET .../seller-balance/me/transactions`: a plain list, so `skip`/`take` (default 20, at most 100). */
export const sellerTransactionsInput = z.object({ territoryId: zId, ...skipTakeInput() });
export type SellerTransactionsInput = z.infer<typeof sellerTransactionsInput>;

export const payoutConfigInput = z
  .object({
    territoryId: zId,
    retentionPeriodDays: z.number().int().min(0).max(MAX_RETENTION_PERIOD_DAYS),
    minimumPayoutAmountInCents: cents,
    // Null: no maximum; 0 would allow no payout at all.
    maximumPayoutAmountInCents: cents.min(1, { error: 'must be positive, or null for no maximum' }).nullish(),
    frequency,
    autoPayoutEnabled: z.boolean().default(false),
    /** Stored, not acting: the approval step is not implemented (the spec says so). */
    requiresApproval: z.boolean().default(false),
    // The items' currency schema (DESIGN section 4: ISO 4217), so a payout currency is one an item can be priced in.
    currency: zCurrency.default(DEFAULT_CURRENCY),
  })
  .superRefine((v, ctx) => {
    if (v.maximumPayoutAmountInCents !== undefined && v.maximumPayoutAmountInCents !== null && v.maximumPayoutAmountInCents < v.minimumPayoutAmountInCents) {
      ctx.addIssue({ code: 'custom', path: ['maximumPayoutAmountInCents'], message: 'must be null or at least minimumPayoutAmountInCents' });
    }
  });
export type PayoutConfigInput = z.infer<typeof payoutConfigInput>;

export const payoutConfigOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    retentionPeriodDays: z.number().int(),
    minimumPayoutAmountInCents: z.number().int(),
    maximumPayoutAmountInCents: z.number().int().nullable(),
    frequency: z.enum(PAYOUT_FREQUENCIES),
    autoPayoutEnabled: z.boolean(),
    /** Stored and returned; it does not act (no approval step). */
    requiresApproval: z.boolean(),
    currency: z.string(),
    isActive: z.boolean(),
    createdAtUtc: z.iso.datetime(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'PayoutConfig' });
export type PayoutConfigOutput = z.infer<typeof payoutConfigOutput>;

export const sellerBalanceOutput = z
  .object({
    /** The seller balance id, also the wallet id (`GET /api/v1/wallets/{walletId}`). */
    id: z.uuid(),
    territoryId: z.uuid(),
    sellerUserId: z.uuid(),
    pendingAmountInCents: z.number().int(),
    readyForPayoutAmountInCents: z.number().int(),
    /** Taken by a payout the gateway has not completed yet (it returns to ready if the transfer fails). */
    inTransitAmountInCents: z.number().int(),
    paidAmountInCents: z.number().int(),
    /** The currency of every amount above: this balance is the seller's money in this currency only. */
    currency: z.string(),
    /**
     * Every currency the seller has a balance in here, alphabetically, this one included: money in another currency
     * is read with `?currency=` and never added to these amounts.
     */
    currencies: z.array(z.string()),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'SellerBalance' });
export type SellerBalanceOutput = z.infer<typeof sellerBalanceOutput>;

export const sellerTransactionOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    storeId: z.uuid(),
    checkoutId: z.uuid(),
    sellerUserId: z.uuid(),
    grossAmountInCents: z.number().int(),
    platformFeeInCents: z.number().int(),
    netAmountInCents: z.number().int(),
    currency: z.string(),
    status: z.enum(SELLER_TRANSACTION_STATUSES),
    readyForPayoutAtUtc: z.iso.datetime().meta({
      description:
        "The end of the retention: the sale's payment time plus the territory's retention period. Ready means past " +
        "retention and minimum: a PENDING sale past this time waits until the seller's releasable amount in the " +
        'territory and currency reaches the minimum payout (then the next release, within a minute, makes it READY).',
    }),
    payoutId: z.uuid().nullable(),
    paidAtUtc: z.iso.datetime(),
    createdAtUtc: z.iso.datetime(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'SellerTransaction' });
export type SellerTransactionOutput = z.infer<typeof sellerTransactionOutput>;

export const walletIdInput = z.object({ walletId: zId });

export const walletOutput = z
  .object({
    id: z.uuid(),
    ownerType: z.literal('seller'),
    ownerId: z.uuid(),
    territoryId: z.uuid(),
    /** (pending + ready for payout) / 100, a decimal number of the currency; paid money is excluded. */
    balance: z.number(),
    currency: z.string(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'Wallet' });
export type WalletOutput = z.infer<typeof walletOutput>;

export const payoutRunOutput = z
  .object({
    /** The pg-boss job of the run (queue `payouts-run`), as the operator view (`GET /api/v1/admin/jobs`) shows it. */
    jobId: z.string(),
  })
  .meta({ id: 'PayoutRunAccepted' });

export const payoutListInput = z.object({
  territoryId: zId,
  status: z.enum(PAYOUT_STATUSES).optional(),
  sellerUserId: zId.optional(),
  ...pageInput,
});
export type PayoutListInput = z.infer<typeof payoutListInput>;

export const myPayoutsInput = z.object({ territoryId: zId, ...pageInput });
export type MyPayoutsInput = z.infer<typeof myPayoutsInput>;

export const payoutOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    sellerUserId: z.uuid(),
    amountInCents: z.number().int(),
    currency: z.string(),
    status: z.enum(PAYOUT_STATUSES),
    /** The seller transactions this payout carries, once each. */
    transactionIds: z.array(z.uuid()),
    /**
     * How much of each it carries: a transaction larger than the territory's maximum payout is paid in several
     * payouts (spec Payout rule 4), each carrying part of it.
     */
    lines: z.array(z.object({ transactionId: z.uuid(), amountInCents: z.number().int() }).meta({ id: 'PayoutLine' })),
    /** Why the gateway refused the transfer (FAILED only): the amount went back to ready. */
    failureReason: z.string().nullable(),
    createdAtUtc: z.iso.datetime(),
    completedAtUtc: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Payout' });
export type PayoutOutput = z.infer<typeof payoutOutput>;

export const payoutPageOutput = pagedOutput(payoutOutput).meta({ id: 'PayoutPage' });
