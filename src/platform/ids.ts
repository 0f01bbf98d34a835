import { v7 } from 'uuid';
import { z } from 'zod';

/** Time-ordered UUIDs (v7): index-friendly primary keys. */
export const newId = (): string => v7();

/**
 * Any UUID version; malformed ids are a 400, not a 500 from PostgreSQL. Read in lower case: a UUID is the same value in
 * either case (RFC 9562), PostgreSQL answers ids in lower case, and the services compare ids as strings (the caller's
 * own id, a row's territory), where an upper-case id was another user or another territory.
 */
export const zId = z.uuid({ error: 'must be a UUID' }).toLowerCase();

/** zId's own pattern (zod's UUID regex), tested directly: checked a few times on every request, a parse costs more. */
const UUID_PATTERN = z.regexes.uuid();

/** A UUID of any version, for values checked outside a zod schema (token subjects, raw inputs). */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_PATTERN.test(value);
