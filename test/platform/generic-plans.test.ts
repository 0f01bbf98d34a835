import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPreparedOnPool, type SqlQuery, toNumberedParams } from '../../src/db/sql.js';
import { feedPageQuery } from '../../src/routers/feed/feed.queries.js';
import { newUser } from '../factories/index.js';
import { genericPlanOf, type PlanNode, planSummary } from '../factories/query-plan.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * The feed's named page statements keep a generic plan (src/db/sql.ts `runHotRead`), costed for an unknown
 * territory. Here, as on a young platform, 5,000 territories hold a post each and one holds 10,000, written by 40
 * authors (a third of them for residents only); the reader wrote none. Costed for the average territory, the cheapest
 * plan is a bitmap of the territory's rows and a sort, which for the large one reads and sorts them all (43-89 ms a
 * page at 100k posts, Migration20261126150000); the statistics of `post.territory_id` make it read post_feed_idx in
 * order and stop at the page. The table is analyzed, not vacuumed (no visibility map):
 * reading the index alone is then no cheaper than the heap, where the bitmap looks cheapest. (Without the statistics,
 * whether the bitmap wins here depends on the physical order of the random territory ids, so that is not asserted.)
 */
let t: TestApp;
let big: string;
/** A reader who wrote none of the posts (a visitor's condition then keeps only the PUBLIC ones). */
let readerId: string;

beforeAll(async () => {
  t = await createTestApp();
  readerId = (await newUser(t)).id;
  // Posts of many authors, a third of them for residents only, as a territory's feed is.
  const authors: string[] = [];
  for (let i = 0; i < 40; i++) authors.push((await newUser(t)).id);
  // No visibility map (autovacuum could set it at any moment of this file): the plans compared are deterministic.
  await t.sql('alter table post set (autovacuum_enabled = false)');
  await t.sql(`
    insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
    select gen_random_uuid(), now(), 'Place ' || lpad(i::text, 4, '0'), null, 'City', 'ST', -20, -50, 5, 'ACTIVE', '{}', '{}'
      from generate_series(0, 5000) as i`);
  big = (await t.sql<{ id: string }>(`select id from territory where name = 'Place 0000'`))[0]!.id;
  const count = `case when t.id = '${big}' then 10000 else 1 end`;
  await t.sql(
    `insert into post (id, created_at_utc, updated_at_utc, territory_id, author_user_id, title, content, type, visibility, status)
     select gen_random_uuid(), now() - make_interval(secs => g), now(), t.id, ($1::uuid[])[1 + (g + i) % 40], 'Post ' || g, 'content', 'POST',
            case when g % 3 = 0 then 'RESIDENTS_ONLY' else 'PUBLIC' end, 'PUBLISHED'
       from (select *, row_number() over () as i from territory) t cross join lateral generate_series(1, ${count}) g
      where t.name like 'Place %'`,
    [authors],
  );
  // Every table's statistics, not only post's: the plan joins users, events and media too, and a table autovacuum
  // has or has not analyzed yet would change the join order between runs.
  await t.sql('analyze');
});
afterAll(() => t.close());

/** The territory's posts are read from post_feed_idx in order (then stopped by the page's limit), not gathered and sorted. */
async function expectOrderedRead(query: SqlQuery) {
  const nodes = await genericPlanOf(t, query);
  // The page's own rows are then read by primary key: that read is not the territory's.
  const reads = nodes.filter((n) => n['Relation Name'] === 'post' && n['Index Name'] !== 'post_pkey');
  expect(
    reads.map((n) => `${n['Node Type']} on ${n['Index Name']}`),
    planSummary(nodes),
  ).toEqual([expect.stringMatching(/^Index (Only )?Scan on post_feed_idx$/)]);
}

const viewer = () => ({ userId: readerId, seesResidentsOnly: true, blockedUserIds: [] });
const feedFilter = () => ({ territoryId: big, anyTags: null, mapEntityId: null, assetId: null });
/** The plain feed's statements: the first page, a page of each span (64, 512, 4,096 rows), with the journeys' columns. */
const feedPages = () =>
  [0, 40, 400, 3000].flatMap((offset) =>
    [false, true].map((withInteractions) => feedPageQuery(viewer(), feedFilter(), { offset, limit: 20 }, { withInteractions, withTotal: true })),
  );

describe("generic plans of the feed's named pages", () => {
  it('the feed pages read post_feed_idx in order, whatever the average territory holds', async () => {
    for (const query of feedPages()) await expectOrderedRead(query);
  });

  it("every page (with its count; residents' and visitors'; with and without the journeys columns) costs no more without its values than with the large territory's, so its generic plan is kept", async () => {
    // PostgreSQL keeps a named statement's generic plan only if it costs no more than its custom plans (plus an
    // allowance for planning). With the territory's value in the page's condition, a large territory's custom plan
    // cost its rows as a small fraction of the territory's index, below the generic plan's average territory; and
    // the count's visibilities as an array parameter were costed as ten lookups. On the bench's data (200k posts in
    // one territory) every first page was planned: 0 generic plans, ~1.1 ms of PostgreSQL CPU a call against ~0.4;
    // and so was every later page of a visitor (whose condition is `visibility = 'PUBLIC' or author = ?`): 2.3-3.0 ms
    // against 0.7-1.1.
    const totalCost = (nodes: PlanNode[]) => nodes[0]!['Total Cost'];
    const db = new pg.Client({ connectionString: t.databaseUrl });
    await db.connect();
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      const calls = 8;
      const texts = new Set<string>();
      for (const offset of [0, 40, 400, 3000]) {
        for (const seesResidentsOnly of [true, false]) {
          for (const withInteractions of [false, true]) {
            const query = feedPageQuery({ ...viewer(), seesResidentsOnly }, feedFilter(), { offset, limit: 20 }, { withInteractions, withTotal: true });
            texts.add(query.sql);
            const { sql, params } = toNumberedParams(query);
            const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>({ text: `explain (format json) ${sql}`, values: params });
            const custom = rows[0]!['QUERY PLAN'][0].Plan;
            // No dearer than the custom plan of the large territory for this reader (a cheaper generic plan is kept too).
            const where = JSON.stringify({ offset, seesResidentsOnly, withInteractions });
            expect(totalCost(await genericPlanOf(t, query)), where).toBeLessThanOrEqual(custom['Total Cost']!);
            for (let i = 0; i < calls; i++) await runPreparedOnPool(pool, query);
          }
        }
      }
      const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>('select generic_plans, custom_plans from pg_prepared_statements');
      expect(rows.map((r) => [Number(r.custom_plans), Number(r.generic_plans)])).toEqual(Array.from({ length: texts.size }, () => [5, calls - 5]));
    } finally {
      await pool.end();
      await db.end();
    }
  });
});
