/**
 * The `stripe` payment provider (DESIGN section 13 "Payments"), on the official `stripe` package (pinned API version
 * of the installed package). A checkout's payment is one PaymentIntent carrying our ids in its metadata (Stripe copies
 * them to the charge, so refund events find their checkout too):
 * - PIX: created and confirmed at once; the copy-paste code is the `pix_display_qr_code.data` of its next action.
 * - CARD: with a `paymentToken` (a PaymentMethod id from Stripe.js, e.g. `pm_card_visa` in test mode) it is confirmed
 *   at once, and a card error is a decline (402 PAYMENT_DECLINED upstream); without one it is left for the client to
 *   confirm with Stripe.js and its `clientSecret`. A 3-D Secure challenge is the client's too, with the same secret.
 * - BOLETO: left for the client to confirm with Stripe.js (it needs the payer's name, e-mail and CPF).
 * Requests carry idempotency keys derived from our ids, so the client's own network retries (and ours) never charge
 * or refund twice. Webhooks are verified with `stripe.webhooks.constructEvent` over the raw body and the
 * `Stripe-Signature` header (and its timestamp tolerance, against replays), then mapped:
 * `payment_intent.succeeded` -> payment.succeeded, `payment_intent.payment_failed` -> payment.failed,
 * `charge.refunded` -> payment.refunded; any other event, or one about a PaymentIntent that is not ours, is null.
 */
import type { IncomingHttpHeaders } from 'node:http';
import Stripe from 'stripe';
import { z } from 'zod';
import { badRequest } from '../../platform/problems.js';
import {
  type CreatePaymentRequest,
  type CreatePaymentResult,
  invalidWebhookSignature,
  type PaymentGateway,
  paymentGatewayUnavailable,
  type RefundRequest,
  type WebhookEvent,
  type WebhookEventType,
} from './gateway-contract.js';

export interface StripeGatewayOptions {
  secretKey: string;
  webhookSecret: string;
  /** Where the API is (default https://api.stripe.com). */
  apiUrl?: string | undefined;
}

/**
 * Stripe counts amounts in the currency's smallest unit; every amount here is in hundredths. Zero-decimal currencies
 * (https://docs.stripe.com/currencies#zero-decimal) take whole units, three-decimal ones thousandths.
 */
const ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

export function toStripeAmount(amountInCents: number, currency: string): number {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) {
    if (amountInCents % 100 !== 0)
      throw badRequest(`${code} has no fractional unit: the amount ${amountInCents / 100} cannot be charged.`, 'VALIDATION_FAILED');
    return amountInCents / 100;
  }
  return THREE_DECIMAL.has(code) ? amountInCents * 10 : amountInCents;
}

/** Stripe's amount in our cents; not an integer when it cannot be one (then it matches no checkout). */
export function fromStripeAmount(amount: number, currency: string): number {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) return amount * 100;
  return THREE_DECIMAL.has(code) ? amount / 10 : amount;
}

/** How long one API request may take: the checkout waits for it inside its transaction (which idles at most 60 s). */
const REQUEST_TIMEOUT_MS = 15_000;

/** The metadata naming our payment on the PaymentIntent (and, copied by Stripe, on its charge). */
const ourMetadata = z.object({ checkoutId: z.uuid(), paymentId: z.uuid() });

/** A failure of the API call that is not the card's: nothing may be written, the caller (or the gateway) retries. */
function unavailable(error: unknown) {
  const problem = paymentGatewayUnavailable();
  // Kept for the error log (TRPCError types `cause` read-only; at run time it is a plain field).
  (problem as { cause?: unknown }).cause = error;
  return problem;
}

/** The reason when Stripe refused the payment method itself (a declined card, an unknown or unusable token). */
function declineReason(error: unknown): string | null {
  if (error instanceof Stripe.errors.StripeCardError) return error.message || 'The card was declined.';
  if (error instanceof Stripe.errors.StripeInvalidRequestError && error.param?.startsWith('payment_method')) {
    return error.message || 'The payment method was refused.';
  }
  return null;
}

export class StripePaymentGateway implements PaymentGateway {
  readonly provider = 'stripe' as const;
  private readonly stripe: Stripe;
  private readonly webhookSecret: string;

