import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CITIES, seededRandom, territoriesSeed } from '../../bench/seed.js';
import { haversineKm, haversineSql } from '../../src/platform/geo.js';
import { type NearbyParams, nearbyQuery } from '../../src/routers/territories/territories.queries.js';
import { executedPlanOf, type PlanNode, planSummary } from '../factories/query-plan.js';
import { toNumberedParams } from '../../src/db/sql.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

// Territories nearby on the benchmark's data (bench/seed.ts, 20k territories: 80 % within 0.6 degrees of 38 cities)
// plus the awkward places: rows on both sides of the antimeridian, around both poles, around (0, 0), and stacks of
// rows at one point (ties at one distance, ordered by id). The plan of a dense area, and every answer against a plain
// oracle that reads every ACTIVE row (no box, no bound).
const SIZE = 20_000;

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await createTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  await territoriesSeed.run(db, { mode: 'smoke', territories: SIZE });
  await db.query(`select setseed(0.17)`);
  await t.sql(`
    insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
    select gen_random_uuid(), now(), 'Edge ' || i, null, 'Edge city', 'EE',
           case i % 6 when 0 then 10 + (i % 7) * 1e-7
                      when 1 then -5 + (random() - 0.5) * 2
                      when 2 then 89 + random()
                      when 3 then -89 - random()
                      when 4 then round((random() * 2 - 1)::numeric, 3)::float8
                      else -23.55 + (random() - 0.5) * 0.01 end,
           case i % 6 when 0 then 179.99 + (i % 3) * 1e-7
                      when 1 then case when random() < 0.5 then 179.5 + random() * 0.5 else -180 + random() * 0.5 end
                      when 2 then random() * 360 - 180
                      when 3 then random() * 360 - 180
                      when 4 then round((random() * 2 - 1)::numeric, 3)::float8
                      else -46.63 + (random() - 0.5) * 0.01 end,
           5, case when i % 13 = 0 then 'PENDING' else 'ACTIVE' end, '{}', '{}'
      from generate_series(1, 6000) as i`);
  // As autovacuum would: statistics, and the visibility map the index-only scan relies on.
  await t.sql('vacuum analyze territory');
}, 120_000);
afterAll(async () => {
  await db.end();
  await t.close();
});

const scansOfTerritory = (nodes: PlanNode[]) => nodes.filter((n) => n['Relation Name'] === 'territory');

/** The answer by definition: every ACTIVE row within the radius, nearest first, ties by id. */
async function oracle({ lat, lng, radiusKm, limit }: NearbyParams) {
  const { rows } = await db.query<{ id: string; distance_km: number }>(
    `select n.id, n.distance_km from (
       select t.id, ${haversineSql('$1::float8', '$2::float8', 't.latitude', 't.longitude')} as distance_km from territory t where t.status = 'ACTIVE'
     ) n where n.distance_km <= $3::float8 order by n.distance_km, n.id limit $4::int`,
    [lat, lng, radiusKm, limit],
  );
  return rows.map((r) => [r.id, r.distance_km]);
}

async function answer(params: NearbyParams) {
  const { sql, params: values } = toNumberedParams(nearbyQuery(params));
  const { rows } = await db.query<{ id: string; distance_km: number }>(sql, values);
  return rows.map((r) => [r.id, r.distance_km]);
}

const round7 = (x: number) => Math.round(x * 1e7) / 1e7;

