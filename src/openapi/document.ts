import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { inputFields, restOperations } from './plugin.js';

const OAUTH_TOKEN_PATH = '/oauth/token';

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string(),
    code: z.string().meta({ description: 'Stable UPPER_SNAKE identifier, e.g. VALIDATION_FAILED, NOT_FOUND' }),
    errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details: the body of every v1 error' });

export const journeyErrorSchema = z
  .object({
    error: z.string(),
    code: z.string(),
    details: z.object({ field: z.string(), message: z.string() }).nullable(),
    timestamp: z.string(),
  })
  .meta({ id: 'JourneyError', description: 'Error body of the v2 journeys layer' });

const ERROR_TEXT: Record<string, string> = {
  '400': 'Invalid input (VALIDATION_FAILED lists each field)',
  '401': 'Missing, invalid or expired token',
  '402': 'Payment required',
  '403': 'The caller lacks the role or is not the owner',
  '404': 'Not found',
  '409': 'Conflict with the current state',
  '413': 'Payload too large',
  '429': 'Too many requests (Retry-After: 60)',
  '500': 'Unexpected server error',
};

/** The spec's 429 carries `Retry-After: 60`; declared so generated clients can read it. */
const RETRY_AFTER_HEADER = { description: 'Seconds to wait before trying again', schema: { type: 'integer' } };

type Operation = { responses: Record<string, { description?: string; content?: Record<string, unknown> }> } & Record<string, unknown>;

/**
 * One OpenAPI 3.1 document for v1 and v2: generated from the procedures' zod schemas, plus the plain Fastify
 * routes (multipart, form, downloads) given as `extraPaths`, then adjusted: 201/204 where an operation
 * declares them, problem-details (or journeys) error bodies, and the security schemes.
 */
export function buildOpenApiDocument(router: AnyRouter, extraPaths: ZodOpenApiPathsObject, version: string): OpenAPIObject {
  const doc = generateOpenApiDocument(router, {
    title: 'territory-platform API',
    description:
      'Territory-centred community platform. v1 (`/api/v1`) is authenticated with a user bearer JWT ' +
      '(`POST /api/v1/auth/social`); v2 journeys (`/api/v2/journeys`) with OAuth2 client credentials ' +
      '(`POST /oauth/token`) plus an optional `X-User-Token`. Errors are RFC 9457 problem details.',
    version,
    baseUrl: '/',
    securitySchemes: {
      BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'User token from POST /api/v1/auth/social' },
      ClientCredentials: {
        type: 'oauth2',
        description: 'Client applications of the journeys layer',
        flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: { 'journeys:read': 'GET journeys', 'journeys:write': 'POST journeys' } } },
      },
    },
    paths: extraPaths,
    defs: { Problem: problemSchema, JourneyError: journeyErrorSchema },
  });

  const statusByOperation = new Map<string, { status: number; idempotentRepeat: boolean }>();
  const queryParameters = new Map<string, unknown[]>();
  for (const op of restOperations(router)) {
    const fields = inputFields(op.procedure);
    const fromQuery = (op.meta.queryFields ?? []).map((name) => {
      const { $schema: _, ...schema } = z.toJSONSchema(fields[name] as z.ZodType, { io: 'input' });
      return { name, in: 'query', required: false, description: 'Also accepted in the body (which wins)', schema };
    });
    if (fromQuery.length > 0) queryParameters.set(`${op.method.toLowerCase()} ${op.path}`, fromQuery);
    if (op.meta.successStatus) {
      statusByOperation.set(`${op.method.toLowerCase()} ${op.path}`, { status: op.meta.successStatus, idempotentRepeat: op.meta.idempotentRepeat ?? false });
    }
  }

  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const isJourney = path.startsWith('/api/v2/');
    for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
      if (!operation?.responses) continue;
      // The generator lists every scheme on protected operations; each API version has exactly one.
      if (Array.isArray(operation.security) && operation.security.length > 0)
        operation.security = isJourney ? [{ ClientCredentials: [] }] : [{ BearerAuth: [] }];
      const fromQuery = queryParameters.get(`${method} ${path}`);
      if (fromQuery) operation.parameters = [...((operation.parameters as unknown[] | undefined) ?? []), ...fromQuery];
      const success = statusByOperation.get(`${method} ${path}`);
      if (success && operation.responses['200']) {
        const ok = operation.responses['200'];
        delete operation.responses['200'];
        if (success.status === 204) {
          operation.responses['204'] = { description: 'No content' };
        } else if (success.status === 202) {
          operation.responses['202'] = { ...ok, description: 'Accepted: the work runs in the background' } as (typeof operation.responses)[string];
        } else {
          operation.responses['201'] = {
            ...ok,
            description: 'Created',
            headers: { Location: { description: 'URL of the created resource (when it has one)', schema: { type: 'string' } } },
          } as (typeof operation.responses)[string];
          if (success.idempotentRepeat) operation.responses['200'] = { ...ok, description: 'Already existed: the existing resource (idempotent repeat)' };
        }
      }
      const errorBody = (status: string) => ({
        description: ERROR_TEXT[status] ?? 'Error',
        ...(status === '429' ? { headers: { 'Retry-After': RETRY_AFTER_HEADER } } : {}),
        content: isJourney
          ? { 'application/json': { schema: { $ref: '#/components/schemas/JourneyError' } } }
          : { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      });
      for (const status of Object.keys(operation.responses)) {
        if (Number(status) < 400) continue;
        // The token endpoint answers its errors in RFC 6749's own body, as its route declares (not problem details).
        if (path === OAUTH_TOKEN_PATH && status !== '429') continue;
        operation.responses[status] = errorBody(status);
      }
      // Every route is rate limited but those that say otherwise (`x-rate-limit: false`: the payment webhook).
      if (!operation.responses['429'] && (operation as { 'x-rate-limit'?: boolean })['x-rate-limit'] !== false) operation.responses['429'] = errorBody('429');
      // An id in the path names something that may not exist (or not be visible to the caller): 404. The generator
      // lists it for GET and DELETE only.
      if (path.includes('{') && !operation.responses['404']) operation.responses['404'] = errorBody('404');
      operation.responses = Object.fromEntries(Object.entries(operation.responses).sort(([a], [b]) => Number(a) - Number(b)));
    }
  }
  return doc;
}
