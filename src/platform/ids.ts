import { v7 } from 'uuid';
import { z } from 'zod';

/** Time-ordered UUIDs (v7): index-friendly primary keys. */
export const newId = (): string => v7();

/** Any UUID version; malformed ids are a 400, not a 500 from PostgreSQL. */
export const zId = z.uuid({ error: 'must be a UUID' });

/** A UUID of any version, for values checked outside a zod schema (token subjects, raw inputs). */
export const isUuid = (value: unknown): value is string => zId.safeParse(value).success;
