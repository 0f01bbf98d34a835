import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import { type PlainRoutes, publicServiceContextOf } from '../../http/plain-routes.js';
import { rateLimitRouteConfig } from '../../http/rate-limit.js';
import { issueClientToken, OAuthError, type TokenRequest } from './clients.service.js';

const TOKEN_PATH = '/oauth/token';

const field = (body: Record<string, unknown>, name: string) => (typeof body[name] === 'string' ? (body[name] as string) : undefined);

/** Client credentials from the form body, or from HTTP Basic (RFC 6749 section 2.3.1: form-urlencoded id and secret). */
function tokenRequest(request: FastifyRequest): TokenRequest {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const request_: TokenRequest = {
    grantType: field(body, 'grant_type'),
    clientId: field(body, 'client_id'),
    clientSecret: field(body, 'client_secret'),
    scope: field(body, 'scope'),
  };
  const basic = /^Basic\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  if (basic?.[1]) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'The Basic credentials are malformed.', 401);
    request_.clientId = decodeURIComponent(decoded.slice(0, colon));
    request_.clientSecret = decodeURIComponent(decoded.slice(colon + 1));
  }
  return request_;
}

const tokenResponse = z.object({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number().int(), scope: z.string() });
const oauthError = z.object({
  error: z.enum(['invalid_request', 'invalid_client', 'invalid_grant', 'invalid_scope', 'unsupported_grant_type']),
  error_description: z.string(),
});

/**
 * `POST /oauth/token` (RFC 6749 section 4.4): form-encoded only, errors in the RFC's own body (not problem details),
 * never cached, rate-limited as auth.
 */
export const oauthRoutes: PlainRoutes = {
  register(app, deps) {
    app.post(TOKEN_PATH, { config: { rateLimit: rateLimitRouteConfig(deps.config, 'auth') } }, async (request, reply) => {
      reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
      try {
        if (!request.headers['content-type']?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
          throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
        }
        return reply.status(200).send(await issueClientToken(publicServiceContextOf(request, deps), tokenRequest(request)));
      } catch (error) {
        if (!(error instanceof OAuthError)) throw error;
        if (error.status === 401) reply.header('WWW-Authenticate', 'Basic realm="oauth"');
        if (error.status === 429) reply.header('Retry-After', '60');
        return reply.status(error.status).send({ error: error.error, error_description: error.description });
      }
    });
  },
  openapi: {
    [TOKEN_PATH]: {
      post: {
        tags: ['Authentication'],
        summary: 'OAuth 2.0 client-credentials token for the journeys API',
        description:
          'Form fields grant_type=client_credentials, client_id, client_secret (or HTTP Basic), scope (space-separated; ' +
          'none: every scope the client holds). Answers a client token (`typ: client+jwt`, 3600 s) for `Authorization: Bearer` ' +
          'on /api/v2. Errors follow RFC 6749 section 5.2.',
        security: [],
        requestBody: {
          content: {
            'application/x-www-form-urlencoded': {
              schema: z.object({
                grant_type: z.literal('client_credentials'),
                client_id: z.string().optional(),
                client_secret: z.string().optional(),
                scope: z.string().optional(),
              }),
            },
          },
        },
        responses: {
          '200': { description: 'The token', content: { 'application/json': { schema: tokenResponse } } },
          '400': { description: 'invalid_request, invalid_scope or unsupported_grant_type', content: { 'application/json': { schema: oauthError } } },
          '401': { description: 'invalid_client', content: { 'application/json': { schema: oauthError } } },
          '429': { description: 'Too many requests, or too many failed secrets for this client' },
        },
      },
    },
  },
};
