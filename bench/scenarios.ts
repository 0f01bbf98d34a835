/**
 * The benchmark scenarios. Each entry is self-contained: the data it needs (a shared seed step), the request paths
 * for the API and for the bare baseline (autocannon rotates through them so no cache sees one URL), and the
 * baseline route, which runs the API's own SQL through a plain `pg` Pool. Adding a scenario = adding an entry.
 */
import { runOnPoolAs, runPreparedOnPool } from '../src/db/sql.js';
import { nearbyQuery, searchTerritoryRows, territoryByIdQuery, type TerritoryRow } from '../src/routers/territories/territories.queries.js';
import { CITIES, COUNTRY_BOX, NAME_PREFIXES, NAME_WORDS, territoriesSeed } from './seed.js';
import { eventsNearbyScenario } from './events-nearby.js';
import { HOT_READ, type CustomScenario, type Scenario } from './scenario.js';
import { mapPinsScenario } from './map-pins.js';
import { feedReadScenario } from './feed-read.js';
import { journeysFeedCacheHitScenario, journeysFeedColdScenario } from './journeys.js';
import { checkoutScenario, itemSearchScenario } from './marketplace.js';
import { chatFanoutScenario, chatHistoryDeepPageScenario, chatHistoryFirstPageScenario } from './chat.js';
import { dayScenario } from './day.js';
import { flatScenario } from './flat.js';
import { notificationFanoutScenario } from './notification-fanout.js';

/** The API's JSON shape of a territory, built by hand (no validation layer): what a bare route would answer. */
export const territoryJson = (r: TerritoryRow) => ({
  id: r.id,
  name: r.name,
  description: r.description,
  city: r.city,
  state: r.state,
  latitude: r.latitude,
  longitude: r.longitude,
  radiusKm: r.radius_km,
  parentTerritoryId: r.parent_territory_id,
  status: r.status,
  tags: r.tags,
  createdAtUtc: r.created_at_utc,
});

type Query = Record<string, string | undefined>;
const num = (value: string | undefined, fallback: number) => (value === undefined || value === '' ? fallback : Number(value));
const qs = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
const pick = <T>(items: readonly T[], random: () => number): T => items[Math.floor(random() * items.length)] as T;

export const scenarios: Scenario[] = [
  {
    name: 'territory by id',
    targets: [HOT_READ, { kind: 'throughput-at-least', factor: 0.8 }],
    seed: territoriesSeed,
    authenticated: true,
    async requests({ db, count }) {
      // Spread over the whole table (not the first rows of an index), the same ids every run.
      const { rows } = await db.query<{ id: string }>(`select id from territory where status = 'ACTIVE' order by md5(id::text) limit $1`, [count]);
      return rows.map(({ id }) => ({ api: `/api/v1/territories/${id}`, baseline: `/baseline/territories/${id}` }));
    },
    baseline: {
      path: '/baseline/territories/:id',
      async handler(pool, request, reply) {
        const { id } = request.params as { id: string };
        const [row] = await runPreparedOnPool<TerritoryRow>(pool, territoryByIdQuery(id));
        if (!row) return reply.code(404).send({ status: 404 });
        return territoryJson(row);
      },
    },
  },
  {
    name: 'territories nearby',
    targets: [HOT_READ],
    seed: territoriesSeed,
    authenticated: false,
    async requests({ random, count }) {
      return Array.from({ length: count }, () => {
        // Half the points in a city (dense: the limit applies), half anywhere in the country (sparse).
        const city = random() < 0.5 ? pick(CITIES, random) : null;
        const lat = city ? city.lat + (random() - 0.5) * 0.8 : COUNTRY_BOX.minLat + random() * (COUNTRY_BOX.maxLat - COUNTRY_BOX.minLat);
        const lng = city ? city.lng + (random() - 0.5) * 0.8 : COUNTRY_BOX.minLng + random() * (COUNTRY_BOX.maxLng - COUNTRY_BOX.minLng);
        const query = qs({ lat: lat.toFixed(5), lng: lng.toFixed(5), radiusKm: 25, limit: 20 });
        return { api: `/api/v1/territories/nearby?${query}`, baseline: `/baseline/territories/nearby?${query}` };
      });
    },
    baseline: {
      path: '/baseline/territories/nearby',
      async handler(pool, request) {
        const q = request.query as Query;
        const rows = await runPreparedOnPool<TerritoryRow & { distance_km: number }>(
          pool,
          nearbyQuery({ lat: num(q.lat, 0), lng: num(q.lng, 0), radiusKm: num(q.radiusKm, 25), limit: num(q.limit, 20) }),
        );
        return rows.map((r) => ({ ...territoryJson(r), distanceKm: Math.round(r.distance_km * 1000) / 1000 }));
      },
    },
  },
  {
    name: 'territories search',
    targets: [HOT_READ],
    seed: territoriesSeed,
    authenticated: false,
    async requests({ random, count }) {
      return Array.from({ length: count }, () => {
        const kind = random();
        let params: Record<string, string | number>;
        if (kind < 0.4) {
          // What a search box sends while typing: the first letters of a name.
          const word = `${pick(NAME_PREFIXES, random)} ${pick(NAME_WORDS, random)}`;
          params = { q: word.slice(0, 3 + Math.floor(random() * (word.length - 2))) };
        } else if (kind < 0.7) {
          params = { city: pick(CITIES, random).city };
        } else if (kind < 0.9) {
          const city = pick(CITIES, random);
          params = { q: pick(NAME_PREFIXES, random), city: city.city, state: city.state };
        } else {
          params = { state: pick(CITIES, random).state };
        }
        const query = qs({ ...params, take: 20 });
        return { api: `/api/v1/territories/search?${query}`, baseline: `/baseline/territories/search?${query}` };
      });
    },
    baseline: {
      path: '/baseline/territories/search',
      async handler(pool, request) {
        const q = request.query as Query;
        const rows = await searchTerritoryRows((query, options) => runOnPoolAs<TerritoryRow>(pool, query, options), {
          q: q.q,
          city: q.city,
          state: q.state,
          offset: num(q.skip, 0),
          limit: num(q.take, 20),
        });
        return rows.map(territoryJson);
      },
    },
  },
  // After the territory scenarios: its seed step needs the territories.
  eventsNearbyScenario,
  // After the territory scenarios: its seed step adds map content and events to one seeded territory.
  mapPinsScenario,
  // After the events scenario: its seed step fills one seeded territory's feed, EVENT posts announcing its event.
  feedReadScenario,
  // Right after it: the same territory and posts through the journeys API (v2), compared with its figures.
  journeysFeedColdScenario,
  journeysFeedCacheHitScenario,
  // After the territory scenarios: their seed steps fill one seeded territory each (marketplace, chat).
  itemSearchScenario,
  chatHistoryFirstPageScenario,
  chatHistoryDeepPageScenario,
];

/**
 * Scenarios that drive the API their own way (writes, WebSocket fan-out) and report their own figures, run after the
 * request/baseline ones (the checkout consumes the carts; the fan-out adds messages to the chat history). The flat
 * comparison reads before the day writes into the feed; the notification fan-out runs its worker before the day, so
 * the day's outbox rows are never dispatched beside a measurement.
 */
export const customScenarios: CustomScenario[] = [checkoutScenario, chatFanoutScenario, flatScenario, notificationFanoutScenario, dayScenario];
