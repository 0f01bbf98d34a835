import { createRequire } from 'node:module';

/**
 * node-postgres prepares, for every statement it runs, the row template its rows are copied from (`Result.addFields`
 * on each RowDescription, even of a named statement): it fills a null-prototype object with the column names, then
 * spreads it into a plain one. In this process that spread alone costs ~10 us for 14 columns (V8 has to find the
 * shape among the thousands this application creates; a small script does it in 2 us), so ~16 us went to a by-id
 * read's one statement and ~60 us to a feed page's three: more than the statements' own parsing
 * (bench/PROFILE.md, sixth pass).
 *
 * The template and the column parsers depend only on the RowDescription (names, types, formats) and on the type
 * parsers of the connection, so they are made once per distinct description and connection and reused: the rows come
 * out identical (same keys in the same order, same parsers). One difference: a type parser set on a connection after
 * it has run a description would not apply to that description; ours are all set when the pool is made (MikroORM's
 * driver options). `pg` and the copy of it MikroORM ships with both get this; `test/platform/pg-row-templates.test.ts`
 * fails if a pg release moves what it replaces.
 */

interface FieldDescription {
  name: string;
  dataTypeID: number;
  format?: string;
}

interface ResultInternals {
  fields: FieldDescription[];
  _types?: object;
  _parsers: unknown[];
  _prebuiltEmptyResultObject: Record<string, null>;
}

interface Template {
  /** The description it was made for: column names and types (negative for binary columns). */
  names: string[];
  types: number[];
  parsers: unknown[];
  row: Record<string, null>;
}

type AddFields = (this: ResultInternals, fields: FieldDescription[]) => void;

/** Descriptions remembered per connection (its type parsers); past it the table starts over (never unbounded). */
const MAX_TEMPLATES = 1_000;
const DEFAULT_TYPES = {};

const installed = Symbol.for('territory-platform.pg-row-templates');

const typeOf = (field: FieldDescription) => (field.format === 'binary' ? -field.dataTypeID : field.dataTypeID);

/**
 * Found by the first column's name, then compared column by column: no key string is built (building one cost as
 * much as the spread it saves). One table per connection (its type parsers), collected with it.
 */
function withTemplates(addFields: AddFields): AddFields {
  const tables = new WeakMap<object, { byFirstName: Map<string, Template[]>; size: number }>();
  return function addFieldsFromTemplate(this: ResultInternals, fields: FieldDescription[]) {
    if (fields.length === 0) return addFields.call(this, fields);
    const types = this._types ?? DEFAULT_TYPES;
    let table = tables.get(types);
    if (!table || table.size >= MAX_TEMPLATES) tables.set(types, (table = { byFirstName: new Map(), size: 0 }));
    const candidates = table.byFirstName.get(fields[0]!.name);
    const found = candidates?.find((template) => describes(template, fields));
    if (found) {
      this.fields = fields;
      // Read only by parseRow, as pg's own arrays are: shared between results of the same description.
      this._parsers = found.parsers;
      this._prebuiltEmptyResultObject = found.row;
      return;
    }
    addFields.call(this, fields);
    const template = { names: fields.map((f) => f.name), types: fields.map(typeOf), parsers: this._parsers, row: this._prebuiltEmptyResultObject };
    if (candidates) candidates.push(template);
    else table.byFirstName.set(template.names[0]!, [template]);
    table.size += 1;
  };
}

function describes(template: Template, fields: FieldDescription[]): boolean {
  if (template.names.length !== fields.length) return false;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (template.names[i] !== field.name || template.types[i] !== typeOf(field)) return false;
  }
  return true;
}

type ResultClass = { prototype: { addFields: AddFields; [installed]?: true } };

/** Installs the templates into a `pg/lib/result.js` class; idempotent. */
export function installRowTemplates(Result: ResultClass): void {
  const prototype = Result.prototype;
  if (prototype[installed]) return;
  if (typeof prototype.addFields !== 'function') throw new Error('pg: Result.prototype.addFields is gone; src/db/pg-row-templates.ts needs updating.');
  prototype.addFields = withTemplates(prototype.addFields);
  prototype[installed] = true;
}

const require = createRequire(import.meta.url);

export const isRowTemplated = (Result: ResultClass) => Result.prototype[installed] === true;

/** The `pg` result classes this process runs statements through: ours and MikroORM's own copy (when it has one). */
export function pgResultClasses(): ResultClass[] {
  const paths = [require.resolve('pg/lib/result.js'), require.resolve('pg/lib/result.js', { paths: [require.resolve('@mikro-orm/postgresql')] })];
  return [...new Set(paths)].map((path) => require(path) as ResultClass);
}

/** Installs the templates into every `pg` of the process (at ORM creation: before any statement runs). */
export function installPgRowTemplates(): void {
  for (const Result of pgResultClasses()) installRowTemplates(Result);
}
