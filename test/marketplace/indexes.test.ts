import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlQuery } from '../../src/db/sql.js';
import { inquiriesQuery } from '../../src/routers/inquiries/inquiries.queries.js';
import { type ItemRow, itemByIdQuery, itemsCountQuery, itemsQuery, listItemRows, recentItemsQuery } from '../../src/routers/items/items.queries.js';
import { runSql } from '../../src/db/sql.js';
import { territoryStoresQuery } from '../../src/routers/stores/stores.queries.js';
import { newUser } from '../factories/index.js';
import { planOf } from '../factories/query-plan.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let big: string;
let small: string;
let sellerId: string;
beforeAll(async () => {
  t = await createTestApp();
  sellerId = (await newUser(t)).id;
  // 40 territories, ~2000 stores, 6000 items: 4000 in one territory (a tenth archived), the
  // rest spread; a few inquiries.
  await t.sql(`
    insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
    select gen_random_uuid(), now(), 'Market ' || lpad(i::text, 2, '0'), null, 'City', 'ST', -20, -50, 5, 'ACTIVE', '{}', '{MARKETPLACEENABLED}'
      from generate_series(0, 39) as i`);
  await t.sql(
    `insert into store (id, created_at_utc, territory_id, owner_user_id, display_name, description, contact_visibility, status, payments_enabled, updated_at_utc)
     select gen_random_uuid(), now(), id, $1, 'Store of ' || name, null, 'Public', 'ACTIVE', true, now() from territory`,
    [sellerId],
  );
  big = (await t.sql<{ id: string }>(`select id from territory where name = 'Market 00'`))[0]!.id;
  // 2000 more sellers with a store each, spread over the territories.
  await t.sql(`
    insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
    select gen_random_uuid(), now(), 'Seller ' || i, 'test', 'index-seller-' || i, 'Unverified' from generate_series(1, 2000) as i`);
  await t.sql(
    `insert into store (id, created_at_utc, territory_id, owner_user_id, display_name, description, contact_visibility, status, payments_enabled, updated_at_utc)
     select gen_random_uuid(), now(), t.id, u.id, 'Shop ' || u.id, null, 'Public', 'ACTIVE', true, now()
       from (select id, row_number() over (order by external_id) as n from app_user where external_id like 'index-seller-%') u
       join (select id, row_number() over (order by name) - 1 as k from territory) t on t.k = u.n % 40`,
  );
  small = (await t.sql<{ id: string }>(`select id from territory where name = 'Market 01'`))[0]!.id;
  await t.sql(
    `insert into item (id, created_at_utc, territory_id, store_id, created_by_user_id, type, title, description, category, pricing_type,
                       price_in_cents, currency, media_ids, status, updated_at_utc)
     select gen_random_uuid(), now() - make_interval(mins => i), s.territory_id, s.id, $1,
            case when i % 3 = 0 then 'SERVICE' else 'PRODUCT' end,
            'Item ' || i || ' ' || md5(i::text), 'Description ' || md5((i * 7)::text), 'Category ' || (i % 12), 'FIXED', 100 + i, 'BRL', '{}',
            case when i % 10 = 0 then 'ARCHIVED' else 'ACTIVE' end, now()
       from generate_series(1, 6000) as i
       join store s on s.owner_user_id = $1 and s.territory_id = case when i <= 4000 then $2::uuid else (select id from territory where name = 'Market ' || lpad((1 + i % 39)::text, 2, '0')) end`,
    [sellerId, big],
  );
  await t.sql(
    `insert into inquiry (id, created_at_utc, territory_id, item_id, store_id, from_user_id, message, status)
     select gen_random_uuid(), now(), territory_id, id, store_id, $1, 'Hello', 'OPEN' from item where random() < 0.1`,
    [sellerId],
  );
  await t.sql('vacuum analyze territory, store, item, inquiry, store_item_counter');
});
afterAll(() => t.close());

async function expectIndexed(query: SqlQuery, index: RegExp) {
  const nodes = await planOf(t, query);
  const summary = nodes
    .map((n) => `${n['Node Type']}${n['Index Name'] ? ` on ${n['Index Name']}` : ''}${n['Relation Name'] ? ` (${n['Relation Name']})` : ''}`)
    .join(' > ');
  expect(
    nodes.some((n) => n['Node Type'] === 'Seq Scan' && ['item', 'inquiry'].includes(n['Relation Name'] ?? '')),
    summary,
  ).toBe(false);
  expect(
    nodes.some((n) => index.test(n['Index Name'] ?? '')),
    summary,
  ).toBe(true);
}

