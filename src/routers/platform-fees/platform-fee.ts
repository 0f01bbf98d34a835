/** The platform fee of a checkout line (DESIGN section 13), for the checkout; pure, integer cents only. */
import type { FeeMode } from '../../entities/platform-fee.entity.js';

export interface FeeRule {
  feeMode: FeeMode;
  feeBasisPoints: number | null;
  feeFixedInCents: number | null;
}

/** `numerator / denominator` rounded to the nearest integer, ties to even (banker's rounding); non-negative inputs. */
export function roundHalfEven(numerator: bigint, denominator: bigint): bigint {
  const quotient = numerator / denominator;
  const twice = (numerator % denominator) * 2n;
  if (twice > denominator || (twice === denominator && quotient % 2n === 1n)) return quotient + 1n;
  return quotient;
}

/**
 * PERCENTAGE: round_half_even(lineSubtotal * bp / 10000); FIXED: fixed * quantity; never above the line subtotal.
 * The seller pays it (netToSeller = subtotal - fee); the buyer pays the subtotal.
 */
export function platformFeeInCents(rule: FeeRule | null, lineSubtotalInCents: number, quantity: number): number {
  if (!rule) return 0;
  const fee =
    rule.feeMode === 'PERCENTAGE'
      ? Number(roundHalfEven(BigInt(lineSubtotalInCents) * BigInt(rule.feeBasisPoints ?? 0), 10_000n))
      : (rule.feeFixedInCents ?? 0) * quantity;
  return Math.min(fee, lineSubtotalInCents);
}
