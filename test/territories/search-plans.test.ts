import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { territoriesSeed } from '../../bench/seed.js';
import {
  namePrefixQuery,
  SEARCH_MATCH_LIMIT,
  type SearchFilter,
  searchCountQuery,
  searchQuery,
  searchTerritoryRows,
  type TerritoryRow,
} from '../../src/routers/territories/territories.queries.js';
import { executedPlanOf, genericPlanOf, type PlanNode, planSummary } from '../factories/query-plan.js';
import { runOnPool, runPreparedOnPool, type SqlQuery, toNumberedParams } from '../../src/db/sql.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

// Territory search on the benchmark's data (bench/seed.ts, 20k territories: names "<prefix> <word> <n>" over 15
// prefixes such as Vila, São, Santa; 38 cities): the plans of broad terms, and the answers against a plain oracle.
const SIZE = 20_000;

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await createTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  await territoriesSeed.run(db, { mode: 'smoke', territories: SIZE });
  // As autovacuum would: statistics, and the visibility map the index-only scans rely on.
  await t.sql('vacuum analyze territory');
}, 120_000);
afterAll(async () => {
  await db.end();
  await t.close();
});

const executed = (nodes: PlanNode[]) => nodes.filter((n) => (n['Actual Loops'] ?? 0) > 0);
const scansOfTerritory = (nodes: PlanNode[]) => executed(nodes).filter((n) => n['Relation Name'] === 'territory');

describe('broad terms (thousands of matches) are served from the search key indexes', () => {
  for (const q of ['vila', 'sao', 'SANTA', 'São']) {
    it(`q=${q}: the page reads its 20 rows from the name key index, the count at most ${SEARCH_MATCH_LIMIT} entries`, async () => {
      const page = await executedPlanOf(db, searchQuery({ q, offset: 0, limit: 20 }));
      const pageScans = scansOfTerritory(page);
      // The prefix bucket fills the page: the later buckets (trigram lookups) never run.
      expect(
        pageScans.map((n) => `${n['Node Type']} ${n['Index Name']}`),
        planSummary(page),
      ).toEqual(['Index Only Scan territory_active_name_key_idx', 'Index Scan territory_pkey']);
      expect(pageScans[0]!['Actual Rows'], planSummary(page)).toBe(20);

      const count = await executedPlanOf(db, searchCountQuery({ q }));
      const countScans = scansOfTerritory(count);
      // Prefix ranges of the key btrees: index-only, or a bitmap of exact btree matches (no key recomputed per row).
      expect(
        executed(count).every((n) => !n['Index Name'] || /^territory_active_(name|city|state)_key_idx$/.test(n['Index Name'])),
        planSummary(count),
      ).toBe(true);
      expect(
        countScans.reduce((sum, n) => sum + (n['Actual Rows'] ?? 0), 0),
        planSummary(count),
      ).toBe(SEARCH_MATCH_LIMIT);
    });
  }

  it('city, state and combined filters: no sequential scan; the page through a search key index', async () => {
    for (const filter of [{ city: 'São Paulo' }, { state: 'SP' }, { q: 'Vila', city: 'Campinas', state: 'SP' }, { q: 'jardim das f' }] as SearchFilter[]) {
      for (const query of [searchQuery({ ...filter, offset: 0, limit: 20 }), searchCountQuery(filter)]) {
        const nodes = await executedPlanOf(db, query);
        expect(
          nodes.some((n) => n['Node Type'] === 'Seq Scan'),
          `${JSON.stringify(filter)}: ${planSummary(nodes)}`,
        ).toBe(false);
      }
      const page = await executedPlanOf(db, searchQuery({ ...filter, offset: 0, limit: 20 }));
      expect(
        executed(page).some((n) => /^territory_active_(name|city|state)_key_idx$/.test(n['Index Name'] ?? '')),
        `${JSON.stringify(filter)}: ${planSummary(page)}`,
      ).toBe(true);
    }
  });
});

