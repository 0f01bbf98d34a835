/**
 * The map-pins scenario and its seed: `GET /api/v1/map/pins/paged` on one territory full of map content against a
 * bare route doing the same work with `pg` as src/routers/map/map.service.ts `pagePins`: the territory check, the
 * caller's role and blocks, then the per-type pin counts (a prepared statement, as the API's) and the page cut with
 * them, the SQL of src/routers/map/map.queries.ts. Listed in scenarios.ts.
 */
import type pg from 'pg';
import { type MapViewer, pinCountsQuery, type PinCounts, type PinFilter, type PinRow, pinsPageQuery } from '../src/routers/map/map.queries.js';
import { PIN_TYPES, type PinType } from '../src/routers/map/map.schemas.js';
import { pageOffset, toPage } from '../src/platform/pagination.js';
import { runOnPool, runPreparedOnPool } from '../src/db/sql.js';
import { type TerritoryAccessRow, territoryAccessQuery } from '../src/policy/access.queries.js';
import { HOT_READ, type Scenario } from './scenario.js';
import { type BenchSize, type SeedStep, benchViewerId } from './seed.js';

/** People who map places, post and report in the seeded territory. */
const MAPPERS = 50;
const SUBTYPES = ['river', 'stream', 'spring', 'waterfall', 'well', 'potable_water'];
const PAGE_SIZE = 50;
/** The requests rotate over the first pages of each filter. */
const PAGES = 50;

/**
 * Rows per kind in the map territory: tens of thousands in a full run, a fiftieth of it in smoke, or `mapRows` in
 * all, in the same proportions (the small world of flat.ts).
 */
function mapCounts(size: BenchSize) {
  const full = { entities: 20_000, placedPosts: 12_000, assets: 3_000, alerts: 3_000, events: 1_000 };
  const total = Object.values(full).reduce((a, b) => a + b, 0);
  const scale = size.mapRows !== undefined ? size.mapRows / total : size.mode === 'full' ? 1 : 1 / 50;
  return Object.fromEntries(Object.entries(full).map(([k, v]) => [k, Math.round(v * scale)])) as typeof full;
}

/**
 * The map's territory: one ACTIVE territory picked the same way every run (the feed scenario takes the other end of
 * the md5 order).
 */
export async function mapTerritoryId(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ id: string }>(`select id from territory where status = 'ACTIVE' order by md5(id::text) limit 1`);
  const id = rows[0]?.id;
  if (!id) throw new Error('the map seed needs the territories step first');
  return id;
}

/**
 * Map content in one territory, within ~1 km of its centre: entities (a quarter RESIDENTS_ONLY, a ninth REJECTED),
 * published posts placed at entities (a fifth RESIDENTS_ONLY, one in twenty hidden; an image on every sixth),
 * assets with one to three anchors (three quarters Active), alerts (two thirds VALIDATED, most with coordinates)
 * and events (a tenth cancelled). Runs after the territories step (scenarios.ts lists this scenario after them).
 */
