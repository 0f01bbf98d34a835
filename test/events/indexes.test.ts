import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { runPreparedOnPool, type SqlQuery, toNumberedParams } from '../../src/db/sql.js';
import { eventByIdQuery, nearbyEventsCountQuery, nearbyEventsQuery, territoryEventsQuery } from '../../src/routers/events/events.queries.js';
import { newUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { executedPlanOf, genericPlanOf, planOf, planSummary } from '../factories/query-plan.js';

let t: TestApp;
let viewerId: string;
let territoryId: string;
beforeAll(async () => {
  t = await createTestApp();
  viewerId = (await newUser(t)).id;
  // 100 territories and 6000 events spread over a country-sized box, a tenth of them cancelled, a third with
  // participations.
  await t.sql(`
    insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
    select gen_random_uuid(), now(), 'Events ' || i, null, 'City', 'ST', -20 + (i % 10), -50 + (i / 10), 5, 'ACTIVE', '{}', '{}'
      from generate_series(0, 99) as i`);
  await t.sql(
    `insert into event (id, created_at_utc, territory_id, title, description, starts_at_utc, ends_at_utc, latitude, longitude,
                        location_label, cover_media_id, additional_media_ids, status, created_by_user_id, created_by_membership, post_id)
     select gen_random_uuid(), now(), ts.ids[1 + i % 100], 'Event ' || i, null, now() + make_interval(hours => (i % 2000) - 500), null,
            -25 + ((i * 37) % 1000) / 100.0, -55 + ((i * 91) % 1000) / 100.0, null, null, '{}',
            case when i % 10 = 0 then 'CANCELLED' else 'SCHEDULED' end, $1, 'RESIDENT', null
       from generate_series(1, 6000) as i, (select array_agg(id order by name) as ids from territory) ts`,
    [viewerId],
  );
  await t.sql(
    `insert into event_participation (event_id, user_id, status, created_at_utc, updated_at_utc)
     select id, $1, case when random() < 0.5 then 'INTEREST' else 'CONFIRMED' end, now(), now() from event where random() < 0.3`,
    [viewerId],
  );
  await t.sql('vacuum analyze territory, event, event_participation');
  territoryId = (await t.sql<{ id: string }>(`select id from territory order by name limit 1`))[0]!.id;
});
afterAll(() => t.close());

async function expectIndexed(query: SqlQuery, index: RegExp) {
  const nodes = await planOf(t, query);
  const summary = nodes
    .map((n) => `${n['Node Type']}${n['Index Name'] ? ` on ${n['Index Name']}` : ''}${n['Relation Name'] ? ` (${n['Relation Name']})` : ''}`)
    .join(' > ');
  expect(
    nodes.some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'event'),
    summary,
  ).toBe(false);
  expect(
    nodes.some((n) => index.test(n['Index Name'] ?? '')),
    summary,
  ).toBe(true);
}

