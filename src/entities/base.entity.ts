import { ArrayType, p, type Platform, type TransformContext } from '@mikro-orm/postgresql';
import { pgArray } from '../db/sql.js';
import { newId } from '../platform/ids.js';

/** Columns every table has: a time-ordered UUID and the creation time. */
export const baseProperties = {
  id: p
    .uuid()
    .primary()
    .onCreate(() => newId()),
  createdAtUtc: p.datetime().onCreate(() => new Date()),
};

/**
 * The three AFTER ... FOR EACH STATEMENT triggers (`<fn>_insert|update|delete`) that keep a stored counter in step
 * with every statement writing `table`: `fn` (defined in its migration) reads the transition tables `new_<rows>` and
 * `old_<rows>`.
 */
export function statementCounterTriggers(table: string, fn: string, rows: string) {
  const tables = { insert: `new table as new_${rows}`, update: `old table as old_${rows} new table as new_${rows}`, delete: `old table as old_${rows}` };
  return (['insert', 'update', 'delete'] as const).map((event) => ({
    name: `${fn}_${event}`,
    timing: 'after' as const,
    events: [event],
    forEach: 'statement' as const,
    expression: `create trigger "${fn}_${event}" after ${event} on "${table}" referencing ${tables[event]} for each statement execute function ${fn}()`,
  }));
}

/**
 * A `text[]` column written as an array literal with every element quoted and escaped (`pgArray`). MikroORM's own
 * `p.array()` quotes only elements holding `"{},\\`, so an element spelled `NULL` was stored as a SQL null (a voting
 * option `NULL` saved a voting no list could then read: a 500 for every member), and one holding a line break lost
 * its backslash escapes (`{a}\nb` stored as `{a}nb`); leading and trailing blanks of an unquoted element were dropped.
 */
export class TextArrayType extends ArrayType<string> {
  override convertToDatabaseValue(value: string[] | null, platform: Platform, context?: TransformContext): string | null {
    if (Array.isArray(value)) return pgArray(value);
    return super.convertToDatabaseValue(value, platform, context);
  }
}

/** A `text[]` property (see TextArrayType). */
export const textArray = () => p.type(new TextArrayType());
