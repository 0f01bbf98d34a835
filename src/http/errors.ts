import { TRPCError } from '@trpc/server';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ZodError } from 'zod';
import {
  accountDeleted,
  AppError,
  DATABASE_RETRY_AFTER_SECONDS,
  databaseErrorCode,
  databaseUnavailable,
  type FieldError,
  type ProblemCode,
  invalidValue,
  isConcurrencyFailure,
  concurrentUpdate,
  isDatabaseUnavailable,
  isDataException,
  isDeletedAccountWrite,
  journeyError,
  problem,
  RATE_LIMIT_DETAIL,
  statusTitle,
} from '../platform/problems.js';
import { zodFieldErrors } from '../trpc/init.js';
import { invalidCsrfToken } from './csrf.js';
import { isJourneyUrl } from './journey-path.js';

const TRPC_STATUS: Record<string, number> = {
  PARSE_ERROR: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  PAYMENT_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_SUPPORTED: 405,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNPROCESSABLE_CONTENT: 422,
  TOO_MANY_REQUESTS: 429,
  SERVICE_UNAVAILABLE: 503,
};

/** Stable codes for 4xx errors raised by Fastify and its plugins (body parsing, media type, size...). */
const FASTIFY_CODES: Record<number, ProblemCode> = {
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

interface Classified {
  status: number;
  code: ProblemCode;
  detail: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
}

function fromZod(error: ZodError): Classified {
  const errors = zodFieldErrors(error);
  return {
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: `Validation failed: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`,
    errors,
  };
}

/** Maps anything thrown while serving a request to a status, a stable code and a message safe to show. */
export function classifyError(error: unknown): Classified {
  if (error instanceof AppError) {
    return {
      status: TRPC_STATUS[error.code] ?? 500,
      code: error.problemCode,
      detail: error.message,
      errors: error.errors,
      headers: error.headers,
    };
  }
  if (error instanceof ZodError) return fromZod(error);
  // The database is down, restarting or out of connections: 503 with Retry-After, never a 500 (wherever it surfaced).
  if (isDatabaseUnavailable(error) && !(error instanceof TRPCError && error.cause instanceof ZodError)) return classifyError(databaseUnavailable());
  if (error instanceof TRPCError) {
    // The input's validation (BAD_REQUEST); a failed output validation is the server's fault (a 500, logged), never
    // the client's 400, as the work it follows may have been committed.
    if (error.cause instanceof ZodError && error.code === 'BAD_REQUEST') return fromZod(error.cause);
    if (error.cause instanceof AppError) return classifyError(error.cause);
    const status = TRPC_STATUS[error.code] ?? 500;
    if (status >= 500) return { status: 500, code: 'INTERNAL_ERROR', detail: 'An unexpected error occurred.' };
    return { status, code: error.code as ProblemCode, detail: error.message };
  }
  // A PostgreSQL data exception thrown outside a procedure (plain routes); procedures convert theirs in init.ts.
  if (isDataException(error)) return classifyError(invalidValue());
  if (isConcurrencyFailure(error)) return classifyError(concurrentUpdate());
  if (isDeletedAccountWrite(error)) return classifyError(accountDeleted());
  const fastifyError = error as Partial<FastifyError> & { rateLimited?: boolean };
  if (fastifyError.rateLimited) {
    return { status: 429, code: 'RATE_LIMIT_EXCEEDED', detail: RATE_LIMIT_DETAIL, headers: { 'Retry-After': '60' } };
  }
  if (typeof fastifyError.code === 'string' && fastifyError.code.startsWith('FST_CSRF_')) return classifyError(invalidCsrfToken());
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    return { status, code: FASTIFY_CODES[status] ?? 'BAD_REQUEST', detail: fastifyError.message ?? 'Bad request' };
  }
  return { status: 500, code: 'INTERNAL_ERROR', detail: 'An unexpected error occurred.' };
}

export function sendError(request: FastifyRequest, reply: FastifyReply, c: Classified) {
  const instance = request.url.split('?')[0] ?? request.url;
  if (c.status === 401) reply.header('WWW-Authenticate', 'Bearer');
  for (const [name, value] of Object.entries(c.headers ?? {})) reply.header(name, value);
  if (isJourneyUrl(instance)) {
    const body = journeyError(c.status, c.code, c.detail, c.errors);
    // DESIGN section 15: a v2 429 carries the spec's 429 fields too (title, status, detail, instance).
    const both = c.status === 429 ? { ...body, title: statusTitle(429), status: 429, detail: c.detail, instance } : body;
    return reply.status(c.status).type('application/json').send(both);
  }
  return reply
    .status(c.status)
    .type('application/problem+json')
    .send(problem(c.status, c.code, c.detail, instance, c.errors));
}

/** The headers the failed calls of a tRPC answer carry (`Retry-After` of a 429 or 503), merged. */
export function headersOfErrors(errors: readonly unknown[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const error of errors) if (error instanceof AppError && error.headers) Object.assign(headers, error.headers);
  return headers;
}

/**
 * Every error leaves as problem details (v1) or the journeys error body (v2). 5xx bodies never carry the
 * internal message; the log does.
 */
export const errorsPlugin = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error, request, reply) => {
      const c = classifyError(error);
      // An outage fails every request: one short line each, not a stack.
      if (c.code === 'DATABASE_UNAVAILABLE') request.log.warn({ code: databaseErrorCode(error) }, 'database unavailable');
      else if (c.status >= 500) request.log.error({ err: error }, 'request failed');
      else if (c.code === 'INVALID_VALUE') request.log.warn({ err: error }, 'a data exception reached the database (missing validation)');
      return sendError(request, reply, c);
    });
    // Every 503 tells clients when to retry, including tRPC's, whose error responses carry no headers of their own.
    // (The tRPC adapter sends a fetch Response, whose status Fastify applies after these hooks.)
    app.addHook('onSend', (_request, reply, payload, done) => {
      const status = payload instanceof Response ? payload.status : reply.statusCode;
      if (status === 503 && !reply.hasHeader('retry-after')) reply.header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      done(null, payload);
    });
    app.setNotFoundHandler((request, reply) =>
      sendError(request, reply, { status: 404, code: 'NOT_FOUND', detail: `No operation ${request.method} ${request.url.split('?')[0]}.` }),
    );
  },
  { name: 'errors' },
);