describe('event read paths use indexes (EXPLAIN on 6000 events)', () => {
  const now = new Date();

  it('nearby and its count: the partial GiST index of scheduled events', async () => {
    const point = { lat: -20, lng: -50, radiusKm: 5, now };
    await expectIndexed(nearbyEventsQuery({ ...point, viewerId, offset: 0, limit: 20 }), /^event_scheduled_geo_idx$/);
    await expectIndexed(nearbyEventsCountQuery(point), /^event_scheduled_geo_idx$/);
  });

  it('nearby pages are named statements that keep one generic plan, through the GiST index, with the same answers', async () => {
    // One connection, so each statement's plan cache is one: five custom plans, then the generic one if it costs no
    // more. Points over the whole box, near and far from events, radii up to 125 km; a first page and a later one.
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      const points = Array.from({ length: 12 }, (_, i) => ({ lat: -25 + ((i * 7) % 10), lng: -55 + ((i * 3) % 10), radiusKm: 5 + (i % 4) * 40, now }));
      let answered = 0;
      for (const point of points) {
        for (const page of [
          { offset: 0, limit: 20 },
          { offset: 20, limit: 20 },
        ]) {
          const query = nearbyEventsQuery({ ...point, viewerId, ...page });
          const named = await runPreparedOnPool<{ id: string }>(pool, query);
          const { sql, params } = toNumberedParams(query);
          expect(named.map((r) => r.id)).toEqual((await t.sql<{ id: string }>(sql, params)).map((r) => r.id));
          answered += named.length;
        }
      }
      expect(answered).toBeGreaterThan(100);
      const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>(
        `select generic_plans, custom_plans from pg_prepared_statements where statement like '%event_participation%' order by statement`,
      );
      expect(rows.map((r) => [Number(r.custom_plans), Number(r.generic_plans)])).toEqual([[5, 19]]);
    } finally {
      await pool.end();
    }
    for (const page of [
      { offset: 0, limit: 20 },
      { offset: 20, limit: 20 },
    ]) {
      const nodes = await genericPlanOf(t, nearbyEventsQuery({ lat: -20, lng: -50, radiusKm: 5, now, viewerId, ...page }));
      expect(
        nodes.some((n) => n['Index Name'] === 'event_scheduled_geo_idx'),
        planSummary(nodes),
      ).toBe(true);
      expect(
        nodes.some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'event'),
        planSummary(nodes),
      ).toBe(false);
    }
  });

  it("a territory's list: the (territory, start) index", async () => {
    await expectIndexed(territoryEventsQuery({ territoryId, viewerId, now, offset: 0, limit: 20 }), /^event_territory_id_starts_at_utc_index$/);
    await expectIndexed(
      territoryEventsQuery({ territoryId, viewerId, now, startDate: now, endDate: new Date(now.getTime() + 86_400_000), offset: 0, limit: 20 }),
      /^event_territory_id_starts_at_utc_index$/,
    );
  });

  it("a territory's list: the page cut from the keys, its participation probes run for its rows only, the same pages as sorting whole rows", async () => {
    const db = new pg.Client({ connectionString: t.databaseUrl });
    await db.connect();
    try {
      const [{ n }] = (await t.sql<{ n: number }>('select count(*)::int as n from event where territory_id = $1', [territoryId])) as [{ n: number }];
      const nodes = await executedPlanOf(db, territoryEventsQuery({ territoryId, viewerId, now, offset: 20, limit: 20 }));
      const probes = nodes.filter((n) => n['Relation Name'] === 'event_participation');
      expect(probes.length, planSummary(nodes)).toBeGreaterThan(0);
      for (const probe of probes) expect(probe['Actual Loops'], planSummary(nodes)).toBeLessThanOrEqual(20);
      expect(n).toBeGreaterThan(40);
      // The order of the statement before the cut: every row sorted whole.
      for (const offset of [0, 20, Math.floor(n / 2), n - 10, n + 5]) {
        const page = territoryEventsQuery({ territoryId, viewerId, now, offset, limit: 20 });
        const rows = await t.sql<{ id: string }>(toNumberedParams(page).sql, page.params);
        const expected = await t.sql<{ id: string }>(
          `select e.id from event e where e.territory_id = $1
            order by (coalesce(e.ends_at_utc, e.starts_at_utc) < $2), case when coalesce(e.ends_at_utc, e.starts_at_utc) >= $2 then e.starts_at_utc end,
                     e.starts_at_utc desc, e.id
            offset $3 limit 20`,
          [territoryId, now, offset],
        );
        expect(
          rows.map((r) => r.id),
          String(offset),
        ).toEqual(expected.map((r) => r.id));
      }
    } finally {
      await db.end();
    }
  });

  it('by id', async () => {
    const [row] = await t.sql<{ id: string }>('select id from event limit 1');
    await expectIndexed(eventByIdQuery(row!.id, viewerId), /^event_pkey$/);
  });
});
