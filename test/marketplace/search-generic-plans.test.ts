import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPreparedOnPool, type SqlQuery } from '../../src/db/sql.js';
import { type ItemListFilter, type ItemRow, recentItemsQuery, SEARCH_RECENT_WINDOW } from '../../src/routers/items/items.queries.js';
import { newUser } from '../factories/index.js';
import { genericPlanOf, planSummary } from '../factories/query-plan.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * An item search's window is a named statement that keeps a generic plan (`recentItemsQuery`, `listItemRows`),
 * costed for an unknown territory. Here, as on a young platform, 5,000 territories hold an item each and one holds
 * 10,000. Costed for the average territory, the cheapest plan would be a bitmap of the territory's items and a sort,
 * which for the large one reads and sorts them all (so planned in two of three runs of this file without them); the
 * statistics of `item.territory_id` (Migration20261127100000) make it read item_active_territory_idx in order and
 * stop at the window. The table is analyzed, not vacuumed (no visibility map), as in test/platform/generic-plans.test.ts.
 */
let t: TestApp;
let big: string;
let storeId: string;

beforeAll(async () => {
  t = await createTestApp();
  const sellerId = (await newUser(t)).id;
  await t.sql('alter table item set (autovacuum_enabled = false)');
  await t.sql(`
    insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
    select gen_random_uuid(), now(), 'Market ' || lpad(i::text, 4, '0'), null, 'City', 'ST', -20, -50, 5, 'ACTIVE', '{}', '{MARKETPLACEENABLED}'
      from generate_series(0, 5000) as i`);
  big = (await t.sql<{ id: string }>(`select id from territory where name = 'Market 0000'`))[0]!.id;
  await t.sql(
    `insert into store (id, created_at_utc, territory_id, owner_user_id, display_name, description, contact_visibility, status, payments_enabled, updated_at_utc)
     select gen_random_uuid(), now(), id, $1, 'Store of ' || name, null, 'Public', 'ACTIVE', true, now() from territory`,
    [sellerId],
  );
  storeId = (await t.sql<{ id: string }>(`select id from store where territory_id = $1`, [big]))[0]!.id;
  const count = `case when s.territory_id = '${big}' then 10000 else 1 end`;
  await t.sql(
    `insert into item (id, created_at_utc, territory_id, store_id, created_by_user_id, type, title, description, category, pricing_type,
                       price_in_cents, currency, media_ids, status, updated_at_utc)
     select gen_random_uuid(), now() - make_interval(mins => g), s.territory_id, s.id, $1,
            case when g % 3 = 0 then 'SERVICE' else 'PRODUCT' end, 'Item ' || g || ' ' || md5(g::text), 'Description ' || md5((g * 7)::text),
            'Category ' || (g % 12), 'FIXED', 100 + g, 'BRL', '{}', 'ACTIVE', now()
       from store s cross join lateral generate_series(1, ${count}) g`,
    [sellerId],
  );
  // Every table's statistics: the window joins the store, and a table autovacuum has or has not analyzed yet would
  // change the plan between runs.
  await t.sql('analyze');
});
afterAll(() => t.close());

/** The window reads the territory's items from item_active_territory_idx in order, not gathered and sorted. */
async function expectOrderedWindow(query: SqlQuery) {
  const nodes = await genericPlanOf(t, query);
  const reads = nodes.filter((n) => n['Relation Name'] === 'item');
  expect(
    reads.map((n) => `${n['Node Type']} on ${n['Index Name']}`),
    planSummary(nodes),
  ).toEqual(['Index Scan on item_active_territory_idx']);
  expect(
    nodes.filter((n) => n['Node Type'] === 'Sort' || n['Node Type'] === 'Incremental Sort').map((n) => n['Node Type']),
    planSummary(nodes),
  ).toEqual([]);
}

const windowOf = (filter: Partial<ItemListFilter> & { offset?: number; limit?: number }) =>
  recentItemsQuery({ territoryId: big, q: 'item 1', offset: 0, limit: 20, ...filter }, SEARCH_RECENT_WINDOW);

describe("an item search's window as a named statement", () => {
  it('its generic plans read item_active_territory_idx in order, whatever the average territory holds', async () => {
    for (const query of [
      windowOf({}),
      windowOf({ offset: 40 }),
      windowOf({ limit: 50 }),
      windowOf({ type: 'SERVICE' }),
      windowOf({ category: 'category 3', storeId }),
    ]) {
      await expectOrderedWindow(query);
    }
  });

  it('keeps that generic plan for common, rare and absent terms (planned once per connection, not per call)', async () => {
    // One connection, so the statement's plan cache is one: five custom plans, then the generic one if it costs no
    // more. With `like` the estimate (and so the custom plans' cost) moved with the term and the generic plan was
    // not kept for the bench's terms (bench/PROFILE.md, eleventh pass).
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      const terms = ['item', 'e4da', 'zzzz', 'item 1', 'descr', '9', 'c4ca4', 'Item 12'];
      for (let round = 0; round < 3; round++) {
        for (const q of terms) await runPreparedOnPool<ItemRow>(pool, windowOf({ q }));
      }
      const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>(
        `select generic_plans, custom_plans from pg_prepared_statements where statement like '%strpos%'`,
      );
      expect(rows.map((r) => [Number(r.custom_plans), Number(r.generic_plans)])).toEqual([[5, 3 * terms.length - 5]]);
    } finally {
      await pool.end();
    }
  });
});
