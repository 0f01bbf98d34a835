import type { TRPCDefaultErrorShape, TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import { AppError, type FieldError } from '../platform/problems.js';

export function zodFieldErrors(error: ZodError): FieldError[] {
  return error.issues.map((issue) => ({ field: issue.path.join('.') || '(body)', message: issue.message }));
}

/**
 * The error shape of every tRPC call: 5xx messages are replaced (no stack traces or internal messages leave the
 * server), and `data` carries the same stable problem code as the REST body. Its return type is the `errorShape` the
 * client SDK sees (src/trpc/root-types.ts).
 */
export function formatError({ shape, error }: { shape: TRPCDefaultErrorShape; error: TRPCError }) {
  // The input's validation only: a failed output validation is an internal error, its issues not the client's business.
  const validation = error.cause instanceof ZodError && error.code === 'BAD_REQUEST' ? zodFieldErrors(error.cause) : undefined;
  // AppErrors' messages are safe to show (a 503 DATABASE_UNAVAILABLE); other 5xx are replaced.
  const internal = shape.data.httpStatus >= 500 && !(error instanceof AppError);
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
}
