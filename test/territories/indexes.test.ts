import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlQuery } from '../../src/db/sql.js';
import { nearbyQuery, searchCountQuery, searchQuery, territoryByIdQuery } from '../../src/routers/territories/territories.queries.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { planOf } from '../factories/query-plan.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  // The stored count of territories per status is a few rows; analyzed by autovacuum (whenever it gets to it) it looks
  // like one page, read by a sequential scan. Never analyzed, it is planned as read by key.
  await t.sql('alter table territory_status_counter set (autovacuum_enabled = false)');
  // A few thousand ACTIVE territories spread over the globe (plus some PENDING). VACUUM (not only ANALYZE) also
  // moves the GIN indexes' pending-list entries into the index proper, as autovacuum does in a live database.
  await t.sql(`
    insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
    select gen_random_uuid(), now(), 'Bairro ' || i || ' ' || substr(md5(i::text), 1, 8), null,
           'Cidade ' || substr(md5((i % 400)::text), 1, 6), case when i % 500 = 0 then 'ZZ' else 'Estado ' || (i % 300) end,
           ((i * 37) % 12000) / 100.0 - 60, ((i * 91) % 36000) / 100.0 - 180, 5,
           case when i % 10 = 0 then 'PENDING' else 'ACTIVE' end, '{}', '{}'
      from generate_series(1, 5000) as i`);
  await t.sql('vacuum analyze territory');
});
afterAll(() => t.close());

async function expectIndexed(query: SqlQuery, index: RegExp) {
  const nodes = await planOf(t, query);
  const summary = nodes.map((n) => `${n['Node Type']}${n['Index Name'] ? ` on ${n['Index Name']}` : ''}`).join(' > ');
  expect(
    nodes.some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'territory'),
    summary,
  ).toBe(false);
  expect(
    nodes.some((n) => index.test(n['Index Name'] ?? '')),
    summary,
  ).toBe(true);
}

describe('territory read paths use indexes (EXPLAIN on 5000 rows)', () => {
  it('nearby: GiST bounding-box prefilter', async () => {
    await expectIndexed(nearbyQuery({ lat: -23.55, lng: -46.63, radiusKm: 25, limit: 20 }), /^territory_active_geo_idx$/);
    // Split box across the antimeridian.
    await expectIndexed(nearbyQuery({ lat: 10, lng: 179.99, radiusKm: 100, limit: 20 }), /^territory_active_geo_idx$/);
  });

  it('search by q (name, city or state), city and state: the search key indexes', async () => {
    const KEY_INDEX = /^territory_active_(name|city|state)_key(_trgm)?_idx$/;
    await expectIndexed(searchQuery({ q: '1234', offset: 0, limit: 20 }), /^territory_active_name_key_idx$/);
    const [{ city }] = (await t.sql<{ city: string }>(`select city from territory limit 1`)) as [{ city: string }];
    await expectIndexed(searchQuery({ city: city.toUpperCase(), offset: 0, limit: 20 }), KEY_INDEX);
    await expectIndexed(searchQuery({ state: 'estado 137', offset: 0, limit: 20 }), KEY_INDEX);
    await expectIndexed(searchQuery({ q: '1234', city: city, state: 'estado 1', offset: 0, limit: 20 }), KEY_INDEX);
    for (const filter of [{ q: '1234' }, { city: city.toUpperCase() }, { state: 'estado 137' }, { q: 'bairro', city }]) {
      await expectIndexed(searchCountQuery(filter), KEY_INDEX);
    }
  });

  it('short search terms: prefix ranges of the key indexes', async () => {
    await expectIndexed(searchQuery({ state: 'zz', offset: 0, limit: 20 }), /^territory_active_(name|state)_key_idx$/);
    await expectIndexed(searchCountQuery({ state: 'zz' }), /^territory_active_state_key_idx$/);
  });

  it("the plain list's count is the stored count of ACTIVE territories (no territory read), exact after every kind of write", async () => {
    const plan = await planOf(t, searchCountQuery({}));
    expect(plan.filter((n) => n['Relation Name']).map((n) => `${n['Relation Name']} ${n['Index Name']}`)).toEqual([
      'territory_status_counter territory_status_counter_pkey',
    ]);
    const expectExact = async () => {
      const [{ total }] = (await t.sql<{ total: number }>(searchCountQuery({}).sql)) as [{ total: number }];
      const [{ n }] = (await t.sql<{ n: number }>(`select count(*)::int as n from territory where status = 'ACTIVE'`)) as [{ n: number }];
      expect(total).toBe(n);
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories/paged?pageSize=1' });
      expect(res.json().totalCount).toBe(n);
    };
    await expectExact();
    // Approved, deactivated, suggested (PENDING), deleted, a change of something else, and many at once.
    await t.sql(`update territory set status = 'ACTIVE' where id in (select id from territory where status = 'PENDING' limit 3)`);
    await expectExact();
    await t.sql(`update territory set status = 'INACTIVE' where id in (select id from territory where status = 'ACTIVE' limit 2)`);
    await t.sql(`update territory set description = 'unrelated' where status = 'ACTIVE'`);
    await expectExact();
    await t.sql(`delete from territory where id in (select id from territory where status = 'ACTIVE' limit 4)`);
    await t.sql(
      `insert into territory (id, created_at_utc, name, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
       select gen_random_uuid(), now(), 'Counted ' || i, 'Count City', 'CC', 1, 2, 5, case when i % 2 = 0 then 'ACTIVE' else 'PENDING' end, '{}', '{}'
         from generate_series(1, 11) as i`,
    );
    await expectExact();
  });

  it('the plain list and by-id', async () => {
    await expectIndexed(searchQuery({ offset: 0, limit: 20 }), /^territory_active_name_idx$/);
    const [row] = await t.sql<{ id: string }>(`select id from territory limit 1`);
    await expectIndexed(territoryByIdQuery(row!.id), /^territory_pkey$/);
  });

  it('returns the same rows through the API', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories/search?state=zz&take=100' });
    expect(res.statusCode).toBe(200);
    const [{ n }] = (await t.sql<{ n: number }>(`select count(*)::int as n from territory where state = 'ZZ' and status = 'ACTIVE'`)) as [{ n: number }];
    expect((res.json() as unknown[]).length).toBe(n);
  });
});
