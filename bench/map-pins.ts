/**
 * The map-pins scenario and its seed: `GET /api/v1/map/pins` against a bare route doing the same work with `pg`
 * (the territory check, the caller's role and blocks, then the pins SQL of src/routers/map/map.queries.ts).
 * Listed in scenarios.ts.
 */
import type pg from 'pg';
import { type MapViewer, type PinRow, pinsQuery } from '../src/routers/map/map.queries.js';
import { PIN_TYPES, type PinType } from '../src/routers/map/map.schemas.js';
import { toNumberedParams } from '../src/routers/territories/territories.queries.js';
import type { Scenario } from './scenarios.js';
import type { SeedStep } from './seed.js';

/** People who map places, post and report in the seeded territories. */
const MAPPERS = 50;
const SUBTYPES = ['river', 'stream', 'spring', 'waterfall', 'well', 'potable_water'];

/**
 * Map content in some ACTIVE territories (500 in a full run, 20 in smoke): per territory 60 entities (a quarter
 * RESIDENTS_ONLY, a ninth REJECTED), 40 published posts placed at entities (10 with an image), 20 assets with two
 * anchors each (three quarters Active), 12 alerts (two thirds VALIDATED, most with coordinates). Events come from
 * the events step when it ran (scenarios.ts lists this scenario after it).
 */
export const mapSeed: SeedStep = {
  name: 'map',
  async run(db, size) {
    const territories = size.mode === 'smoke' ? 20 : 500;
    await db.query('select setseed(0.31)');
    await db.query(
      `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
       select gen_random_uuid(), now(), 'Mapper ' || i, 'bench', 'bench-mapper-' || i, 'Unverified' from generate_series(1, $1::int) as i`,
      [MAPPERS],
    );
    const mappers = `(select array_agg(id) as ids from app_user where external_id like 'bench-mapper-%') u`;
    await db.query(
      `create temporary table map_territory as
       select id, latitude, longitude from territory where status = 'ACTIVE' order by md5(id::text) limit $1::int`,
      [territories],
    );
    await db.query(
      `insert into map_entity (id, created_at_utc, territory_id, created_by_user_id, name, category, latitude, longitude, visibility, status,
                               confirmation_count, updated_at_utc)
       select gen_random_uuid(), now() - make_interval(mins => g.i * 97), t.id, u.ids[1 + floor(random() * ${MAPPERS})::int],
              'Place ' || g.i, (array['establishment', 'public space', 'natural space'])[1 + g.i % 3],
              t.latitude + (random() - 0.5) * 0.02, t.longitude + (random() - 0.5) * 0.02,
              case when g.i % 4 = 0 then 'RESIDENTS_ONLY' else 'PUBLIC' end,
              case when g.i % 9 = 0 then 'REJECTED' when g.i % 2 = 0 then 'VALIDATED' else 'SUGGESTED' end,
              floor(random() * 20)::int, now()
         from map_territory t cross join generate_series(1, 60) as g(i), ${mappers}`,
    );
    await db.query(
      `insert into post (id, created_at_utc, territory_id, author_user_id, title, content, type, visibility, status, map_entity_id, updated_at_utc)
       select gen_random_uuid(), now() - make_interval(mins => g.i * 53), t.id, u.ids[1 + floor(random() * ${MAPPERS})::int],
              'News from place ' || g.i, 'Something happened here', 'POST',
              case when g.i % 5 = 0 then 'RESIDENTS_ONLY' else 'PUBLIC' end, 'PUBLISHED',
              (select e.id from map_entity e where e.territory_id = t.id order by e.id offset (g.i % 60) limit 1), now()
         from map_territory t cross join generate_series(1, 40) as g(i), ${mappers}`,
    );
    await db.query(
      `with placed as (
         select p.id, p.author_user_id, row_number() over (partition by p.territory_id order by p.id) as n
           from post p join map_territory t on t.id = p.territory_id where p.map_entity_id is not null
       ), media as (
         insert into media_asset (id, created_at_utc, uploaded_by_user_id, media_type, mime_type, size_bytes, storage_key, title)
         select gen_random_uuid(), now() - make_interval(mins => n::int), author_user_id, 'IMAGE', 'image/jpeg', 120000,
                'bench/map/' || id, case when n % 2 = 0 then 'Photo ' || n end
           from placed where n <= 10
         returning id, storage_key
       )
       insert into media_attachment (id, created_at_utc, media_asset_id, owner_type, owner_id, display_order)
       select gen_random_uuid(), now(), m.id, 'POST', substr(m.storage_key, 11)::uuid, 0 from media m`,
    );
    await db.query(
      `insert into territory_asset (id, created_at_utc, territory_id, created_by_user_id, type, subtype, name, description, geo_anchors, status,
                                    validation_count, updated_at_utc)
       select gen_random_uuid(), now() - make_interval(hours => g.i * 5), t.id, u.ids[1 + floor(random() * ${MAPPERS})::int],
              a.type, case when a.type = 'natural' then (array[${SUBTYPES.map((s) => `'${s}'`).join(', ')}])[1 + g.i % ${SUBTYPES.length}] end,
              'Asset ' || g.i, null,
              jsonb_build_array(jsonb_build_object('latitude', t.latitude + (random() - 0.5) * 0.02, 'longitude', t.longitude + (random() - 0.5) * 0.02),
                                jsonb_build_object('latitude', t.latitude + (random() - 0.5) * 0.02, 'longitude', t.longitude + (random() - 0.5) * 0.02)),
              case when g.i % 4 = 0 then 'Suggested' else 'Active' end, floor(random() * 30)::int, now()
         from map_territory t cross join generate_series(1, 20) as g(i)
         cross join lateral (select (array['natural', 'cultural', 'community'])[1 + g.i % 3] as type) a, ${mappers}`,
    );
    await db.query(
      `insert into alert (id, created_at_utc, territory_id, title, description, latitude, longitude, status, reported_by_user_id)
       select gen_random_uuid(), now() - make_interval(hours => g.i * 7), t.id, 'Alert ' || g.i, 'Water shortage reported',
              case when g.i % 5 = 0 then null else t.latitude + (random() - 0.5) * 0.02 end,
              case when g.i % 5 = 0 then null else t.longitude + (random() - 0.5) * 0.02 end,
              case when g.i % 3 = 0 then 'PENDING' else 'VALIDATED' end, u.ids[1 + floor(random() * ${MAPPERS})::int]
         from map_territory t cross join generate_series(1, 12) as g(i), ${mappers}`,
    );
    await db.query('drop table map_territory');
    await db.query('analyze map_entity; analyze post; analyze territory_asset; analyze alert; analyze media_asset; analyze media_attachment');
    const { rows } = await db.query<Record<string, number>>(
      `select (select count(*)::int from map_entity) as "mapEntities", (select count(*)::int from territory_asset) as assets,
              (select count(*)::int from alert) as alerts, (select count(*)::int from post where map_entity_id is not null) as "placedPosts"`,
    );
    return rows[0] ?? {};
  },
};

