/**
 * The payment gateway (DESIGN section 13 "Payments"): `createPayment`, `parseWebhook`, `refund`. The provider comes
 * from PAYMENTS__PROVIDER: `none` (payments off: no gateway, every cart line becomes an inquiry), `fake`, the local
 * default outside production: it issues payments with a PIX copy-paste code (or a card client secret), declines the
 * card token `tok_fake_declined` at once, and confirms through webhooks signed like a real gateway's
 * (`X-Signature: sha256=<HMAC-SHA256 hex of the raw body with PAYMENTS__WEBHOOKSECRET>`), or `stripe`
 * (stripe-gateway.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import type { AppConfig } from '../../config.js';
import { newId } from '../../platform/ids.js';
import { badRequest } from '../../platform/problems.js';
import {
  type CreatePaymentRequest,
  type CreatePaymentResult,
  invalidWebhookSignature,
  type PaymentGateway,
  type RefundRequest,
  WEBHOOK_EVENT_TYPES,
  type WebhookEvent,
} from './gateway-contract.js';
import { StripePaymentGateway } from './stripe-gateway.js';

export type { CreatePaymentRequest, CreatePaymentResult, PaymentGateway, RefundRequest, WebhookEvent, WebhookEventType } from './gateway-contract.js';
export { WEBHOOK_EVENT_TYPES } from './gateway-contract.js';

/** The body of a `fake` webhook (DESIGN section 13). */
export const fakeWebhookBody = z
  .object({
    id: z.string().min(1).max(200),
    type: z.enum(WEBHOOK_EVENT_TYPES),
    data: z.object({
      paymentId: z.uuid(),
      checkoutId: z.uuid(),
      amountInCents: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
      currency: z.string().regex(/^[A-Z]{3}$/),
    }),
  })
  .meta({ id: 'FakePaymentWebhook' });
export type FakeWebhookBody = z.infer<typeof fakeWebhookBody>;

/** `sha256=<hex>` of the raw body. */
export function signWebhook(secret: string, rawBody: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

const invalidSignature = invalidWebhookSignature;

/** The card token the fake gateway declines, like the test tokens of real gateways. */
export const FAKE_DECLINED_TOKEN = 'tok_fake_declined';

/** A PIX "copia e cola" look-alike (EMV fields with the amount); nothing pays it but the simulate operation. */
function fakePixCode(paymentId: string, amountInCents: number): string {
  const amount = (amountInCents / 100).toFixed(2);
  const field = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;
  const account = field('00', 'br.gov.bcb.pix') + field('01', `fake-${paymentId}`);
  return `${field('00', '01')}${field('26', account)}${field('52', '0000')}${field('53', '986')}${field('54', amount)}${field('58', 'BR')}${field('59', 'TERRITORY FAKE')}${field('60', 'SAO PAULO')}6304FAKE`;
}

export class FakePaymentGateway implements PaymentGateway {
  readonly provider = 'fake' as const;
  /** Refunds issued by this process (what a test or a developer can inspect). */
  static readonly refunds: Array<{ refundId: string; providerPaymentId: string; amountInCents: number; currency: string; reason: string }> = [];

  constructor(private readonly secret: string) {}

  async createPayment(request: CreatePaymentRequest): Promise<CreatePaymentResult> {
    const providerPaymentId = `fake_pay_${request.paymentId}`;
    if (request.method === 'CARD' && request.paymentToken === FAKE_DECLINED_TOKEN) {
      return { outcome: 'DECLINED', providerPaymentId, reason: 'The card was declined.' };
    }
    return {
      outcome: 'PENDING',
      providerPaymentId,
      pixCopyPasteCode: request.method === 'PIX' ? fakePixCode(request.paymentId, request.amountInCents) : null,
      clientSecret: request.method === 'CARD' ? `${providerPaymentId}_secret_${newId().replace(/-/g, '')}` : null,
    };
  }

  parseWebhook(rawBody: Buffer, headers: IncomingHttpHeaders): WebhookEvent {
    const header = headers['x-signature'];
    if (typeof header !== 'string') throw invalidSignature();
    const expected = Buffer.from(signWebhook(this.secret, rawBody));
    const given = Buffer.from(header.trim());
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidSignature();
    let json: unknown;
    try {
      json = JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw badRequest('The webhook body is not valid JSON.', 'VALIDATION_FAILED');
    }
    const parsed = fakeWebhookBody.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw badRequest(`${issue?.path.join('.') || '(body)'}: ${issue?.message ?? 'invalid value'}`, 'VALIDATION_FAILED');
    }
    const body = parsed.data;
    return { id: body.id, type: body.type, ...body.data, payload: body as unknown as Record<string, unknown> };
  }

  async refund(request: RefundRequest): Promise<{ refundId: string }> {
    const refundId = `fake_re_${newId()}`;
    FakePaymentGateway.refunds.push({ refundId, ...request });
    return { refundId };
  }
}

const gateways = new WeakMap<AppConfig, PaymentGateway>();

/** The configured gateway (one per configuration: the Stripe client keeps its connections); null when payments are off (`none`). */
export function paymentGatewayOf(config: AppConfig): PaymentGateway | null {
  if (config.payments.provider === 'none') return null;
  let gateway = gateways.get(config);
  if (!gateway) {
    gateway =
      config.payments.provider === 'stripe'
        ? new StripePaymentGateway({ ...config.payments.stripe, webhookSecret: config.payments.webhookSecret })
        : new FakePaymentGateway(config.payments.webhookSecret);
    gateways.set(config, gateway);
  }
  return gateway;
}
