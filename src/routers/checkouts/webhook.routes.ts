import { z } from 'zod';
import type { PlainRoutes } from '../../http/plain-routes.js';
import { clock } from '../../platform/clock.js';
import { fakeWebhookBody } from '../payments/gateway.js';
import { handleWebhook, WEBHOOK_OUTCOMES } from './payments.service.js';

export const WEBHOOK_PATH = '/api/v1/payments/webhooks/{provider}';
const webhookParams = z.object({ provider: z.string().describe('The gateway: `fake` or `stripe`, the configured provider.') });
const webhookHeaders = z.object({
  'X-Signature': z.string().optional().describe('`fake`: `sha256=<hex HMAC-SHA256 of the raw body with PAYMENTS__WEBHOOKSECRET>`'),
  'Stripe-Signature': z
    .string()
    .optional()
    .describe("`stripe`: Stripe's signature header, checked with the endpoint's signing secret (PAYMENTS__WEBHOOKSECRET)"),
});

/**
 * The gateway's webhook: a plain route because the signature covers the raw bytes of the body, which the REST
 * bridge (parsed JSON) no longer has. Its own scope parses every body as a Buffer. Public: the signature
 * authenticates the gateway.
 */
export const paymentsRoutes: PlainRoutes = {
  register(app, deps) {
    void app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
      scope.post(
        WEBHOOK_PATH.replace('{provider}', ':provider'),
        // Not rate limited: a gateway sends every payment's events from a few addresses (over 60 a minute on a busy
        // day), and a 429 would hold confirmations back for its retry schedule. The signature check, one HMAC before
        // any database work, is what an unsigned flood meets.
        { config: { rateLimit: false } },
        async (request, reply) => {
          const { provider } = request.params as { provider: string };
          const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
          const em = deps.orm.em.fork();
          const outcome = await handleWebhook(em as Parameters<typeof handleWebhook>[0], deps.config, clock, provider, raw, request.headers);
          return reply
            .status(200)
            .type('application/json')
            .send(JSON.stringify({ received: true, outcome }));
        },
      );
    });
  },
  openapi: {
    [WEBHOOK_PATH]: {
      post: {
        tags: ['Payments'],
        summary: "The payment gateway's webhook (signed; each event applied once)",
        // Not rate limited (see the route): no 429 in the document.
        'x-rate-limit': false,
        description:
          'Verifies the signature over the raw body (`X-Signature` for `fake`, `Stripe-Signature` for `stripe`; 400, nothing written, when it ' +
          'does not match), answers 200 `IGNORED` to a genuine event this platform does not act on, records the event id once (a replay or a ' +
          'concurrent duplicate answers 200 and changes nothing) and applies it: `payment.succeeded` marks an AWAITING_PAYMENT checkout PAID ' +
          '(seller transaction, ledger entries, ORDER_PAID to the seller); for a CANCELED or PAYMENT_FAILED checkout the payment is refunded; ' +
          '`payment.failed` marks it PAYMENT_FAILED. An amount or currency differing from the checkout: 400, nothing written.',
        requestParams: { path: webhookParams, header: webhookHeaders },
        requestBody: { required: true, content: { 'application/json': { schema: fakeWebhookBody } } },
        responses: {
          '200': {
            description: 'Received (applied, or a duplicate or late event that changed nothing but what is described)',
            content: {
              'application/json': {
                schema: z
                  .object({
                    received: z.literal(true),
                    outcome: z.enum(WEBHOOK_OUTCOMES),
                  })
                  .meta({ id: 'PaymentWebhookReceipt' }),
              },
            },
          },
          '400': { description: 'Bad signature, malformed body, unknown payment, or amount/currency differing from the checkout; nothing written' },
          '404': { description: 'Payments are off, or a signed event sent to another provider than the configured one' },
        },
      },
    },
  },
};