describe('the stored search keys (generated columns): no key is computed per row', () => {
  // Terms that match anywhere, from broad to narrow: the trigram lookups of the first ones return thousands of rows
  // (every "lagoa" and every "l..." trigram) that a bitmap heap scan rechecks; prefixes, city and state filters.
  const filters: SearchFilter[] = [
    { q: 'Lagoa L' },
    { q: 'Vila Aur' },
    { q: 'vila' },
    { q: 'sp' },
    { q: 'ão' },
    { q: 'paulo' },
    { city: 'São Paulo' },
    { city: 'rio' },
    { state: 'SP' },
    { q: 'Vila', city: 'Campinas', state: 'SP' },
    { q: 'jardim das f', city: 'paulo' },
    { q: 'Conjunto', city: 'Cuiabá', state: 'MT' },
  ];

  it('page and count compare the stored keys: f_unaccent appears in no condition, filter or recheck of any node', async () => {
    for (const filter of filters) {
      for (const query of [searchQuery({ ...filter, offset: 0, limit: 20 }), searchQuery({ ...filter, offset: 980, limit: 20 }), searchCountQuery(filter)]) {
        const nodes = await executedPlanOf(db, query);
        // The term's own f_unaccent is folded to a constant at planning (the statement is planned with its values).
        const perRow = nodes.filter((n) => [n.Filter, n['Recheck Cond'], n['Index Cond']].some((text) => text?.includes('f_unaccent')));
        expect(
          perRow.map((n) => `${n['Node Type']}: ${n.Filter ?? ''} ${n['Recheck Cond'] ?? ''} ${n['Index Cond'] ?? ''}`),
          JSON.stringify(filter),
        ).toEqual([]);
        expect(
          nodes.some((n) => n['Node Type'] === 'Seq Scan'),
          `${JSON.stringify(filter)}: ${planSummary(nodes)}`,
        ).toBe(false);
      }
    }
  });

  it('the count of a broad "anywhere" term reads trigram and key indexes only', async () => {
    for (const q of ['Lagoa L', 'Vila Aur']) {
      const count = await executedPlanOf(db, searchCountQuery({ q }));
      expect(
        executed(count).every((n) => !n['Index Name'] || /^territory_active_(name|city|state)_key(_trgm)?_idx$/.test(n['Index Name'])),
        planSummary(count),
      ).toBe(true);
    }
  });

  it('each key equals lower(f_unaccent(column)) in collation "C", and follows updates of its column', async () => {
    const [{ differing }] = (await t.sql<{ differing: number }>(
      `select count(*)::int as differing from territory
        where name_key is distinct from lower(public.f_unaccent(name)) or city_key is distinct from lower(public.f_unaccent(city))
           or state_key is distinct from lower(public.f_unaccent(state))`,
    )) as [{ differing: number }];
    expect(differing).toBe(0);
    const collations = await t.sql<{ column_name: string; collation_name: string }>(
      `select column_name, collation_name from information_schema.columns where table_name = 'territory' and column_name in ('name_key', 'city_key', 'state_key') order by column_name`,
    );
    expect(collations).toEqual(['city_key', 'name_key', 'state_key'].map((column_name) => ({ column_name, collation_name: 'C' })));

    const [row] = await t.sql<{ id: string; name: string; city: string; state: string }>(
      `select id, name, city, state from territory where status = 'ACTIVE' order by id limit 1`,
    );
    await t.sql(`update territory set name = 'Ÿzzÿ Générée', city = 'Ñowhere', state = 'ÉZ' where id = $1`, [row!.id]);
    try {
      for (const filter of [{ q: 'yzzy gener' }, { city: 'NOWHERE' }, { state: 'ez', q: 'YZZ' }] as SearchFilter[]) {
        const { sql, params } = toNumberedParams(searchQuery({ ...filter, offset: 0, limit: 20 }));
        expect(
          (await db.query<{ id: string }>(sql, params)).rows.map((r) => r.id),
          JSON.stringify(filter),
        ).toEqual([row!.id]);
      }
    } finally {
      // The other tests read the seed's rows: this one goes back as it was.
      await t.sql(`update territory set name = $2, city = $3, state = $4 where id = $1`, [row!.id, row!.name, row!.city, row!.state]);
    }
  });
});

