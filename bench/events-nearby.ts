/**
 * The events-nearby scenario and its seed: `GET /api/v1/events/nearby` against a bare route running the same SQL
 * (src/routers/events/events.queries.ts), named as the API names it, and the same media-URL lookup. Listed in
 * scenarios.ts.
 */
import type pg from 'pg';
import { type EventRow, nearbyEventsQuery } from '../src/routers/events/events.queries.js';
import { runPreparedOnPool } from '../src/db/sql.js';
import { type LiveMediaRow, liveMediaWith, mediaUrlOfRow } from '../src/routers/media/media-attach.js';
import { HOT_READ, type Scenario } from './scenario.js';
import { CITIES, COUNTRY_BOX, type SeedStep, benchViewerId } from './seed.js';

/** People who create and attend the seeded events (the bench user attends none, like most readers). */
const ORGANISERS = 50;

/**
 * One event per seeded territory, in that territory's neighbourhood: 80 % clustered around the cities, starts
 * from a month back to two months ahead (some with an end), a tenth cancelled, and zero to three participations
 * each. Runs after the territories step (the events reference them): scenarios.ts lists this scenario after the
 * territory ones, and seed steps run in list order.
 */
export const eventsSeed: SeedStep = {
  name: 'events',
  async run(db, size) {
    await db.query('select setseed(0.24)');
    await db.query(
      `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
       select gen_random_uuid(), now(), 'Organiser ' || i, 'bench', 'bench-organiser-' || i, 'Unverified' from generate_series(1, $1::int) as i`,
      [ORGANISERS],
    );
    await db.query(
      `insert into event (id, created_at_utc, territory_id, title, description, starts_at_utc, ends_at_utc, latitude, longitude,
                          location_label, cover_media_id, additional_media_ids, status, created_by_user_id, created_by_membership, post_id)
       select gen_random_uuid(), now() - interval '40 days',
              t.id, 'Event in ' || t.name, case when random() < 0.5 then 'Bring a friend' else null end,
              t.starts, case when random() < 0.4 then t.starts + interval '3 hours' else null end,
              least(${COUNTRY_BOX.maxLat}, greatest(${COUNTRY_BOX.minLat}, t.latitude + (random() - 0.5) * 0.05)),
              least(${COUNTRY_BOX.maxLng}, greatest(${COUNTRY_BOX.minLng}, t.longitude + (random() - 0.5) * 0.05)),
              case when random() < 0.5 then 'Main square' else null end, null, '{}',
              case when random() < 0.1 then 'CANCELLED' else 'SCHEDULED' end,
              o.ids[1 + floor(random() * ${ORGANISERS})::int], case when random() < 0.5 then 'RESIDENT' else 'VISITOR' end, null
         -- Each event its own start: the select list of the territories' subquery runs per row (an uncorrelated
         -- lateral subquery ran once, and every event started at one instant: past it, every answer was empty).
         from (select t.*, now() + make_interval(hours => floor(random() * 24 * 90)::int - 24 * 30) as starts
                 from territory t where t.status = 'ACTIVE' limit $1::int) t,
              (select array_agg(id) as ids from app_user where external_id like 'bench-organiser-%') o`,
      [size.territories],
    );
    await db.query(
      `insert into event_participation (event_id, user_id, status, created_at_utc, updated_at_utc)
       select e.id, o.ids[1 + (e.k + g.j * 17) % ${ORGANISERS}], case when g.j % 2 = 0 then 'INTEREST' else 'CONFIRMED' end, now(), now()
         from (select id, floor(random() * 4)::int as n, floor(random() * ${ORGANISERS})::int as k from event) e
         join generate_series(0, 2) as g(j) on g.j < e.n,
              (select array_agg(id) as ids from app_user where external_id like 'bench-organiser-%') o`,
    );
    await db.query('analyze event; analyze event_participation');
    const { rows } = await db.query<{ events: number; participations: number }>(
      'select (select count(*)::int from event) as events, (select count(*)::int from event_participation) as participations',
    );
    return { events: rows[0]?.events ?? 0, eventParticipations: rows[0]?.participations ?? 0 };
  },
};

/** The API's JSON of a nearby event, built by hand: what a bare route would answer. */
const nearbyEventJson = (r: EventRow & { distance_km: number }, mediaUrls: string[]) => ({
  id: r.id,
  territoryId: r.territory_id,
  title: r.title,
  description: r.description,
  startsAtUtc: r.starts_at_utc,
  endsAtUtc: r.ends_at_utc,
  latitude: r.latitude,
  longitude: r.longitude,
  locationLabel: r.location_label,
  coverMediaId: r.cover_media_id,
  additionalMediaIds: r.additional_media_ids,
  mediaUrls,
  status: r.status,
  createdByUserId: r.created_by_user_id,
  createdByMembership: r.created_by_membership,
  interestedCount: r.interested_count,
  confirmedCount: r.confirmed_count,
  myParticipation: r.my_participation,
  postId: r.post_id,
  createdAtUtc: r.created_at_utc,
  distanceKm: Math.round(r.distance_km * 1000) / 1000,
});

/** The media service's `mediaUrlsOf` for a page of events: its statement, named as the API names it. */
function mediaUrlsOf(pool: pg.Pool, ids: string[]) {
  return liveMediaWith((query) => runPreparedOnPool<LiveMediaRow>(pool, query), 'EVENT', ids, mediaUrlOfRow);
}

const qs = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

export const eventsNearbyScenario: Scenario = {
  name: 'events nearby',
  targets: [HOT_READ],
  seed: eventsSeed,
  authenticated: true,
  async requests({ random, count }) {
    return Array.from({ length: count }, () => {
      // Mostly where people (and events) are, some anywhere in the country (sparse: few or no events).
      const city = random() < 0.8 ? CITIES[Math.floor(random() * CITIES.length)] : undefined;
      const lat = city ? city.lat + (random() - 0.5) * 0.8 : COUNTRY_BOX.minLat + random() * (COUNTRY_BOX.maxLat - COUNTRY_BOX.minLat);
      const lng = city ? city.lng + (random() - 0.5) * 0.8 : COUNTRY_BOX.minLng + random() * (COUNTRY_BOX.maxLng - COUNTRY_BOX.minLng);
      const query = qs({ lat: lat.toFixed(5), lng: lng.toFixed(5), radiusKm: 5, limit: 20 });
      return { api: `/api/v1/events/nearby?${query}`, baseline: `/baseline/events/nearby?${query}` };
    });
  },
  baseline: {
    path: '/baseline/events/nearby',
    async handler(pool, request) {
      const q = request.query as Record<string, string | undefined>;
      const num = (value: string | undefined, fallback: number) => (value === undefined || value === '' ? fallback : Number(value));
      const rows = await runPreparedOnPool<EventRow & { distance_km: number }>(
        pool,
        nearbyEventsQuery({
          lat: num(q.lat, 0),
          lng: num(q.lng, 0),
          radiusKm: num(q.radiusKm, 5),
          now: new Date(),
          viewerId: await benchViewerId(pool),
          offset: 0,
          limit: num(q.limit, 20),
        }),
      );
      const urls = await mediaUrlsOf(
        pool,
        rows.map((r) => r.id),
      );
      return rows.map((r) => nearbyEventJson(r, urls.get(r.id) ?? []));
    },
  },
};
