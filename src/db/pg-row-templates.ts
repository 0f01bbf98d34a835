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
  /** The description's row builder (see `compileRowBuilder`); none: pg's own `parseRow` builds the rows. */
  _buildRow?: RowBuilder;
}

type ValueParser = (value: unknown) => unknown;
/** A row of one description from its raw values and the column parsers: an object literal with the columns' keys. */
type RowBuilder = (values: unknown[], parsers: ValueParser[]) => Record<string, unknown>;

interface Template {
  /** The description it was made for: column names and types (negative for binary columns). */
  names: string[];
  types: number[];
  parsers: unknown[];
  row: Record<string, null>;
  build: RowBuilder | undefined;
}

type AddFields = (this: ResultInternals, fields: FieldDescription[]) => void;
type ParseRow = (this: ResultInternals, values: unknown[]) => Record<string, unknown>;

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
    if (fields.length === 0) {
      this._buildRow = undefined;
      return addFields.call(this, fields);
    }
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
      this._buildRow = found.build;
      return;
    }
    addFields.call(this, fields);
    const template = {
      names: fields.map((f) => f.name),
      types: fields.map(typeOf),
      parsers: this._parsers,
      row: this._prebuiltEmptyResultObject,
      build: compileRowBuilder(fields),
    };
    this._buildRow = template.build;
    if (candidates) candidates.push(template);
    else table.byFirstName.set(template.names[0]!, [template]);
    table.size += 1;
  };
}

/**
 * The row builder of a description. pg fills a copy of the template column by column (`row[name] = value`): one
 * function for every statement of the process, whose stores V8 stops specialising once it has seen many row shapes:
 * a feed page's 20 rows cost ~40 us more in the API than in the bare baseline's process, which runs a handful of
 * statements (bench/PROFILE.md, seventh pass). A builder compiled per description creates its rows as an object
 * literal: one shape, keys in the template's order.
 *
 * `{ "name": values[0] === null ? null : parsers[0](values[0]), ... }` for the description (binary columns through
 * `Buffer.from`, as pg does). Duplicate names keep the first position and the last value, as pg's assignments do.
 * None for a `__proto__` column (a literal would set the prototype: pg's own code stays in charge of that case) or
 * when the runtime refuses to compile code.
 */
function compileRowBuilder(fields: FieldDescription[]): RowBuilder | undefined {
  if (fields.some((field) => field.name === '__proto__')) return undefined;
  const properties = fields.map((field, i) => {
    const value = field.format === 'binary' ? `Buffer.from(values[${i}])` : `values[${i}]`;
    return `${JSON.stringify(field.name)}: values[${i}] === null ? null : parsers[${i}](${value})`;
  });
  try {
    return new Function('Buffer', `'use strict'; return function buildRow(values, parsers) { return { ${properties.join(', ')} }; };`)(Buffer) as RowBuilder;
  } catch {
    return undefined;
  }
}

function describes(template: Template, fields: FieldDescription[]): boolean {
  if (template.names.length !== fields.length) return false;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (template.names[i] !== field.name || template.types[i] !== typeOf(field)) return false;
  }
  return true;
}

/** pg's `parseRow`, through the description's builder when it has one (array-mode results have their own). */
function withBuilders(parseRow: ParseRow): ParseRow {
  return function parseRowWithBuilder(this: ResultInternals, values: unknown[]) {
    const build = this._buildRow;
    return build ? build(values, this._parsers as ValueParser[]) : parseRow.call(this, values);
  };
}

type ResultClass = { prototype: { addFields: AddFields; parseRow: ParseRow; [installed]?: true } };

/** Installs the templates and row builders into a `pg/lib/result.js` class; idempotent. */
export function installRowTemplates(Result: ResultClass): void {
  const prototype = Result.prototype;
  if (prototype[installed]) return;
  if (typeof prototype.addFields !== 'function' || typeof prototype.parseRow !== 'function') {
    throw new Error('pg: Result.prototype.addFields or parseRow is gone; src/db/pg-row-templates.ts needs updating.');
  }
  prototype.addFields = withTemplates(prototype.addFields);
  prototype.parseRow = withBuilders(prototype.parseRow);
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