describe('territories nearby on 20k territories', () => {
  it('in a city: a KNN index-only scan bounds the answer, and the main scan reads a few dozen rows, not the box', async () => {
    const centre = CITIES[0]!;
    const query = { lat: centre.lat, lng: centre.lng, radiusKm: 25, limit: 20 };
    const { sql, params } = toNumberedParams(nearbyQuery(query));
    const [{ inBox }] = (await t.sql<{ inBox: number }>(
      `select count(*)::int as "inBox" from territory t where t.status = 'ACTIVE' and point(t.longitude, t.latitude) <@ box(point($1::float8, $2::float8), point($3::float8, $4::float8))`,
      params.slice(5, 9),
    )) as [{ inBox: number }];
    expect(sql).toContain('<->');
    const nodes = await executedPlanOf(db, nearbyQuery(query));
    const scans = scansOfTerritory(nodes);
    expect(
      scans.some((n) => n['Node Type'] === 'Seq Scan'),
      planSummary(nodes),
    ).toBe(false);
    const knn = scans.find((n) => n['Node Type'] === 'Index Only Scan' && n['Index Name'] === 'territory_active_geo_idx');
    expect(knn, planSummary(nodes)).toBeDefined();
    expect(knn!['Actual Rows'], planSummary(nodes)).toBe(20);
    const main = scans.filter((n) => n !== knn);
    expect(main.length, planSummary(nodes)).toBe(1);
    expect(main[0]!['Index Name'] ?? main[0]!.Plans?.[0]?.['Index Name'], planSummary(nodes)).toBe('territory_active_geo_idx');
    // The radius box holds hundreds of rows here; the bounded scan reads a small multiple of the limit.
    expect(inBox).toBeGreaterThan(300);
    expect(main[0]!['Actual Rows']! + (main[0]!['Rows Removed by Filter'] ?? 0), planSummary(nodes)).toBeLessThanOrEqual(60);
    expect(await answer(query)).toEqual(await oracle(query));
  });

  it('split (antimeridian) and polar boxes: the plain GiST box prefilter', async () => {
    for (const query of [
      { lat: 10, lng: 179.99, radiusKm: 100, limit: 20 },
      { lat: 89.5, lng: 10, radiusKm: 100, limit: 20 },
    ]) {
      const nodes = await executedPlanOf(db, nearbyQuery(query));
      expect(nearbyQuery(query).sql).not.toContain('<->');
      expect(
        scansOfTerritory(nodes).some((n) => n['Node Type'] === 'Seq Scan'),
        planSummary(nodes),
      ).toBe(false);
      expect(
        nodes.some((n) => n['Index Name'] === 'territory_active_geo_idx'),
        planSummary(nodes),
      ).toBe(true);
    }
  });

  it('answers exactly what reading every row answers: random points, radii and limits, and the edge cases', async () => {
    const random = seededRandom(1411);
    const radii = [0.0005, 0.01, 0.3, 1, 5, 25, 100, 500];
    const inputs: NearbyParams[] = [];
    for (let i = 0; i < 200; i++) {
      let lat: number;
      let lng: number;
      switch (i % 8) {
        case 0: // anywhere in the seeded country
          lat = -33.5 + random() * 38.5;
          lng = -73.5 + random() * 38.5;
          break;
        case 1: {
          const city = CITIES[Math.floor(random() * CITIES.length)]!;
          lat = city.lat + (random() - 0.5) * 0.8;
          lng = city.lng + (random() - 0.5) * 0.8;
          break;
        }
        case 2: // on the stack of rows at one point
          lat = 10 + Math.floor(random() * 7) * 1e-7;
          lng = 179.99 + Math.floor(random() * 3) * 1e-7;
          break;
        case 3: // across the antimeridian
          lat = -5 + (random() - 0.5) * 2;
          lng = random() < 0.5 ? 179.9 + random() * 0.1 : -180 + random() * 0.1;
          break;
        case 4:
          lat = 89 + random();
          lng = random() * 360 - 180;
          break;
        case 5:
          lat = -89 - random();
          lng = random() * 360 - 180;
          break;
        case 6: // a 0.001-degree grid around (0, 0): many rows at equal distances
          lat = (random() - 0.5) * 0.01;
          lng = (random() - 0.5) * 0.01;
          break;
        default: // dense: 1000 rows within 0.005 degrees
          lat = -23.55 + (random() - 0.5) * 0.005;
          lng = -46.63 + (random() - 0.5) * 0.005;
      }
      const radius = radii[Math.floor(random() * radii.length)]! * (random() < 0.3 ? 1 : 0.5 + random());
      inputs.push({ lat: round7(lat), lng: round7(lng), radiusKm: radius, limit: 1 + Math.floor(random() * 100) });
    }
    inputs.push(
      { lat: 10, lng: 179.99, radiusKm: 0.001, limit: 1 },
      { lat: 10, lng: 179.99, radiusKm: 0.001, limit: 3 },
      { lat: 10.0000001, lng: 179.9900001, radiusKm: 0.0001, limit: 2 },
      { lat: 0, lng: 0, radiusKm: 500, limit: 100 },
      { lat: 0.001, lng: -0.001, radiusKm: 0.2, limit: 1 },
      { lat: 90, lng: 0, radiusKm: 500, limit: 100 },
      { lat: -90, lng: 180, radiusKm: 200, limit: 5 },
      { lat: 0, lng: -180, radiusKm: 60, limit: 7 },
    );
    let bounded = 0;
    for (const input of inputs) {
      if (nearbyQuery(input).sql.includes('<->')) bounded++;
      expect(await answer(input), JSON.stringify(input)).toEqual(await oracle(input));
    }
    // Both shapes were compared, the bounded one on most inputs.
    expect(bounded).toBeGreaterThan(inputs.length / 2);
    expect(bounded).toBeLessThan(inputs.length);
  }, 120_000);

  it('the SQL distance is the haversine of geo.ts, in float arithmetic; values too small to multiply are taken as 0', async () => {
    const { rows } = await db.query<{ latitude: number; longitude: number; km: number }>(
      `select t.latitude, t.longitude, ${haversineSql('$1::float8', '$2::float8', 't.latitude', 't.longitude')} as km
         from territory t order by t.id limit 2000`,
      [-23.5505, -46.6333],
    );
    expect(rows.length).toBe(2000);
    for (const r of rows) expect(Math.abs(r.km - haversineKm(-23.5505, -46.6333, r.latitude, r.longitude)), JSON.stringify(r)).toBeLessThan(1e-9);
    // A subnormal or a tiny stored value would underflow (22003) in the products: it counts as 0 degrees.
    const { rows: tiny } = await db.query<{ km: number }>(
      `select ${haversineSql('$1::float8', '$2::float8', 'p.lat', 'p.lng')} as km
         from (values (5e-324::float8, 1e-200::float8), (1e-300::float8, -5e-324::float8), (0::float8, 0::float8)) as p(lat, lng)`,
      [0, 0],
    );
    expect(tiny.map((r) => r.km)).toEqual([0, 0, 0]);
  });

  it('the API (a prepared statement, its generic plan after a few calls) answers the same rows', async () => {
    const city = CITIES[3]!;
    for (let i = 0; i < 12; i++) {
      const query = { lat: round7(city.lat + i * 0.01), lng: round7(city.lng - i * 0.01), radiusKm: 5 + i, limit: 10 + i };
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/v1/territories/nearby?lat=${query.lat}&lng=${query.lng}&radiusKm=${query.radiusKm}&limit=${query.limit}`,
      });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { id: string; distanceKm: number }[];
      const expected = await oracle(query);
      expect(body.map((r) => r.id)).toEqual(expected.map(([id]) => id));
      expect(body.map((r) => r.distanceKm)).toEqual(expected.map(([, km]) => Math.round((km as number) * 1000) / 1000));
    }
  });
});
