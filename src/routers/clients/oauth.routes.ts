import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type PlainRoutes, publicServiceContextOf } from '../../http/plain-routes.js';
import { rateLimitRouteConfig } from '../../http/rate-limit.js';
import { problem, RATE_LIMIT_DETAIL } from '../../platform/problems.js';
import { issueClientToken, OAuthError, type TokenRequest } from './clients.service.js';

const TOKEN_PATH = '/oauth/token';

/** The body of a request that was not form-encoded: read (within the body limit) and ignored. */
const NOT_FORM = Symbol('not a form body');

type FormFields = Record<string, string | string[]>;

/** A form body's fields; a repeated field keeps all its values (`tokenRequest` refuses it). */
function parseForm(text: string): FormFields {
  const fields: FormFields = Object.create(null) as FormFields;
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = fields[name];
    if (seen === undefined) fields[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else fields[name] = [seen, value];
  }
  return fields;
}

/** The parameters of a token request (RFC 6749 section 4.4.2, and the client's credentials of section 2.3.1). */
type TokenParameter = 'grant_type' | 'client_id' | 'client_secret' | 'scope';

/**
 * A parameter's value; sent without a value it is omitted (RFC 6749 section 3.2: "Parameters sent without a value MUST
 * be treated as if they were omitted"), and sent twice it makes the request invalid ("MUST NOT be included more than
 * once"; section 5.2: `invalid_request` for a request that "repeats a parameter").
 */
function field(body: FormFields, name: TokenParameter): string | undefined {
  const value = body[name];
  if (Array.isArray(value)) throw new OAuthError('invalid_request', `The parameter ${name} is repeated.`, 400);
  return value === '' ? undefined : value;
}

/** Form-urlencoded decoding (`+` is a space); null when the percent-encoding is malformed. */
function formDecode(value: string): string | null {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/** Client credentials from the form body, or from HTTP Basic (RFC 6749 section 2.3.1: form-urlencoded id and secret). */
function tokenRequest(request: FastifyRequest, body: FormFields): TokenRequest {
  const request_: TokenRequest = {
    grantType: field(body, 'grant_type'),
    clientId: field(body, 'client_id'),
    clientSecret: field(body, 'client_secret'),
    scope: field(body, 'scope'),
  };
  const basic = /^Basic\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  if (basic?.[1]) {
    // One authentication method per request (RFC 6749 section 2.3); a client_id in the form beside Basic is harmless.
    if (request_.clientSecret !== undefined) {
      throw new OAuthError('invalid_request', 'Send the client credentials one way: HTTP Basic or client_secret in the form, not both.', 400);
    }
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const id = colon < 0 ? null : formDecode(decoded.slice(0, colon));
    const secret = colon < 0 ? null : formDecode(decoded.slice(colon + 1));
    // Credentials sent in the Authorization header that cannot be read failed client authentication: 401 (section 5.2).
    if (id === null || secret === null) throw new OAuthError('invalid_client', 'The Basic credentials are malformed.', 401);
    request_.clientId = id;
    request_.clientSecret = secret;
  }
  return request_;
}

/**
 * The token endpoint's error answers. Its own refusals are RFC 6749 section 5.2 bodies; the lockout of a client is
 * a 429, which has the spec's 429 body (DESIGN section 4, and the Problem the OpenAPI document declares for it) and
 * keeps `error`/`error_description` as extension members, so OAuth libraries still read why.
 */
function sendOAuthError(request: FastifyRequest, reply: FastifyReply, error: Pick<OAuthError, 'error' | 'description'> & { status: number }) {
  if (error.status === 429) {
    const instance = request.url.split('?')[0] ?? request.url;
    return reply
      .status(429)
      .header('Retry-After', '60')
      .type('application/problem+json')
      .send({ ...problem(429, 'RATE_LIMIT_EXCEEDED', RATE_LIMIT_DETAIL, instance), error: error.error, error_description: error.description });
  }
  if (error.status === 401) reply.header('WWW-Authenticate', 'Basic realm="oauth"');
  return reply.status(error.status).type('application/json').send({ error: error.error, error_description: error.description });
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
    // A scope of its own whose parsers replace the app's: only a form body is parsed, any other body is read (within
    // the body limit) and refused by the handler, so no JSON or media-type error of the app reaches a token client.
    void app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
        done(null, parseForm(typeof body === 'string' ? body : body.toString('utf8')));
      });
      scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, NOT_FORM));
      // RFC 6749 section 5.1: no token response, error or not, is cached.
      scope.addHook('onRequest', (_request, reply, done) => {
        reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
        done();
      });
      scope.setErrorHandler((error, request, reply) => {
        if (error instanceof OAuthError) return sendOAuthError(request, reply, error);
        const status = (error as { statusCode?: unknown }).statusCode;
        // Fastify's refusals of the request itself (an unparsable Content-Type, a body over the limit or not matching
        // its Content-Length) are invalid requests; a too large body keeps its 413.
        if (typeof status === 'number' && status >= 400 && status < 500 && status !== 429) {
          const description = status === 413 ? 'The body is too large.' : 'The request is malformed.';
          return sendOAuthError(request, reply, { error: 'invalid_request', description, status: status === 413 ? 413 : 400 });
        }
        // Rate limiting (the spec's 429) and server failures: the app's handler.
        throw error;
      });
      scope.post(TOKEN_PATH, { config: { rateLimit: rateLimitRouteConfig(deps.config, 'auth') } }, async (request, reply) => {
        const body = request.body;
        if (body === undefined || body === NOT_FORM) {
          throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
        }
        return reply.status(200).send(await issueClientToken(publicServiceContextOf(request, deps), tokenRequest(request, body as FormFields)));
      });
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
          '400': {
            description: 'invalid_request (also any body that is not form-encoded), invalid_scope or unsupported_grant_type',
            content: { 'application/json': { schema: oauthError } },
          },
          '401': { description: 'invalid_client', content: { 'application/json': { schema: oauthError } } },
          '413': { description: 'invalid_request: the body is over the limit', content: { 'application/json': { schema: oauthError } } },
          '429': {
            description:
              "Too many requests, or too many failed secrets for this client: the spec's 429 (Retry-After: 60); the lockout also " +
              'carries error=invalid_client and error_description',
          },
        },
      },
    },
  },
};
