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
  'URI_TOO_LONG',
  'HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
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
  'NOT_STORE_OWNER',
  'ITEM_ARCHIVED',
  'CANNOT_INQUIRE_OWN_ITEM',
  'CANNOT_BUY_OWN_ITEM',
  'OWN_REQUEST',
  'POST_NOT_EDITABLE',
  'CART_EMPTY',
  'CART_CURRENCY_MISMATCH',
  'CART_FULL',
  'IDEMPOTENCY_KEY_REUSED',
  'CHECKOUT_NOT_AWAITING_PAYMENT',
  'PAYMENT_DECLINED',
  'PAYMENTS_DISABLED',
  'INVALID_WEBHOOK_SIGNATURE',
  'WEBHOOK_AMOUNT_MISMATCH',
  'PAYMENT_GATEWAY_UNAVAILABLE',
  'NO_SELLER_BALANCE',
  'CHECKOUT_NOT_REFUNDABLE',
  'PAYOUTS_DISABLED',
  'PAYMENT_METHOD_NOT_ENABLED',
  'PIX_REQUIRED_BY_FISCAL_PACK',
  'CHAT_DISABLED',
  'IDENTITY_NOT_VERIFIED',
  'NOT_PARTICIPANT',
  'NOT_GROUP_OWNER',
  'NOT_A_GROUP',
  'CONVERSATION_NOT_ACTIVE',
  'GROUP_STATUS_CONFLICT',
  'USER_BLOCKED',
  'CONTACT_NOT_ALLOWED',
  'CANNOT_MESSAGE_SELF',
  'OWNER_CANNOT_LEAVE',
  'POSTING_RESTRICTED',
  'CANNOT_REPORT_SELF',
  'VOTING_NOT_OPEN',
  'VOTING_NOT_DRAFT',
  'VOTING_NOT_CLOSED',
  'ALREADY_VOTED',
  'UNKNOWN_VOTING_OPTION',
  'TOO_MANY_SUBSCRIPTIONS',
  'TOO_MANY_CONNECTIONS',
  'STEP_UP_REQUIRED',
  'RANGE_NOT_SATISFIABLE',
  'DATABASE_UNAVAILABLE',
  'CONCURRENT_UPDATE',
  'ACCOUNT_DELETED',
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

/** Network failures of a database connection (refused, reset, unreachable, timed out). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/**
 * SQLSTATEs of a database that is gone or cannot serve now: connection exceptions (class 08, but 08P01, a protocol
 * violation, is the client's value), admin/crash shutdown and "cannot connect now" (57P01-57P03), too many
 * connections (53300), a statement cancelled by statement_timeout (57014).
 */
const UNAVAILABLE_STATES = /^(08(?!P01)[0-9A-Z]{3}|57P0[1-3]|53300|57014)$/;
/** What `pg` and its pool say when a connection breaks, cannot be made in time or the pool is closing. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is closed|not queryable|the database system is (starting up|shutting down|in recovery mode)|terminating connection due to administrator command|Cannot use a pool after calling end/i;

/** The first error in `error`, its `cause` chain and AggregateError members that says the database is unavailable. */
function unavailableError(error: unknown, depth = 0): { code?: string } | null {
  if (!error || typeof error !== 'object' || depth > 5) return null;
  const e = error as { code?: unknown; sqlState?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  const state = typeof e.sqlState === 'string' ? e.sqlState : typeof e.code === 'string' ? e.code : undefined;
  if (state && (NETWORK_CODES.has(state) || UNAVAILABLE_STATES.test(state))) return { code: state };
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) return { code: state };
  if (Array.isArray(e.errors)) for (const inner of e.errors) if (unavailableError(inner, depth + 1)) return unavailableError(inner, depth + 1);
  return unavailableError(e.cause, depth + 1);
}

/** Whether an error means the database cannot be reached or cannot serve right now (the client should retry). */
export const isDatabaseUnavailable = (error: unknown): boolean => unavailableError(error) !== null;
/** The code of a database-unavailable error (`ECONNREFUSED`, `57P01`...), for logs and start-up messages. */
export const databaseErrorCode = (error: unknown): string => unavailableError(error)?.code ?? 'connection lost';

/**
 * PostgreSQL aborted the transaction because it collided with a concurrent one: a deadlock (40P01) or a
 * serialization failure (40001). Nothing of it was applied and the same request can simply be sent again.
 */
export function isConcurrencyFailure(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as { code?: unknown; sqlState?: unknown; cause?: unknown };
  const state = typeof e.sqlState === 'string' ? e.sqlState : e.code;
  return state === '40P01' || state === '40001' || isConcurrencyFailure(e.cause, depth + 1);
}
export const concurrentUpdate = () =>
  new AppError('CONFLICT', 'CONCURRENT_UPDATE', 'The request collided with a concurrent change and was not applied. Please retry it.', {
    headers: { 'Retry-After': '1' },
  });

/**
 * The SQLSTATE of the database's refusal to write a row of an account deleted meanwhile (trigger
 * `refuse_deleted_account`, Migration20261128150000): the write began before the deletion committed.
 */
const DELETED_ACCOUNT_STATE = 'TP001';
export function isDeletedAccountWrite(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as { code?: unknown; sqlState?: unknown; cause?: unknown };
  const state = typeof e.sqlState === 'string' ? e.sqlState : e.code;
  return state === DELETED_ACCOUNT_STATE || isDeletedAccountWrite(e.cause, depth + 1);
}
export const accountDeleted = () => conflict('The account this would be written for has been deleted.', 'ACCOUNT_DELETED');

/** Seconds a client should wait before retrying a request the database could not serve. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;
export const databaseUnavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'DATABASE_UNAVAILABLE', 'The database is unavailable. Please try again shortly.', {
    headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
  });

export const RATE_LIMIT_DETAIL = 'Rate limit exceeded. Please try again later.';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
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
