import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';

/**
 * Every stable problem `code` a client may switch on, in one list (the `code` of v1 problem details and of tRPC
 * errors' `data.problemCode`). Add a code here when an operation needs a new one; never rename one.
 */
export const PROBLEM_CODES = [
  'VALIDATION_FAILED',
  'INVALID_VALUE',
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'CONFLICT',
  'RATE_LIMIT_EXCEEDED',
  'INTERNAL_ERROR',
  'METHOD_NOT_ALLOWED',
  'NOT_ACCEPTABLE',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'PARSE_ERROR',
  'CSRF_TOKEN_INVALID',
  'JOBS_DISABLED',
  'UNKNOWN_AUTH_PROVIDER',
  'REGISTRATION_REFUSED',
  'INVALID_TWO_FACTOR_CODE',
  'INVALID_RECOVERY_CODE',
  'TWO_FACTOR_ALREADY_ENABLED',
  'TWO_FACTOR_NOT_ENABLED',
  'TWO_FACTOR_SETUP_REQUIRED',
  'LAST_SYSTEM_ADMIN',
  'IDENTITY_ALREADY_VERIFIED',
  'WORK_ITEM_NOT_PENDING',
  'WRONG_EVIDENCE_KIND',
  'WRONG_EVIDENCE_TERRITORY',
  'NO_TERRITORY_SELECTED',
  'DUPLICATE_TERRITORY',
  'TERRITORY_NOT_PENDING',
  'FEATURE_DISABLED',
  'NOT_MEMBER',
  'NOT_RESIDENT',
  'NOT_VERIFIED_RESIDENT',
  'ALREADY_RESIDENT',
  'RESIDENT_ELSEWHERE',
  'OUTSIDE_TERRITORY_RADIUS',
  'JOIN_REQUEST_ALREADY_DECIDED',
  'INTEREST_LIMIT_REACHED',
  'CANNOT_BLOCK_SELF',
  'INVALID_MULTIPART',
  'TOO_MANY_FILES',
  'TOO_MANY_FIELDS',
  'FILE_TOO_LARGE',
  'UNSUPPORTED_FILE_TYPE',
  'MEDIA_ALREADY_ATTACHED',
  'MEDIA_COUNT_EXCEEDED',
  'MEDIA_DUPLICATE',
  'MEDIA_DURATION_UNREADABLE',
  'MEDIA_NOT_FOUND',
  'MEDIA_NOT_OWNED',
  'MEDIA_TOO_LARGE',
  'MEDIA_TOO_LONG',
  'MEDIA_TYPE_NOT_ALLOWED',
  'IMAGE_UNREADABLE',
  'IMAGE_TOO_LARGE',
  'MEDIA_ANALYSIS_TIMEOUT',
  'STORAGE_QUOTA_EXCEEDED',
  'MODERATION_RULE_VIOLATION',
  'NOT_AUTHOR',
  'ALERT_POSTS_DISABLED',
  'ALERTS_DISABLED',
  'NOT_EVENT_CREATOR',
  'EVENT_CANCELLED',
  'ASSET_NOT_EDITABLE',
  'ASSET_NOT_SUGGESTED',
  'ASSET_NOT_VALIDATABLE',
  'ASSET_REJECTED',
  'ASSET_STATUS_CHANGED',
  'NATURAL_ASSET_NOT_PENDING',
  'MARKETPLACE_DISABLED',
  'CHAT_DISABLED',
  'POSTING_RESTRICTED',
  'TOO_MANY_SUBSCRIPTIONS',
  'TOO_MANY_CONNECTIONS',
  'STEP_UP_REQUIRED',
  // tRPC's own 4xx codes, passed through when a procedure throws a plain TRPCError.
  'PAYMENT_REQUIRED',
  'METHOD_NOT_SUPPORTED',
  'TIMEOUT',
  'PRECONDITION_FAILED',
  'UNPROCESSABLE_CONTENT',
  'TOO_MANY_REQUESTS',
  'CLIENT_CLOSED_REQUEST',
] as const;
export type ProblemCode = (typeof PROBLEM_CODES)[number];

