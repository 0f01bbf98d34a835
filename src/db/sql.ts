/**
 * The one SQL toolkit. Services read and write through MikroORM entities by default; they use SQL, always through
 * this module, when:
 *   - a read is a hot path or a list (feed page, pins, nearby, search, counts): explicit columns, index-backed,
 *     checked with EXPLAIN in a test; the query text lives in the domain's `*.queries.ts`;
 *   - a read crosses domains (the caller's membership, blocks, residents): it lives in the owning domain's
 *     `*.queries.ts`, never typed out again in another domain;
 *   - a write must be atomic in the database itself: `insert ... on conflict`, counters (`set n = n + 1`),
 *     `for update` locks, bulk updates of one's own table. Entities and SQL are not mixed on the same rows
 *     within one unit of work (the identity map would go stale).
 * Parameters are `?` placeholders (MikroORM's); arrays always travel as one PostgreSQL array literal (`pgArray`)
 * cast in the text (`?::uuid[]`, `?::text[]`), because MikroORM expands a JS array parameter into a comma list.
 * Timestamps leave SQL as ISO 8601 UTC strings through `isoColumn`, so the wire format never depends on the driver.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { type HotReadSource, managerOf, unforkedRoot } from './request-manager.js';

export type { HotReadSource } from './request-manager.js';

/** A statement and its `?` parameters, built by a `*.queries.ts` function. */
export interface SqlQuery {
  sql: string;
  params: unknown[];
}

/** The one way to run SQL: inside the caller's unit of work (its transaction, when one is open). */
export function runSql<T>(em: EntityManager, query: SqlQuery): Promise<T[]> {
  return em.execute<T[]>(query.sql, query.params);
}

/**
 * A hot read (a territory by id, nearby, search, events nearby, pins, a feed page, the caller's access row): outside
 * a transaction it goes straight to the ORM's own `pg` pool with real parameters, as the bare benchmark baseline does.
 * MikroORM's `execute` formats parameters into the SQL text and runs it through kysely: about an eighth of a by-id
 * request on the profile (bench/PROFILE.md). `prepared` names the statement, so each connection parses it once and
 * PostgreSQL may plan it once (a generic plan, after five calls, when it costs no more than the custom ones): for key
 * lookups and stored counters, whose generic plan is the custom one, and for the plain feed's pages, which write
 * their limits into the text so that a generic plan is kept (`pageSlice`, feedPageQuery). Never for a statement
 * whose best plan depends on the values (territory search: its generic plan took 17 ms where the custom one takes
 * 1.6). Inside a transaction it is `runSql`, on the transaction's connection. Given a request's context (`ctx`,
 * not `ctx.em`), it does not make the context fork its manager (src/db/request-manager.ts).
 */
export async function runHotRead<T>(source: HotReadSource, query: SqlQuery, options: { prepared?: boolean } = {}): Promise<T[]> {
  const root = unforkedRoot(source);
  const em = root ?? managerOf(source);
  if (!root && em.isInTransaction()) return runSql<T>(em, query);
  const pool = (await em.getConnection().getNativeClient()) as pg.Pool;
  return runOnPoolAs<T>(pool, query, options);
}

/** `runOnPool` with `runHotRead`'s options (`prepared`: as a named statement): the bench's bare routes run as the API does. */
export function runOnPoolAs<T>(pool: pg.Pool, query: SqlQuery, options: { prepared?: boolean } = {}): Promise<T[]> {
  return runOnPool<T>(pool, query, options.prepared ? namedStatement(query.sql) : undefined);
}

/** A statement on a plain `pg` pool with real parameters (`named`: as a named, prepared statement). */
export async function runOnPool<T>(pool: pg.Pool, query: SqlQuery, named?: NamedStatement): Promise<T[]> {
  const text = named?.text ?? numbered(query.sql);
  return (await pool.query(named ? { name: named.name, text, values: query.params } : { text, values: query.params })).rows as T[];
}

/** `runOnPool` as `runHotRead(..., { prepared: true })` runs it (the bench's bare routes do what the API does). */
export function runPreparedOnPool<T>(pool: pg.Pool, query: SqlQuery): Promise<T[]> {
  return runOnPool<T>(pool, query, namedStatement(query.sql));
}

/** A named statement's name and its text with numbered parameters, made once per statement text. */
interface NamedStatement {
  name: string;
  text: string;
}

const namedStatements = new Map<string, NamedStatement>();
/** One name per statement text; bounded, so a text built from values could never grow every connection's cache. */
function namedStatement(sql: string): NamedStatement | undefined {
  let named = namedStatements.get(sql);
  if (!named && namedStatements.size < 64) namedStatements.set(sql, (named = { name: `hot_${namedStatements.size + 1}`, text: numbered(sql) }));
  return named;
}

/**
 * The `offset`/`limit` of a page. The first page of `literalLimit` rows (the default page size) writes its limit
 * into the text (`limit 20`): with a `limit` parameter PostgreSQL cannot cost a generic plan (it assumes a tenth of
 * the rows) and plans a named statement again on every call; with the literal it keeps one generic plan, the same as
 * the custom one (the plain feed's first page at full data: 1.1 -> 0.6 ms a call, planning was half of it). Other
 * sizes and later pages keep both as parameters (the feed's later pages write a span of rows instead: see
 * feedPageQuery). One size only: every text is a statement name of the 64 (`namedStatement`), and a text per size
 * (1-100) would let a client's page sizes take the names of the key lookups that come after them.
 */
export function pageSlice(page: { offset: number; limit: number }, literalLimit: number): SqlQuery {
  if (page.offset === 0 && page.limit === literalLimit && Number.isSafeInteger(page.limit) && page.limit > 0) return { sql: `limit ${page.limit}`, params: [] };
  return { sql: 'offset ?::int limit ?::int', params: [page.offset, page.limit] };
}

const statementTexts = new Map<string, string>();
/**
 * A long statement text built from a few choices, made once per `shape` (a short key naming the choices): the same
 * string on every call. A text assembled per call is hashed, and first copied into one piece, wherever it is looked
 * up (`namedStatement`): ~4 us for a feed page's 2 KB, against ~0.3 us for its shape. Bounded like the names.
 */
export function statementText(shape: string, build: () => string): string {
  let text = statementTexts.get(shape);
  if (text === undefined) {
    text = build();
    if (statementTexts.size < 1_000) statementTexts.set(shape, text);
  }
  return text;
}

/** Shorthand for a statement that is not built by a query function. */
export function execSql<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  return em.execute<T[]>(sql, params);
}

/** A PostgreSQL array literal (`{"a","b"}`) for `?::text[]` / `?::uuid[]`: the one array encoding. */
export function pgArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

/** SQL text rendering a timestamp column as ISO 8601 UTC with milliseconds (`2026-01-02T03:04:05.678Z`). */
export function isoColumn(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** A timestamp value (Date, driver string or null) as ISO 8601 UTC, for rows read without `isoColumn`. */
export function isoValue(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** `?` placeholders as `$1..$n`, for clients that are not MikroORM (the bare benchmark baseline, `pg`). */
export function toNumberedParams(query: SqlQuery): SqlQuery {
  return { sql: numbered(query.sql), params: query.params };
}

function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