export const mapSeed: SeedStep = {
  name: 'map',
  async run(db, size) {
    const counts = mapCounts(size);
    const territoryId = await mapTerritoryId(db);
    // Alerts show on the map only where the territory has them on (AlertPosts), as the bare route assumes.
    await db.query(`update territory set enabled_flags = array_append(enabled_flags, 'ALERTPOSTS') where id = $1 and not 'ALERTPOSTS' = any(enabled_flags)`, [
      territoryId,
    ]);
    await db.query('select setseed(0.31)');
    await db.query(
      `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
       select gen_random_uuid(), now(), 'Mapper ' || i, 'bench', 'bench-mapper-' || i, 'Unverified' from generate_series(1, $1::int) as i`,
      [MAPPERS],
    );
    const mappers = `(select array_agg(id order by external_id) as ids from app_user where external_id like 'bench-mapper-%') u`;
    const territory = `(select id, latitude, longitude from territory where id = $1::uuid) t`;
    const near = (column: 'latitude' | 'longitude') => `t.${column} + (random() - 0.5) * 0.02`;
    await db.query(
      `insert into map_entity (id, created_at_utc, territory_id, created_by_user_id, name, category, latitude, longitude, visibility, status,
                               confirmation_count, updated_at_utc)
       select gen_random_uuid(), now() - make_interval(mins => g.i * 17), t.id, u.ids[1 + floor(random() * ${MAPPERS})::int],
              'Place ' || g.i, (array['establishment', 'public space', 'natural space'])[1 + g.i % 3],
              ${near('latitude')}, ${near('longitude')},
              case when g.i % 4 = 0 then 'RESIDENTS_ONLY' else 'PUBLIC' end,
              case when g.i % 9 = 0 then 'REJECTED' when g.i % 2 = 0 then 'VALIDATED' else 'SUGGESTED' end,
              floor(random() * 20)::int, now()
         from ${territory} cross join generate_series(1, $2::int) as g(i), ${mappers}`,
      [territoryId, counts.entities],
    );
    // Each post at an entity spread over the whole list (k-th entity in id order), not at the first ones.
    await db.query(
      `with entities as (
         select id, row_number() over (order by id) - 1 as k from map_entity where territory_id = $1::uuid
       )
       insert into post (id, created_at_utc, territory_id, author_user_id, title, content, type, visibility, status, map_entity_id, updated_at_utc)
       select gen_random_uuid(), now() - make_interval(mins => g.i * 23), $1::uuid, u.ids[1 + floor(random() * ${MAPPERS})::int],
              'News from place ' || g.i, 'Something happened here', 'POST',
              case when g.i % 5 = 0 then 'RESIDENTS_ONLY' else 'PUBLIC' end,
              case when g.i % 20 = 7 then 'HIDDEN' else 'PUBLISHED' end, e.id, now()
         from generate_series(1, $2::int) as g(i)
         join entities e on e.k = (g.i * 7919) % (select count(*) from entities), ${mappers}`,
      [territoryId, counts.placedPosts],
    );
    // The storage key carries the post id, which the attachment reads back.
    await db.query(
      `with placed as (
         select p.id, p.author_user_id, row_number() over (order by p.id) as n
           from post p where p.territory_id = $1::uuid and p.map_entity_id is not null
       ), media as (
         insert into media_asset (id, created_at_utc, uploaded_by_user_id, media_type, mime_type, size_bytes, storage_key, title)
         select gen_random_uuid(), now() - make_interval(mins => n::int), author_user_id, 'IMAGE', 'image/jpeg', 120000,
                'bench/map/' || id, case when n % 2 = 0 then 'Photo ' || n end
           from placed where n % 6 = 0
         returning id, storage_key
       )
       insert into media_attachment (id, created_at_utc, media_asset_id, owner_type, owner_id, display_order)
       select gen_random_uuid(), now(), m.id, 'POST', substr(m.storage_key, 11)::uuid, 0 from media m`,
      [territoryId],
    );
    await db.query(
      `insert into territory_asset (id, created_at_utc, territory_id, created_by_user_id, type, subtype, name, description, geo_anchors, status,
                                    validation_count, updated_at_utc)
       select gen_random_uuid(), now() - make_interval(mins => g.i * 41), t.id, u.ids[1 + floor(random() * ${MAPPERS})::int],
              a.type, case when a.type = 'natural' then (array[${SUBTYPES.map((s) => `'${s}'`).join(', ')}])[1 + g.i % ${SUBTYPES.length}] end,
              'Asset ' || g.i, null,
              (select jsonb_agg(jsonb_build_object('latitude', ${near('latitude')}, 'longitude', ${near('longitude')}) order by k)
                 from generate_series(0, g.i % 3) as k),
              case when g.i % 4 = 0 then 'Suggested' else 'Active' end, floor(random() * 30)::int, now()
         from ${territory} cross join generate_series(1, $2::int) as g(i)
         cross join lateral (select (array['natural', 'cultural', 'community'])[1 + g.i % 3] as type) a, ${mappers}`,
      [territoryId, counts.assets],
    );
    await db.query(
      `insert into alert (id, created_at_utc, territory_id, title, description, latitude, longitude, status, reported_by_user_id)
       select gen_random_uuid(), now() - make_interval(mins => g.i * 31), t.id, 'Alert ' || g.i, 'Water shortage reported',
              case when g.i % 5 = 0 then null else ${near('latitude')} end,
              case when g.i % 5 = 0 then null else ${near('longitude')} end,
              case when g.i % 3 = 0 then 'PENDING' else 'VALIDATED' end, u.ids[1 + floor(random() * ${MAPPERS})::int]
         from ${territory} cross join generate_series(1, $2::int) as g(i), ${mappers}`,
      [territoryId, counts.alerts],
    );
    await db.query(
      `insert into event (id, created_at_utc, territory_id, title, description, starts_at_utc, ends_at_utc, latitude, longitude,
                          location_label, cover_media_id, additional_media_ids, status, created_by_user_id, created_by_membership, post_id)
       select gen_random_uuid(), now() - interval '40 days', t.id, 'Gathering ' || g.i, null,
              now() + make_interval(hours => g.i * 5 - 24 * 30), null, ${near('latitude')}, ${near('longitude')},
              null, null, '{}', case when g.i % 10 = 0 then 'CANCELLED' else 'SCHEDULED' end,
              u.ids[1 + floor(random() * ${MAPPERS})::int], 'RESIDENT', null
         from ${territory} cross join generate_series(1, $2::int) as g(i), ${mappers}`,
      [territoryId, counts.events],
    );
    await db.query('analyze post; analyze territory_asset; analyze alert; analyze event; analyze media_asset; analyze media_attachment');
    // The tables only the map reads, as autovacuum keeps them in a running system: statistics, and the visibility map
    // the index-only reads of the pins rely on (a bulk load leaves it unset). One statement each: VACUUM cannot run
    // in a multi-statement query. The shared tables (posts, events...) are left as the other scenarios find them.
    for (const table of ['map_entity', 'map_pin_owner', 'map_pin_counter']) await db.query(`vacuum analyze ${table}`);
    const { rows } = await db.query<Record<string, number>>(
      `select (select count(*)::int from map_entity where territory_id = $1::uuid) as "mapEntities",
              (select count(*)::int from post where territory_id = $1::uuid and map_entity_id is not null) as "mapPlacedPosts",
              (select count(*)::int from territory_asset where territory_id = $1::uuid) as "mapAssets",
              (select count(*)::int from alert where territory_id = $1::uuid) as "mapAlerts",
              (select count(*)::int from event where territory_id = $1::uuid) as "mapEvents"`,
      [territoryId],
    );
    return rows[0] ?? {};
  },
};

