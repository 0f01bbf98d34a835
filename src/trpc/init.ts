import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { ZodError } from 'zod';
import { AppError, type FieldError, invalidValue, isDataException } from '../platform/problems.js';
import type { Context } from './context.js';

/** The rate-limit bucket an operation counts against (DESIGN section 9). */
export type RateBucket = 'auth' | 'feedRead' | 'write' | 'global';

export type AppMeta = OpenApiMeta<{
  /** HTTP status of a successful REST call when not 200 (201 created, 204 no content). */
  successStatus?: 201 | 204;
  /** With `successStatus: 201`: a repeat answers 200 with the existing resource (documented as such). */
  idempotentRepeat?: boolean;
  /** Defaults: GET -> global, other methods -> write. */
  rateLimit?: RateBucket;
}>;

export function zodFieldErrors(error: ZodError): FieldError[] {
  return error.issues.map((issue) => ({ field: issue.path.join('.') || '(body)', message: issue.message }));
}

/**
 * The one tRPC instance. No stack traces or internal messages ever leave the server: 5xx messages are replaced,
 * and `data` carries the same stable problem code as the REST body.
 */
const t = initTRPC
  .context<Context>()
  .meta<AppMeta>()
  .create({
    isDev: false,
    errorFormatter({ shape, error }) {
      const validation = error.cause instanceof ZodError ? zodFieldErrors(error.cause) : undefined;
      const internal = shape.data.httpStatus >= 500;
      // The JSON parser's own message would quote the client's bytes back; keep it generic.
      const parse = shape.data.code === 'PARSE_ERROR' || error.cause instanceof SyntaxError;
      return {
        message: internal ? 'Internal server error' : parse ? 'The request could not be parsed.' : validation ? 'Validation failed' : shape.message,
        code: shape.code,
        data: {
          code: shape.data.code,
          httpStatus: shape.data.httpStatus,
          path: shape.data.path,
          problemCode: error instanceof AppError ? error.problemCode : validation ? 'VALIDATION_FAILED' : shape.data.code,
          errors: error instanceof AppError ? (error.errors ?? null) : (validation ?? null),
        },
      };
    },
  });

/** Turns a data exception into a 400 for every procedure (REST and /trpc alike), never a 500. */
const dataExceptionsAsBadRequest = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && isDataException(result.error.cause)) {
    throw invalidValue();
  }
  return result;
});

export const router = t.router;
export const middleware = t.middleware;
export const baseProcedure = t.procedure.use(dataExceptionsAsBadRequest);
export const createCallerFactory = t.createCallerFactory;
