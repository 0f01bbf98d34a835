/**
 * What every payment provider implements (DESIGN section 13 "Payments"), apart from the factory in gateway.ts so a
 * provider's module can use it without importing the module that chooses among providers.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { PaymentMethod } from '../../entities/checkout.entity.js';
import type { PaymentProvider } from '../../entities/payment.entity.js';
import { AppError, badRequest } from '../../platform/problems.js';

export interface CreatePaymentRequest {
  paymentId: string;
  checkoutId: string;
  amountInCents: number;
  currency: string;
  method: PaymentMethod;
  /** The card token of a CARD payment. */
  paymentToken: string | null;
}

export type CreatePaymentResult =
  | { outcome: 'PENDING'; providerPaymentId: string; pixCopyPasteCode: string | null; clientSecret: string | null }
  | { outcome: 'DECLINED'; providerPaymentId: string; reason: string };

export const WEBHOOK_EVENT_TYPES = ['payment.succeeded', 'payment.failed', 'payment.refunded'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A verified gateway event, in our terms. */
export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  paymentId: string;
  checkoutId: string;
  amountInCents: number;
  currency: string;
  payload: Record<string, unknown>;
}

export interface RefundRequest {
  providerPaymentId: string;
  amountInCents: number;
  currency: string;
  reason: string;
}

export interface PaymentGateway {
  readonly provider: PaymentProvider;
  createPayment(request: CreatePaymentRequest): Promise<CreatePaymentResult>;
  /**
   * Verifies the signature of the raw body and parses it: a bad signature or body is a 400. Null: a genuine event
   * this platform does not act on (another event type, a payment that is not one of ours), answered 200 and not
   * recorded, so the gateway stops sending it.
   */
  parseWebhook(rawBody: Buffer, headers: IncomingHttpHeaders): WebhookEvent | null;
  refund(request: RefundRequest): Promise<{ refundId: string }>;
}

export const invalidWebhookSignature = () => badRequest('The webhook signature is missing or does not match the body.', 'INVALID_WEBHOOK_SIGNATURE');

/** The gateway could not be reached or refused our request: nothing was written, the client (or the gateway) retries. */
export const paymentGatewayUnavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'PAYMENT_GATEWAY_UNAVAILABLE', 'The payment gateway is unavailable. Please try again shortly.', {
    headers: { 'Retry-After': '5' },
  });