/** The bench user's id (the API reads it from the token; the bare route looks it up once). */
let benchUserId: Promise<string> | null = null;
function viewerId(pool: pg.Pool) {
  benchUserId ??= pool
    .query<{ id: string }>(`select id from app_user where auth_provider = 'bench' and external_id = 'bench-user'`)
    .then(({ rows }) => rows[0]?.id ?? '00000000-0000-0000-0000-000000000000');
  return benchUserId;
}

/** What the map service reads about the caller before the pins query: the territory, their role, whom they blocked. */
async function viewerOf(pool: pg.Pool, territoryId: string): Promise<MapViewer | null> {
  const userId = await viewerId(pool);
  const [exists, role, blocked] = await Promise.all([
    pool.query('select 1 from territory where id = $1', [territoryId]),
    pool.query<{ role: string }>('select role from territory_membership where territory_id = $1 and user_id = $2', [territoryId, userId]),
    pool.query<{ blocked_user_id: string }>('select blocked_user_id from user_block where blocker_user_id = $1', [userId]),
  ]);
  if (exists.rowCount === 0) return null;
  return { territoryId, residentsOnlyVisible: role.rows[0]?.role === 'RESIDENT', blockedUserIds: blocked.rows.map((r) => r.blocked_user_id) };
}

const qs = (params: Record<string, string | number>) => new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

export const mapPinsScenario: Scenario = {
  name: 'map pins',
  seed: mapSeed,
  authenticated: true,
  async requests({ db, random, count }) {
    const { rows } = await db.query<{ territory_id: string }>('select distinct territory_id from map_entity order by territory_id');
    return Array.from({ length: count }, () => {
      const territoryId = rows[Math.floor(random() * rows.length)]?.territory_id ?? '00000000-0000-0000-0000-000000000000';
      // Half the calls ask for every type (the first page is mostly entities), half for the other layers only.
      const types: Record<string, string> = random() < 0.5 ? {} : { types: 'post,event,asset,alert,media' };
      const query = qs({ territoryId, ...types, take: 50 });
      return { api: `/api/v1/map/pins?${query}`, baseline: `/baseline/map/pins?${query}` };
    });
  },
  baseline: {
    path: '/baseline/map/pins',
    async handler(pool, request, reply) {
      const q = request.query as Record<string, string | undefined>;
      const viewer = await viewerOf(pool, q.territoryId ?? '');
      if (!viewer) return reply.code(404).send({ status: 404 });
      const types = q.types ? (q.types.split(',') as PinType[]) : PIN_TYPES;
      const query = pinsQuery(viewer, { types }, Number(q.skip ?? 0), Number(q.take ?? 20));
      if (!query) return [];
      const { sql, params } = toNumberedParams(query);
      const { rows } = await pool.query<PinRow>(sql, params);
      return rows.map((r) => ({ type: r.type, id: r.id, latitude: r.latitude, longitude: r.longitude, title: r.title, assetType: r.asset_type, assetSubtype: r.asset_subtype }));
    },
  },
};