  constructor(options: StripeGatewayOptions) {
    const url = options.apiUrl ? new URL(options.apiUrl) : null;
    const protocol = url?.protocol === 'http:' ? ('http' as const) : ('https' as const);
    this.stripe = new Stripe(options.secretKey, {
      maxNetworkRetries: 1,
      timeout: REQUEST_TIMEOUT_MS,
      appInfo: { name: 'territory-platform' },
      ...(url ? { host: url.hostname, port: url.port || (protocol === 'http' ? 80 : 443), protocol } : {}),
    });
    this.webhookSecret = options.webhookSecret;
  }

  async createPayment(request: CreatePaymentRequest): Promise<CreatePaymentResult> {
    const params: Stripe.PaymentIntentCreateParams = {
      amount: toStripeAmount(request.amountInCents, request.currency),
      currency: request.currency.toLowerCase(),
      description: `Checkout ${request.checkoutId}`,
      metadata: { checkoutId: request.checkoutId, paymentId: request.paymentId },
    };
    if (request.method === 'PIX') {
      Object.assign(params, { allowed_payment_method_types: ['pix'], payment_method_data: { type: 'pix' }, confirm: true });
    } else if (request.method === 'BOLETO') {
      params.allowed_payment_method_types = ['boleto'];
    } else {
      params.allowed_payment_method_types = ['card'];
      if (request.paymentToken) Object.assign(params, { payment_method: request.paymentToken, confirm: true });
    }
    let intent: Stripe.PaymentIntent;
    try {
      intent = await this.stripe.paymentIntents.create(params, { idempotencyKey: `payment:${request.paymentId}` });
    } catch (error) {
      const reason = declineReason(error);
      if (reason === null) throw unavailable(error);
      // A declined confirmation still created the PaymentIntent: keep its id for the record.
      const declinedIntent = error instanceof Stripe.errors.StripeError ? error.payment_intent : undefined;
      return { outcome: 'DECLINED', providerPaymentId: declinedIntent?.id ?? `stripe_declined_${request.paymentId}`, reason };
    }
    if (params.confirm && (intent.status === 'canceled' || intent.status === 'requires_payment_method')) {
      const reason = intent.last_payment_error?.message ?? 'The payment was declined.';
      return { outcome: 'DECLINED', providerPaymentId: intent.id, reason };
    }
    if (request.method === 'PIX') {
      const code = intent.next_action?.pix_display_qr_code?.data;
      if (!code) throw unavailable(new Error(`PaymentIntent ${intent.id} has no PIX code (status ${intent.status})`));
      return { outcome: 'PENDING', providerPaymentId: intent.id, pixCopyPasteCode: code, clientSecret: null };
    }
    return { outcome: 'PENDING', providerPaymentId: intent.id, pixCopyPasteCode: null, clientSecret: intent.client_secret };
  }

  parseWebhook(rawBody: Buffer, headers: IncomingHttpHeaders): WebhookEvent | null {
    const header = headers['stripe-signature'];
    if (typeof header !== 'string' || header.length === 0) throw invalidWebhookSignature();
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(rawBody, header, this.webhookSecret);
    } catch (error) {
      if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw invalidWebhookSignature();
      throw badRequest('The webhook body is not a valid Stripe event.', 'VALIDATION_FAILED');
    }
    const ours = (type: WebhookEventType, object: { metadata?: unknown; currency?: unknown }, amount: unknown): WebhookEvent | null => {
      const ids = ourMetadata.safeParse(object.metadata);
      if (!ids.success || typeof amount !== 'number' || typeof object.currency !== 'string') return null;
      return {
        id: event.id,
        type,
        paymentId: ids.data.paymentId,
        checkoutId: ids.data.checkoutId,
        amountInCents: fromStripeAmount(amount, object.currency),
        currency: object.currency.toUpperCase(),
        payload: event as unknown as Record<string, unknown>,
      };
    };
    switch (event.type) {
      case 'payment_intent.succeeded':
        return ours('payment.succeeded', event.data.object, event.data.object.amount_received);
      case 'payment_intent.payment_failed':
        return ours('payment.failed', event.data.object, event.data.object.amount);
      case 'charge.refunded':
        return ours('payment.refunded', event.data.object, event.data.object.amount);
      default:
        return null;
    }
  }

  async refund(request: RefundRequest): Promise<{ refundId: string }> {
    const amount = toStripeAmount(request.amountInCents, request.currency);
    try {
      const refund = await this.stripe.refunds.create(
        { payment_intent: request.providerPaymentId, amount, metadata: { reason: request.reason.slice(0, 500) } },
        { idempotencyKey: `refund:${request.providerPaymentId}:${amount}` },
      );
      return { refundId: refund.id };
    } catch (error) {
      throw unavailable(error);
    }
  }
}