/** What the map service reads about the caller before the pins query: the access read (territory, role, blocks, own hidden posts). */
async function viewerOf(pool: pg.Pool, territoryId: string): Promise<MapViewer | null> {
  const userId = await benchViewerId(pool);
  const [access] = await runPreparedOnPool<TerritoryAccessRow>(pool, territoryAccessQuery(territoryId, userId, null, true));
  if (!access?.id || access.status !== 'ACTIVE') return null;
  // The bench user holds no capability there and no system permission.
  return {
    territoryId,
    residentsOnlyVisible: access.role === 'RESIDENT',
    blockedUserIds: access.blocked_user_ids ?? [],
    ...(access.has_own_hidden_posts ? { userId } : {}),
    seesAllHiddenPosts: false,
  };
}

/** A CSV query value as the API reads it: trimmed, lower-cased, empties dropped, duplicates removed; absent: undefined. */
function csv(raw: string | undefined): string[] | undefined {
  const entries = [
    ...new Set(
      (raw ?? '')
        .split(',')
        .map((v) => v.trim().toLowerCase())
        .filter(Boolean),
    ),
  ];
  return entries.length > 0 ? entries : undefined;
}

/**
 * The filters a map client sends: everything (the first pages are entities), the layers over the entities, the
 * natural assets (water sources), the entities alone, what is happening (alerts and events).
 */
const FILTERS: Array<Record<string, string>> = [
  {},
  { types: 'post,event,asset,alert,media' },
  { types: 'asset', assetTypes: 'natural' },
  { types: 'entity' },
  { types: 'alert,event' },
];

const qs = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

export const mapPinsScenario: Scenario = {
  name: 'map pins',
  targets: [HOT_READ],
  seed: mapSeed,
  // The bench user is not a member of the map's territory: they see its PUBLIC layer.
  authenticated: true,
  async requests({ db, random, count }) {
    const territoryId = await mapTerritoryId(db);
    // Every filter with every one of the first pages, in a seeded shuffled order.
    const pairs = FILTERS.flatMap((filter) => Array.from({ length: PAGES }, (_, i) => ({ filter, pageNumber: i + 1 })));
    for (let i = pairs.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [pairs[i], pairs[j]] = [pairs[j] as (typeof pairs)[number], pairs[i] as (typeof pairs)[number]];
    }
    return pairs.slice(0, count).map(({ filter, pageNumber }) => {
      const query = qs({ territoryId, ...filter, pageNumber, pageSize: PAGE_SIZE });
      return { api: `/api/v1/map/pins/paged?${query}`, baseline: `/baseline/map/pins/paged?${query}` };
    });
  },
  baseline: {
    path: '/baseline/map/pins/paged',
    async handler(pool, request, reply) {
      const q = request.query as Record<string, string | undefined>;
      const viewer = await viewerOf(pool, q.territoryId ?? '');
      if (!viewer) return reply.code(404).send({ status: 404 });
      const pageNumber = Number(q.pageNumber ?? 1);
      const pageSize = Number(q.pageSize ?? 20);
      const filter: PinFilter = {
        types: (csv(q.types) as PinType[] | undefined) ?? PIN_TYPES,
        assetId: q.assetId,
        assetTypes: csv(q.assetTypes),
        assetSubtypes: csv(q.assetSubtypes),
      };
      const { offset, limit } = pageOffset(pageNumber, pageSize);
      // No query: no pin type the viewer may see, or a page past the last pin (the API answers an empty page too).
      const countsQuery = pinCountsQuery(viewer, filter);
      const [counts] = countsQuery ? await runPreparedOnPool<PinCounts>(pool, countsQuery) : [];
      const total = Object.values(counts ?? {}).reduce((sum, n) => sum + n, 0);
      const page = counts ? pinsPageQuery(viewer, filter, counts, offset, limit) : null;
      const rows = page ? await runOnPool<PinRow>(pool, page) : [];
      const items = rows.map((r) => ({
        type: r.type,
        id: r.id,
        latitude: r.latitude,
        longitude: r.longitude,
        title: r.title,
        assetType: r.asset_type,
        assetSubtype: r.asset_subtype,
      }));
      return toPage(items, total, pageNumber, pageSize);
    },
  },
};
