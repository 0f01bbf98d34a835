import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrm, type Orm } from '../../src/db/orm.js';
import { isRowTemplated, pgResultClasses } from '../../src/db/pg-row-templates.js';
import { createTestDatabase } from '../setup/test-app.js';

/**
 * Row templates (src/db/pg-row-templates.ts): the first statement of a row description runs pg's own code, later
 * ones reuse its template; the rows must come out exactly as pg makes them (values, types, key order).
 */
let url: string;
let orm: Orm;
let client: pg.Client;
beforeAll(async () => {
  url = await createTestDatabase();
  orm = await createOrm(url);
  client = new pg.Client({ connectionString: url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await orm?.close(true);
});

/** A statement's rows with their keys in order, as the caller sees them. */
const rowsOf = async (run: () => Promise<{ rows: Record<string, unknown>[] }>) => (await run()).rows.map((row) => Object.entries(row));

describe('pg row templates', () => {
  it('are installed in every pg of the process once the ORM exists (ours and MikroORM’s copy)', () => {
    const classes = pgResultClasses();
    expect(classes.length).toBeGreaterThanOrEqual(1);
    for (const Result of classes) expect(isRowTemplated(Result)).toBe(true);
  });

  it('answer the same rows as pg itself, for one-off and named statements, on our pool and the ORM’s', async () => {
    const mikroPool = (await orm.em.getConnection().getNativeClient()) as pg.Pool;
    const statements = [
      {
        text: `select 1::int as n, 'a'::text as s, '2026-01-02T03:04:05.678Z'::timestamptz as at, null::uuid as nothing, array[1,2]::int[] as xs, '{"k":1}'::jsonb as j`,
      },
      { text: `select g as n, g::text || 'x' as s from generate_series(1, 3) g` },
      // The same column names with other types: another description, its own parsers.
      { text: `select 'one'::text as n, 2::int as s` },
      // The same first column, other columns after it.
      { text: `select 'one'::text as n, 3::int as t, 4::int as s` },
      // A name twice: pg keeps one key, the last value.
      { text: `select 1 as dup, 2 as dup, 3 as other` },
      { name: 'row_templates_named', text: `select $1::int + 1 as n, $2::text as s`, values: [41, 'named'] },
      // Binary columns: pg copies each value (`Buffer.from`) before parsing it.
      { text: `select 7::int as n, 'b'::text as s, null::int as nothing`, binary: true },
    ];
    for (const runner of [client, mikroPool]) {
      for (const statement of statements) {
        const first = await rowsOf(() => runner.query(statement));
        const again = await rowsOf(() => runner.query(statement));
        expect(again).toEqual(first);
        expect(again.map((entries) => entries.map(([key]) => key))).toEqual(first.map((entries) => entries.map(([key]) => key)));
        // What pg's own parseRow makes of the same values (array mode is pg's code, untouched): each column
        // assigned in order to a row that has the keys in first-seen order.
        const asArrays = await runner.query({ ...statement, rowMode: 'array' });
        const expected = asArrays.rows.map((values: unknown[]) => {
          const row: Record<string, unknown> = {};
          asArrays.fields.forEach((field, i) => (row[field.name] = values[i]));
          return Object.entries(row);
        });
        expect(again).toEqual(expected);
      }
    }
    const typed = (
      await client.query(`select 1::int as n, 'a'::text as s, '2026-01-02T03:04:05.678Z'::timestamptz as at, array[1,2]::int[] as xs, '{"k":1}'::jsonb as j`)
    ).rows[0];
    expect(typed).toEqual({ n: 1, s: 'a', at: new Date('2026-01-02T03:04:05.678Z'), xs: [1, 2], j: { k: 1 } });
    expect((await client.query(`select 'one'::text as n, 2::int as s`)).rows[0]).toEqual({ n: 'one', s: 2 });
    expect((await client.query(`select 'one'::text as n, 3::int as t, 4::int as s`)).rows[0]).toEqual({ n: 'one', t: 3, s: 4 });
    expect((await client.query(`select 1 as dup, 2 as dup, 3 as other`)).rows[0]).toEqual({ dup: 2, other: 3 });
  });

  it('are reused: a second statement of the same description takes the first one’s template and parsers', async () => {
    type Internals = { _prebuiltEmptyResultObject: object; _parsers: unknown[] };
    const first = (await client.query(`select 5 as reused, 'x'::text as other`)) as unknown as Internals;
    const second = (await client.query(`select 6 as reused, 'y'::text as other`)) as unknown as Internals;
    expect(second._prebuiltEmptyResultObject).toBe(first._prebuiltEmptyResultObject);
    expect(second._parsers).toBe(first._parsers);
    const retyped = (await client.query(`select 'z'::text as reused, 'y'::text as other`)) as unknown as Internals;
    expect(retyped._parsers).not.toBe(first._parsers);
  });

  it('give every row its own object: changing one row changes no later result', async () => {
    const [first] = (await client.query(`select 7 as n`)).rows as { n: number; extra?: boolean }[];
    first!.n = 0;
    first!.extra = true;
    expect((await client.query(`select 7 as n`)).rows).toEqual([{ n: 7 }]);
  });

  it('leave a `__proto__` column to pg’s own code: an own key, not the prototype', async () => {
    for (let i = 0; i < 2; i++) {
      const [row] = (await client.query(`select 1 as "__proto__", 2 as x`)).rows as Record<string, unknown>[];
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
      expect(Object.keys(row!)).toEqual(['__proto__', 'x']);
      expect(row!.x).toBe(2);
    }
  });

  it('leave statements without columns as pg answers them', async () => {
    await client.query(`create temporary table row_templates_t (id int)`);
    const insert = await client.query(`insert into row_templates_t values (1), (2)`);
    expect(insert.rowCount).toBe(2);
    expect(insert.rows).toEqual([]);
    expect((await client.query(`select from row_templates_t`)).rows).toEqual([{}, {}]);
  });
});
