import { p } from '@mikro-orm/postgresql';
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