interface Row {
  id: string;
  name_key: string;
  city_key: string;
  state_key: string;
}

describe('answers equal a plain oracle on the benchmark data', () => {
  let rows: Row[];
  beforeAll(async () => {
    // The keys as the database computes them (the same f_unaccent); the matching and ordering below are plain code.
    rows = await t.sql<Row>(
      `select id, lower(public.f_unaccent(name)) as name_key, lower(public.f_unaccent(city)) as city_key,
              lower(public.f_unaccent(state)) as state_key from territory where status = 'ACTIVE'`,
    );
  });

  const normalise = async (term: string) => (await t.sql<{ k: string }>('select lower(public.f_unaccent($1::text)) as k', [term]))[0]!.k;
  const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

  async function oracle(filter: { q?: string; city?: string; state?: string }): Promise<string[]> {
    const terms: Partial<Record<'q' | 'city' | 'state', { key: string; anywhere: boolean }>> = {};
    for (const name of ['q', 'city', 'state'] as const) {
      const raw = filter[name]?.trim();
      if (raw) terms[name] = { key: await normalise(raw), anywhere: /[\p{L}\p{Nd}]{3,}/u.test(raw.replace(/\p{M}/gu, '')) };
    }
    const match = (value: string, term: { key: string; anywhere: boolean }) => (term.anywhere ? value.includes(term.key) : value.startsWith(term.key));
    const rank = (row: Row) => {
      const q = terms.q;
      if (!q) return 0;
      if (row.name_key.startsWith(q.key)) return 0;
      if (q.anywhere && row.name_key.includes(q.key)) return 1;
      return 2;
    };
    return rows
      .filter((row) => !terms.q || match(row.name_key, terms.q) || match(row.city_key, terms.q) || match(row.state_key, terms.q))
      .filter((row) => !terms.city || match(row.city_key, terms.city))
      .filter((row) => !terms.state || match(row.state_key, terms.state))
      .sort((a, b) => rank(a) - rank(b) || bytes(a.name_key, b.name_key) || bytes(a.id, b.id))
      .slice(0, SEARCH_MATCH_LIMIT)
      .map((row) => row.id);
  }

  const filters = [
    { q: 'vila' },
    { q: 'Sao' },
    { q: 'ão' },
    { q: 'aurora' },
    { q: 'Campinas' },
    { q: 'sp' },
    { q: 'vista' },
    { q: 'Jardim das Flores 1' },
    { city: 'são paulo' },
    { city: 'paulo', state: 'sp' },
    { state: 'r' },
    { q: 'Vila', city: 'Campinas', state: 'SP' },
    { q: 'santa', city: 'rio' },
    { q: 'nothing like it' },
  ];

  it('searchTerritoryRows pages as searchQuery does: first, middle, last pages, page sizes, past the match limit', async () => {
    // On one connection, as the API runs it (the prefix bucket named, the full search unnamed).
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      const run = (query: SqlQuery, { prepared }: { prepared: boolean }) =>
        prepared ? runPreparedOnPool<TerritoryRow>(pool, query) : runOnPool<TerritoryRow>(pool, query);
      for (const filter of [...filters, { q: '  Vila  ' }, { q: 'santa c' }, { q: 'x' }]) {
        const expected = await oracle(filter);
        const pages = [
          { offset: 0, limit: 20 },
          { offset: 20, limit: 20 },
          { offset: 0, limit: 7 },
          { offset: Math.max(0, expected.length - 7), limit: 20 },
          { offset: SEARCH_MATCH_LIMIT - 10, limit: 20 },
        ];
        for (const page of pages) {
          const got = (await searchTerritoryRows(run, { ...filter, ...page })).map((r) => r.id);
          expect(got, `${JSON.stringify(filter)} at ${JSON.stringify(page)}`).toEqual(expected.slice(page.offset, page.offset + page.limit));
        }
      }
    } finally {
      await pool.end();
    }
  });

  it('pages (first, middle, last) and counts', async () => {
    for (const filter of filters) {
      const expected = await oracle(filter);
      const [{ total }] = (await db.query<{ total: number }>(toNumberedParams(searchCountQuery(filter)).sql, searchCountQuery(filter).params)).rows as [
        { total: number },
      ];
      expect(total, JSON.stringify(filter)).toBe(expected.length);
      for (const offset of [0, 20, Math.max(0, expected.length - 7)]) {
        const { sql, params } = toNumberedParams(searchQuery({ ...filter, offset, limit: 20 }));
        const got = (await db.query<{ id: string }>(sql, params)).rows.map((r) => r.id);
        expect(got, `${JSON.stringify(filter)} at ${offset}`).toEqual(expected.slice(offset, offset + 20));
      }
    }
  });
});