export interface FieldError {
  field: string;
  message: string;
}

/**
 * A failure a client caused or may act on. `code` is the stable UPPER_SNAKE identifier clients switch on;
 * `message` becomes the problem `detail` and is always safe to show.
 */
export class AppError extends TRPCError {
  readonly problemCode: ProblemCode;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    trpcCode: TRPC_ERROR_CODE_KEY,
    problemCode: ProblemCode,
    message: string,
    extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super({ code: trpcCode, message });
    this.problemCode = problemCode;
    this.errors = extra.errors;
    this.headers = extra.headers;
  }
}

export const badRequest = (message: string, code: ProblemCode = 'BAD_REQUEST', errors?: FieldError[]) => new AppError('BAD_REQUEST', code, message, { errors });
export const validationFailed = (field: string, message: string) =>
  new AppError('BAD_REQUEST', 'VALIDATION_FAILED', `${field}: ${message}`, { errors: [{ field, message }] });
export const unauthorized = (message = 'Authentication is required.') => new AppError('UNAUTHORIZED', 'UNAUTHORIZED', message);
export const forbidden = (message = 'You are not allowed to do this.', code: ProblemCode = 'FORBIDDEN') => new AppError('FORBIDDEN', code, message);
export const notFound = (what: string, code: ProblemCode = 'NOT_FOUND') => new AppError('NOT_FOUND', code, `${what} was not found.`);
export const conflict = (message: string, code: ProblemCode = 'CONFLICT') => new AppError('CONFLICT', code, message);
export const tooManyRequests = () => new AppError('TOO_MANY_REQUESTS', 'RATE_LIMIT_EXCEEDED', RATE_LIMIT_DETAIL, { headers: { 'Retry-After': '60' } });

/**
 * A client's value that no validation caught and PostgreSQL refused: a "data exception" (SQLSTATE class 22), or a
 * protocol violation (08P01), which is how a NUL byte inside a text parameter is refused.
 */
export function isDataException(error: unknown): boolean {
  const state = (error as { sqlState?: unknown; code?: unknown } | null)?.sqlState ?? (error as { code?: unknown } | null)?.code;
  return typeof state === 'string' && (/^22[0-9A-Z]{3}$/.test(state) || state === '08P01');
}
export const invalidValue = () => new AppError('BAD_REQUEST', 'INVALID_VALUE', 'A value in the request is out of range or malformed.');

export const RATE_LIMIT_DETAIL = 'Rate limit exceeded. Please try again later.';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
export const statusTitle = (status: number) => TITLES[status] ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request');

/** RFC 9457 problem details, the body of every v1 error. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ProblemCode;
  errors?: FieldError[];
}

export function problem(status: number, code: ProblemCode, detail: string, instance: string, errors?: FieldError[]): Problem {
  return {
    type: status === 429 ? 'https://tools.ietf.org/html/rfc6585#section-4' : `https://httpstatuses.io/${status}`,
    title: statusTitle(status),
    status,
    detail,
    instance,
    code,
    ...(errors ? { errors } : {}),
  };
}

/** The v2 journeys error body. */
export function journeyError(status: number, code: string, detail: string, errors?: FieldError[]) {
  const V2_CODES: Record<number, string> = {
    400: 'INVALID_REQUEST',
    401: 'UNAUTHORIZED',
    402: 'PAYMENT_REQUIRED',
    403: 'FORBIDDEN',
    404: 'NOT_FOUND',
    409: 'CONFLICT',
    429: 'RATE_LIMIT_EXCEEDED',
  };
  const first = errors?.[0];
  return {
    error: detail,
    code: V2_CODES[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : code),
    details: first ? { field: first.field, message: first.message } : null,
    timestamp: new Date().toISOString(),
  };
}
