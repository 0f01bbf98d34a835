/**
 * The payout gateway (spec Payout rule 6, DESIGN section 13 "Payout jobs"): the replaceable component that transfers
 * a payout to its seller. The provider comes from PAYOUTS__PROVIDER: `none` (payouts off: nothing is transferred,
 * ready money stays ready; the production default) or `fake`, the local default outside production, which moves no
 * money and is refused in production.
 *
 * The `fake` gateway is stateless and deterministic, so it behaves the same in every process and after a restart:
 * - `createPayout` is idempotent by payout id: the same id always gets the same reference (`fake_po_<payoutId>`);
 * - `getPayoutStatus` reports COMPLETED at the first check,
 * - except for a payout whose amount in cents ends in 666 (`amountInCents % 1000 === 666`, e.g. 6.66 or 1,006.66):
 *   the fake accepts it and then reports it FAILED, like the failing test bank accounts of real gateways. Tests and
 *   developers use that amount to see a failed transfer go back to ready.
 */
import type { AppConfig } from '../../config.js';
import type { PayoutProvider } from '../../entities/payout.entity.js';

export interface CreatePayoutRequest {
  /** Our payout id: the idempotency key of the transfer (a repeat must not transfer twice). */
  payoutId: string;
  territoryId: string;
  sellerUserId: string;
  amountInCents: number;
  currency: string;
}

export type PayoutGatewayStatus = { status: 'PROCESSING' } | { status: 'COMPLETED' } | { status: 'FAILED'; reason: string };

export interface PayoutGateway {
  readonly provider: PayoutProvider;
  /** Asks for the transfer; a repeat with the same payout id answers the first reference and transfers nothing more. */
  createPayout(request: CreatePayoutRequest): Promise<{ reference: string }>;
  /** Where the transfer stands. */
  getPayoutStatus(request: { payoutId: string; reference: string }): Promise<PayoutGatewayStatus>;
}

/** Amounts whose last three digits of cents are these fail at the fake gateway (see the module comment). */
export const FAKE_FAILING_PAYOUT_CENTS_SUFFIX = 666;

export const fakePayoutFails = (amountInCents: number) => amountInCents % 1000 === FAKE_FAILING_PAYOUT_CENTS_SUFFIX;

const DECLINED = '_declined';

export class FakePayoutGateway implements PayoutGateway {
  readonly provider = 'fake' as const;

  async createPayout(request: CreatePayoutRequest): Promise<{ reference: string }> {
    // The outcome travels in the reference, so status checks need no memory of the creation.
    return { reference: `fake_po_${request.payoutId}${fakePayoutFails(request.amountInCents) ? DECLINED : ''}` };
  }

  async getPayoutStatus(request: { payoutId: string; reference: string }): Promise<PayoutGatewayStatus> {
    if (request.reference.endsWith(DECLINED)) {
      return { status: 'FAILED', reason: `The fake gateway declines payouts whose amount ends in ${FAKE_FAILING_PAYOUT_CENTS_SUFFIX} cents.` };
    }
    return { status: 'COMPLETED' };
  }
}

/** The configured gateway; null when payouts are off (`none`). */
export function payoutGatewayOf(config: AppConfig): PayoutGateway | null {
  return config.payouts.provider === 'fake' ? new FakePayoutGateway() : null;
}
