import csrfProtection from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { forbidden } from '../platform/problems.js';

/** Cookie and header names of the specification (Authentication 7). */
export const CSRF_COOKIE = '__Host-CSRF';
export const CSRF_HEADER = 'x-csrf-token';
export const CSRF_TOKEN_PATH = '/api/v1/csrf-token';

export const csrfTokenOutput = z
  .object({
    token: z.string().meta({ description: 'Send it back as the X-CSRF-Token header on operations that validate CSRF' }),
    headerName: z.literal('X-CSRF-Token'),
  })
  .meta({ id: 'CsrfToken' });

/** The 403 of a missing or mismatching token (also used for the plugin's own FST_CSRF_* errors). */
export const invalidCsrfToken = () => forbidden(`The X-CSRF-Token header is missing or does not match the ${CSRF_COOKIE} cookie.`, 'CSRF_TOKEN_INVALID');

/**
 * Issues an anti-forgery token for this browser: the `__Host-CSRF` cookie keeps the secret (HttpOnly, Secure,
 * SameSite=Strict, Path=/, so scripts and other sites never see it) and the returned token, derived from that
 * secret, is what the client echoes in `X-CSRF-Token`. Reuses the cookie's secret when the browser already has one.
 */
export function issueCsrfToken(reply: FastifyReply): string {
  withCookies(reply.request);
  return reply.generateCsrf();
}

/** The request's cookies, parsed on first use: only the CSRF routes read cookies (app.ts registers no parsing hook). */
function withCookies(request: FastifyRequest) {
  request.cookies ??= request.server.parseCookie(request.headers.cookie ?? '');
  return request.cookies;
}

/**
 * preHandler for routes that opt in to CSRF validation (the specification applies it only where a route asks):
 * `app.post(url, { preHandler: requireCsrf }, handler)`. A missing or mismatching token is a 403 problem
 * with code CSRF_TOKEN_INVALID.
 */
export function requireCsrf(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
  const header = request.headers[CSRF_HEADER];
  if (typeof header !== 'string' || header === '' || !withCookies(request)[CSRF_COOKIE]) return done(invalidCsrfToken());
  request.server.csrfProtection(request, reply, done as () => void);
}

/** OpenAPI description of the token route (merged into the document by app.ts). */
export const csrfOpenApiPaths: ZodOpenApiPathsObject = {
  [CSRF_TOKEN_PATH]: {
    get: {
      tags: ['Authentication'],
      summary: 'Issue a CSRF token (sets the __Host-CSRF cookie)',
      description:
        'For browser clients of operations that validate CSRF: the response sets the `__Host-CSRF` cookie ' +
        '(HttpOnly, Secure, SameSite=Strict) and returns the token to send as the `X-CSRF-Token` header.',
      responses: {
        200: { description: 'The token', content: { 'application/json': { schema: csrfTokenOutput } } },
      },
    },
  },
};

/**
 * Double-submit CSRF protection through @fastify/csrf-protection (the cookie holds the secret, the header carries a
 * token derived from it). Needs @fastify/cookie registered first.
 */
export const csrfPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(csrfProtection, {
      sessionPlugin: '@fastify/cookie',
      cookieKey: CSRF_COOKIE,
      cookieOpts: { path: '/', httpOnly: true, secure: true, sameSite: 'strict' },
      // Only the header counts: a token in a form field or query string could be planted by another site.
      getToken: (request) => {
        const value = request.headers[CSRF_HEADER];
        return typeof value === 'string' ? value : undefined;
      },
    });

    app.get(CSRF_TOKEN_PATH, { schema: { hide: true } }, async (_request, reply) => {
      const token = issueCsrfToken(reply);
      reply.header('Cache-Control', 'no-store');
      return { token, headerName: 'X-CSRF-Token' as const };
    });
  },
  { name: 'csrf', dependencies: ['@fastify/cookie'] },
);
