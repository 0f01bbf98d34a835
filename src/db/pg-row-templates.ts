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
  parsers: unknown[];
  row: Record<string, null>;
}

type AddFields = (this: ResultInternals, fields: FieldDescription[]) => void;

/**
 * Templates are found by walking the description: column name, then type (negative for binary columns), one map
 * lookup each; no key string is built (building one cost as much as the spread it saves). One tree per connection
 * (its type parsers), collected with it.
 */
interface Node {
  next?: Map<string | number, Node>;
  template?: Template;
}

/** Nodes remembered per connection (a few hundred descriptions); past it the tree starts over (never unbounded). */
const MAX_NODES = 5_000;
const DEFAULT_TYPES = {};

const installed = Symbol.for('territory-platform.pg-row-templates');

function withTemplates(addFields: AddFields): AddFields {
  const roots = new WeakMap<object, { node: Node; size: number }>();
  return function addFieldsFromTemplate(this: ResultInternals, fields: FieldDescription[]) {
    if (fields.length === 0) return addFields.call(this, fields);
    const types = this._types ?? DEFAULT_TYPES;
    let root = roots.get(types);
    if (!root || root.size > MAX_NODES) roots.set(types, (root = { node: {}, size: 0 }));
    let node = root.node;
    for (const field of fields) {
      node = step(root, node, field.name);
      node = step(root, node, field.format === 'binary' ? -field.dataTypeID : field.dataTypeID);
    }
    if (node.template) {
      this.fields = fields;
      // Read only by parseRow, as pg's own arrays are: shared between results of the same description.
      this._parsers = node.template.parsers;
      this._prebuiltEmptyResultObject = node.template.row;
      return;
    }
    addFields.call(this, fields);
    node.template = { parsers: this._parsers, row: this._prebuiltEmptyResultObject };
  };
}

function step(root: { size: number }, node: Node, key: string | number): Node {
  node.next ??= new Map();
  let next = node.next.get(key);
  if (!next) {
    node.next.set(key, (next = {}));
    root.size += 1;
  }
  return next;
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