describe("a search box's prefix: the first bucket alone, as a named statement", () => {
  /** The statements a search ran, in order: `named` (the prefix bucket) or `full` (searchQuery). */
  async function statementsOf(pool: pg.Pool, filter: SearchFilter & { offset: number; limit: number }) {
    const ran: string[] = [];
    await searchTerritoryRows((query, { prepared }) => {
      ran.push(prepared ? 'named' : 'full');
      return prepared ? runPreparedOnPool<TerritoryRow>(pool, query) : runOnPool<TerritoryRow>(pool, query);
    }, filter);
    return ran;
  }

  it('a prefix that fills the page runs that statement only; anything else runs the full search', async () => {
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      const page = { offset: 0, limit: 20 };
      expect(await statementsOf(pool, { q: 'Vila', ...page })).toEqual(['named']);
      expect(await statementsOf(pool, { q: 'vila b', offset: 40, limit: 20 })).toEqual(['named']);
      // Names holding "aurora" after their first word: the bucket is empty, the later buckets fill the page.
      expect(await statementsOf(pool, { q: 'aurora', ...page })).toEqual(['named', 'full']);
      // With a city or state the bucket is narrowed too: the full search, planned with its terms.
      expect(await statementsOf(pool, { q: 'Vila', city: 'Campinas', ...page })).toEqual(['full']);
      expect(await statementsOf(pool, { city: 'Campinas', ...page })).toEqual(['full']);
      // A page past the match limit is cut by it: only the full search knows where.
      expect(await statementsOf(pool, { q: 'Vila', offset: SEARCH_MATCH_LIMIT - 10, limit: 20 })).toEqual(['full']);
    } finally {
      await pool.end();
    }
  });

  it('its generic plan reads the name key index in order, from the bounds, no sort; kept for broad, narrow and absent prefixes', async () => {
    for (const page of [
      { offset: 0, limit: 20 },
      { offset: 40, limit: 50 },
    ]) {
      const nodes = await genericPlanOf(t, namePrefixQuery('vila', page));
      expect(
        nodes.filter((n) => n['Relation Name'] === 'territory').map((n) => `${n['Node Type']} on ${n['Index Name']}`),
        planSummary(nodes),
      ).toEqual(['Index Scan on territory_active_name_key_idx']);
      expect(
        nodes.filter((n) => n['Node Type'].includes('Sort')),
        planSummary(nodes),
      ).toEqual([]);
    }
    // One connection: five custom plans, then the generic one for every call (the term is an InitPlan value and the
    // first page's limit written in, so both are costed alike).
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      const terms = ['vila', 'Vila Aurora 1', 'zzz', 'sã', 'santa c', 'JARDIM', 'p', 'nothing like it'];
      for (let round = 0; round < 3; round++) {
        for (const q of terms) await runPreparedOnPool<TerritoryRow>(pool, namePrefixQuery(q, { offset: 0, limit: 20 }));
      }
      const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>('select generic_plans, custom_plans from pg_prepared_statements');
      expect(rows.map((r) => [Number(r.custom_plans), Number(r.generic_plans)])).toEqual([[5, 3 * terms.length - 5]]);
    } finally {
      await pool.end();
    }
  });
});