describe('marketplace read paths use indexes (EXPLAIN on 6000 items)', () => {
  it('q (partial, case-insensitive): the trigram index, in the big territory and with other filters', async () => {
    // An md5 fragment: a rare 4-letter term.
    await expectIndexed(itemsQuery({ territoryId: big, q: 'e4da', offset: 0, limit: 20 }), /^item_active_text_trgm_idx$/);
    await expectIndexed(itemsCountQuery({ territoryId: big, q: 'e4da' }), /^item_active_text_trgm_idx$/);
    await expectIndexed(
      itemsQuery({ territoryId: big, q: 'E4DA', type: 'PRODUCT', category: 'category 3', offset: 0, limit: 20 }),
      /^item_active_text_trgm_idx$/,
    );
  });

  it('a search first reads the newest items through the (territory, newest) index, never the whole territory', async () => {
    await expectIndexed(recentItemsQuery({ territoryId: big, q: 'item 1', offset: 0, limit: 20 }, 1000), /^item_active_territory_idx$/);
    await expectIndexed(recentItemsQuery({ territoryId: big, q: 'e4da', type: 'SERVICE', offset: 40, limit: 20 }, 1000), /^item_active_territory_idx$/);
  });

  it("a search's page is the plain query's page, whether the newest items fill it or not", async () => {
    const run = (query: SqlQuery) => runSql<ItemRow>(t.deps.orm.em.fork(), query);
    const ids = (rows: ItemRow[]) => rows.map((r) => r.id);
    // Common ("item", "description"), in between ("item 1", "9"), rare (md5 fragments), absent; with filters.
    const terms = ['item', 'Description', 'item 1', '9', 'e4da', 'c4ca', 'zzzz'];
    for (const q of terms) {
      for (const [offset, limit] of [
        [0, 20],
        [20, 20],
        [200, 50],
        [3000, 20],
      ] as const) {
        for (const window of [10, 100, 1000]) {
          for (const extra of [{}, { type: 'SERVICE' as const }, { category: 'category 3' }]) {
            const filter = { territoryId: big, q, offset, limit, ...extra };
            expect(ids(await listItemRows(run, filter, window)), JSON.stringify({ filter, window })).toEqual(ids(await run(itemsQuery(filter))));
          }
        }
      }
    }
  });

  it('q matches what `ilike` on title and description matched, in the index and in the window: any case, accents, wildcards, an edit of the title', async () => {
    const store = (await t.sql<{ id: string }>(`select id from store where territory_id = $1 and owner_user_id = $2`, [small, sellerId]))[0]!.id;
    const titles = ['ÁGUA de Coco', 'água mineral', 'Straße Map', 'İstanbul Tea', 'ǅEMAL Rug', 'Crème BRÛLÉE', '50% OFF_sale'];
    for (const title of titles) {
      await t.sql(
        `insert into item (id, created_at_utc, territory_id, store_id, created_by_user_id, type, title, description, pricing_type, currency, media_ids, status, updated_at_utc)
         values (gen_random_uuid(), now(), $1, $2, $3, 'PRODUCT', $4, 'Fresh TODAY', 'FREE', 'BRL', '{}', 'ACTIVE', now())`,
        [small, store, sellerId, title],
      );
    }
    const run = (query: SqlQuery) => runSql<ItemRow>(t.deps.orm.em.fork(), query);
    // Through the trigram index (`like`) and through the search window (`strpos`, the window covering the territory).
    const matched = async (q: string) => {
      const [indexed, windowed] = await Promise.all([
        run(itemsQuery({ territoryId: small, q, offset: 0, limit: 100 })),
        run(recentItemsQuery({ territoryId: small, q, offset: 0, limit: 100 }, 1000)),
      ]);
      const ids = indexed.map((r) => r.id).sort();
      expect(windowed.map((r) => r.id).sort(), q).toEqual(ids);
      return ids;
    };
    const byIlike = async (q: string) =>
      (
        await t.sql<{ id: string }>(
          `select id from item where territory_id = $1 and status = 'ACTIVE' and (title || ' ' || coalesce(description, '')) ilike $2`,
          [small, `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`],
        )
      )
        .map((r) => r.id)
        .sort();
    for (const q of ['água', 'ÁGUA', 'Agua', 'straße', 'STRASSE', 'istanbul', 'İSTANBUL', 'ǆemal', 'brûlée', 'BRÛ', 'today', '50%', 'off_s', 'o']) {
      expect(await matched(q), q).toEqual(await byIlike(q));
    }
    expect((await matched('água')).length).toBe(2);
    // The stored text follows the row: an edited title is found by its new words only.
    await t.sql(`update item set title = 'Renamed Jar' where title = 'Straße Map'`);
    expect(await matched('renamed jar')).toHaveLength(1);
    expect(await matched('straße')).toEqual([]);
  });

  it("a territory's list and its filters: the partial (territory, newest) index", async () => {
    await expectIndexed(itemsQuery({ territoryId: big, offset: 0, limit: 20 }), /^item_active_territory_idx$/);
    await expectIndexed(itemsQuery({ territoryId: small, type: 'SERVICE', category: 'Category 1', offset: 0, limit: 20 }), /^item_active_territory_idx$/);
  });

  // (With a few hundred counters in all, the planner may read them whole rather than through their key.)
  it("the paged count without q sums the stored counters of the territory's ACTIVE stores: no item is read", async () => {
    for (const filter of [{ territoryId: big }, { territoryId: small, type: 'SERVICE' as const, category: 'Category 1' }]) {
      const nodes = await planOf(t, itemsCountQuery(filter));
      const summary = nodes.map((n) => `${n['Node Type']} ${n['Index Name'] ?? n['Relation Name'] ?? ''}`).join(' > ');
      expect(
        nodes.some((n) => n['Relation Name'] === 'item'),
        summary,
      ).toBe(false);
      expect(
        nodes.some((n) => n['Relation Name'] === 'store_item_counter'),
        summary,
      ).toBe(true);
      expect(
        nodes.some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'store'),
        summary,
      ).toBe(false);
    }
  });

  it('the stored counts are exact for every filter, after the writes that move an item in or out of them', async () => {
    const em = t.deps.orm.em.fork();
    const shop = (await t.sql<{ id: string }>(`select id from store where territory_id = $1 and owner_user_id <> $2 limit 1`, [small, sellerId]))[0]!.id;
    const filters = [
      { territoryId: small },
      { territoryId: big },
      { territoryId: small, storeId: shop },
      { territoryId: small, type: 'SERVICE' as const },
      { territoryId: small, category: 'CATEGORY 1' },
      { territoryId: small, type: 'PRODUCT' as const, category: 'category 2', storeId: shop },
    ];
    const check = async (when: string) => {
      for (const filter of filters) {
        const stored = (await runSql<{ total: number }>(em, itemsCountQuery(filter)))[0]!.total;
        const where = itemsQuery({ ...filter, offset: 0, limit: 100_000 });
        const rows = (await runSql<ItemRow>(em, where)).length;
        expect(stored, `${when}: ${JSON.stringify(filter)}`).toBe(rows);
      }
    };
    await check('seeded');
    await t.sql(
      `insert into item (id, created_at_utc, territory_id, store_id, created_by_user_id, type, title, category, pricing_type, currency, media_ids, status, updated_at_utc)
       select gen_random_uuid(), now(), $1, $2, $3, t, 'New ' || i, c, 'FREE', 'BRL', '{}', 'ACTIVE', now()
         from generate_series(1, 6) as i, unnest(array['PRODUCT', 'SERVICE']) as t, unnest(array['Category 1', 'category 2', null]) as c`,
      [small, shop, sellerId],
    );
    await check('inserted');
    const [a, b, c] = (await t.sql<{ id: string }>(`select id from item where store_id = $1 and status = 'ACTIVE' order by id limit 3`, [shop])).map(
      (r) => r.id,
    );
    await t.sql(`update item set status = 'ARCHIVED' where id = $1`, [a]);
    await t.sql(`update item set category = 'Category 1', type = 'SERVICE' where id = $1`, [b]);
    await t.sql(`update item set title = 'unrelated change' where territory_id = $1`, [small]);
    await check('archived, moved between type and category');
    await t.sql(`delete from item where id = $1`, [c]);
    await t.sql(`update store set status = 'PAUSED' where id = $1`, [shop]);
    await check('deleted, store paused');
    await t.sql(`update store set status = 'ACTIVE' where id = $1`, [shop]);
    await check('store active again');
    await t.sql(`delete from store where id = $1`, [shop]);
    await check('store deleted');
    expect(await t.sql(`select 1 from store_item_counter where store_id = $1`, [shop])).toEqual([]);
  });

  it('search indexes keep no pending list: new rows are searchable from the index itself', async () => {
    const options = await t.sql<{ relname: string; reloptions: string[] | null }>(
      `select c.relname, c.reloptions from pg_class c join pg_index x on x.indexrelid = c.oid join pg_opclass o on o.oid = any(x.indclass)
        where o.opcname = 'gin_trgm_ops' order by c.relname`,
    );
    expect(options.map((o) => o.relname)).toEqual([
      'item_active_text_trgm_idx',
      'territory_active_city_key_trgm_idx',
      'territory_active_name_key_trgm_idx',
      'territory_active_state_key_trgm_idx',
    ]);
    for (const o of options) expect(o.reloptions, o.relname).toContain('fastupdate=off');
  });

  it('by id, stores and inquiries', async () => {
    const [row] = await t.sql<{ id: string }>('select id from item limit 1');
    await expectIndexed(itemByIdQuery(row!.id), /^item_pkey$/);
    await expectIndexed(territoryStoresQuery(big, 0, 20), /^store_/);
    await expectIndexed(inquiriesQuery('sent', sellerId, undefined, 0, 20), /^inquiry_from_user_idx$/);
  });
});
