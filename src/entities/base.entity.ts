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
 * AFTER ... FOR EACH STATEMENT triggers (`<fn>_<event>`) of `table` running `fn` (defined in its migration) on each
 * of `events`; `fn` reads the transition tables `new_<rows>` and `old_<rows>`.
 */
export function statementTriggers(table: string, fn: string, rows: string, events: ReadonlyArray<'insert' | 'update' | 'delete'>) {
  const tables = { insert: `new table as new_${rows}`, update: `old table as old_${rows} new table as new_${rows}`, delete: `old table as old_${rows}` };
  return events.map((event) => ({
    name: `${fn}_${event}`,
    timing: 'after' as const,
    events: [event],
    forEach: 'statement' as const,
    expression: `create trigger "${fn}_${event}" after ${event} on "${table}" referencing ${tables[event]} for each statement execute function ${fn}()`,
  }));
}

/** The three statement triggers that keep a stored counter in step with every statement writing `table`. */
export function statementCounterTriggers(table: string, fn: string, rows: string) {
  return statementTriggers(table, fn, rows, ['insert', 'update', 'delete']);
}

/**
 * The BEFORE INSERT trigger refusing a row of an account deleted meanwhile (`refuse_deleted_account`, defined in
 * Migration20261128150000): `column` names the person whose row it is. On every table of a person's own data that
 * account deletion erases, so a write racing the deletion cannot land after it.
 */
export function refuseDeletedAccountTrigger(table: string, column: string) {
  return {
    name: `${table}_refuse_deleted_account`,
    timing: 'before' as const,
    events: ['insert' as const],
    expression: `create trigger "${table}_refuse_deleted_account" before insert on "${table}" for each row execute function refuse_deleted_account('${column}')`,
  };
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
