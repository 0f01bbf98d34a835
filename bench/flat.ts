/**
 * Target 3 of issue 14, "cost flat as data grows": territories nearby, territories search, map pins and feed read,
 * each measured on a small world (1k territories, 1k map rows in the map's territory, 1k posts in the feed's) and
 * on the bench's full data (100k territories, ~39k map rows, 200k posts; smoke: a few thousand), in the same run,
 * in turns of 2 s (load.ts `inTurn`), with the same requests; prints the API p50 of each and the growth (large /
 * small), met when at most 1.5x.
 *
 * Why the small world is a database of its own (created on the same PostgreSQL, migrated, seeded with the very seed
 * steps of the full data at small sizes, served by a second API process with the same settings) rather than a small
 * set beside the large one: nearby and search read the whole territory table, so a thousand territories beside a
 * hundred thousand cannot be searched apart from them; and a small set in a shared table would hide exactly the
 * plans that do not scale (a sequential scan costs the same for both, reading as "flat"). In its own database
 * every table of the small world is small, as on a young deployment, and the same query over more rows is the one
 * thing that differs. The feed and the map could have been a small territory beside the large one (their queries are
 * per territory); they are in the small world too so that all four compare the same way.
 *
 * Same requests: nearby and search send the scenarios' own request lists (the same seeded random numbers) to both
 * worlds; the feed reads the first 40 pages of 20 (the small feed has ~46 full pages of what the reader sees, so no
 * page is short in either world); the map asks page 1 of each of the map scenario's five filters (what a map client
 * asks first). The reader is each world's bench user: a RESIDENT of the feed's territory, no member of the map's.
 */
import { eventsSeed } from './events-nearby.js';
import { feedSeed, feedTerritoryId } from './feed-read.js';
import { driveMixed, inTurn, kindFigures, type KindFigures, type MixedSample } from './load.js';
import { mapSeed, mapTerritoryId } from './map-pins.js';
import type { CustomRunContext, CustomScenario, CustomTarget } from './scenario.js';
import { type BenchSize, CITIES, insertBenchUser, seededRandom, territoriesSeed } from './seed.js';

const SMALL_DATABASE = 'bench_small';
const SMALL_API = 'api-small';
/** At most this growth of the p50 from the small world to the full data (issue 14, target 3). */
const MAX_GROWTH = 1.5;
const CONNECTIONS = 10;
const FEED_PAGES = 40;

/** The small world: 1k of each (smoke: fewer territories and map rows, as the full data is a few thousand there). */
function smallWorld(size: BenchSize): BenchSize {
  return size.mode === 'full'
    ? { mode: 'full', territories: 1_000, feedPosts: 1_000, mapRows: 1_000 }
    : { mode: 'smoke', territories: 200, feedPosts: 1_000, mapRows: 200 };
}

const pageOf = (path: string) => Number(new URLSearchParams(path.split('?')[1] ?? '').get('pageNumber') ?? 1);

interface Kind {
  /** The request/baseline scenario whose requests are sent. */
  scenario: string;
  /** Its name in the printout, when not the scenario's. */
  label?: string;
  key: string;
  /** What grows, for the printout. */
  rows: 'territories' | 'mapRows' | 'feedPosts';
  keep(path: string): boolean;
  /** Requests asked of the scenario (before `keep`): the map's 250 are shuffled, so all of them. */
  count?: number;
  /** Its answers must hold items in both worlds (a page of nothing would not compare). */
  nonEmpty?: boolean;
  /**
   * Requests of its own instead of the scenario's, of which only those answering the same number of items in both
   * worlds are sent: the same work over 100 times the rows.
   */
  equalAnswers?: (size: BenchSize) => string[];
}

/**
 * Territories nearby with answers of the same size in both worlds. The scenario's own requests (25 km, 20 at most)
 * answer a full page around a city at 100k territories but two or three at 1k, and a territory more in an answer
 * costs the API (and the bare route) about as much as the search for it: measured in-process, 20 territories instead
 * of 1 take +75% CPU per request on the API, +80% on the bare route. These points are near a city, 100 km, 10 at most
 * (smoke: 2, its small world has ~4 territories per city): full answers in both worlds (any other is left out).
 */
function equalNearbyPaths(size: BenchSize): string[] {
  const limit = size.mode === 'full' ? 10 : 2;
  const random = seededRandom(20261125);
  return Array.from({ length: 400 }, () => {
    const city = CITIES[Math.floor(random() * CITIES.length)]!;
    const lat = (city.lat + (random() - 0.5) * 0.4).toFixed(5);
    const lng = (city.lng + (random() - 0.5) * 0.4).toFixed(5);
    return `/api/v1/territories/nearby?lat=${lat}&lng=${lng}&radiusKm=100&limit=${limit}`;
  });
}

const KINDS: Kind[] = [
  { scenario: 'territories nearby', key: 'nearby', rows: 'territories', keep: () => true },
  {
    scenario: 'territories nearby',
    label: 'territories nearby, equal answers',
    key: 'nearbyEqual',
    rows: 'territories',
    keep: () => true,
    equalAnswers: equalNearbyPaths,
  },
  { scenario: 'territories search', key: 'search', rows: 'territories', keep: () => true },
  { scenario: 'map pins', key: 'mapPins', rows: 'mapRows', keep: (path) => pageOf(path) === 1, count: 10_000, nonEmpty: true },
  { scenario: 'feed read', key: 'feedRead', rows: 'feedPosts', keep: (path) => pageOf(path) <= FEED_PAGES, nonEmpty: true },
];

interface World {
  label: string;
  apiUrl: string;
  db: CustomRunContext['db'];
  token: string;
  rows: Record<Kind['rows'], number>;
}

/** The rows that grow, counted the same way in both worlds. */
async function rowsOf(db: CustomRunContext['db']): Promise<World['rows']> {
  const [map, feed] = await Promise.all([mapTerritoryId(db), feedTerritoryId(db)]);
  const { rows } = await db.query<World['rows']>(
    `select (select count(*)::int from territory where status = 'ACTIVE') as territories,
            (select count(*)::int from map_entity where territory_id = $1::uuid)
              + (select count(*)::int from post where territory_id = $1::uuid and map_entity_id is not null)
              + (select count(*)::int from territory_asset where territory_id = $1::uuid)
              + (select count(*)::int from alert where territory_id = $1::uuid)
              + (select count(*)::int from event where territory_id = $1::uuid) as "mapRows",
            (select count(*)::int from post where territory_id = $2::uuid) as "feedPosts"`,
    [map, feed],
  );
  return rows[0]!;
}

/** How many items the path's answer holds (a list, or `items` of a page); -1 when it is not a 200. */
async function itemCount(world: World, path: string, headers: Record<string, string>): Promise<number> {
  const response = await fetch(`${world.apiUrl}${path}`, { headers });
  if (response.status !== 200) return -1;
  const body = (await response.json()) as unknown[] | { items?: unknown[] };
  return (Array.isArray(body) ? body : (body.items ?? [])).length;
}

/** Items per answer over the first paths (what the p50 grows with besides the rows). */
async function meanItems(world: World, paths: string[], headers: Record<string, string>): Promise<number> {
  const counts = await Promise.all(paths.slice(0, ITEMS_SAMPLE).map((path) => itemCount(world, path, headers)));
  return counts.length ? Math.round((counts.reduce((a, b) => a + Math.max(0, b), 0) / counts.length) * 10) / 10 : 0;
}
const ITEMS_SAMPLE = 50;

/** The paths answering the same, non-zero number of items in both worlds. */
async function sameSizeInBoth(paths: string[], small: World, large: World): Promise<string[]> {
  const kept: string[] = [];
  for (const path of paths) {
    const [a, b] = await Promise.all([itemCount(small, path, {}), itemCount(large, path, {})]);
    if (a > 0 && a === b) kept.push(path);
  }
  return kept;
}

export const flatScenario: CustomScenario = {
  name: 'cost flat as data grows',
  // The full data's side: the map's and the feed's territories (the events step first, as in scenarios.ts).
  needs: [eventsSeed, mapSeed],
  seed: feedSeed,
  servers: [{ name: SMALL_API, script: 'bench/api-server.ts', database: SMALL_DATABASE }],
  async run(ctx) {
    const { size, log } = ctx;
    const smallDb = await ctx.database(SMALL_DATABASE);
    const smallSize = smallWorld(size);
    // The same steps, in the same order, as the full data's (run.ts, scenarios.ts); then its own bench user.
    for (const step of [territoriesSeed, eventsSeed, mapSeed, feedSeed]) await step.run(smallDb, smallSize);
    const smallUser = await insertBenchUser(smallDb);
    const smallApi = await ctx.server(SMALL_API);
    const worlds: World[] = [
      { label: 'small', apiUrl: smallApi.url, db: smallDb, token: await ctx.tokenFor(smallUser), rows: await rowsOf(smallDb) },
      { label: 'large', apiUrl: ctx.apiUrl, db: ctx.db, token: ctx.token, rows: await rowsOf(ctx.db) },
    ];
    const [small, large] = worlds as [World, World];
    // Smoke checks that the comparison works (its figures say nothing), within the smoke run's deadline.
    // The two worlds are measured in turns (load.ts `inTurn`), so both meet the same moments of the machine.
    const timing = size.mode === 'full' ? { warmupSeconds: 2, durationSeconds: 10, rounds: 5 } : { warmupSeconds: 0.2, durationSeconds: 0.6, rounds: 2 };

    const figures: Record<string, number> = {};
    for (const world of worlds) for (const [rows, n] of Object.entries(world.rows)) figures[`${world.label}${rows[0]!.toUpperCase()}${rows.slice(1)}`] = n;
    const targets: CustomTarget[] = [];
    const report: string[] = [];
    let failures = 0;
    const measured: Array<{ kind: Kind; small: KindFigures; large: KindFigures; reqPerSec: [number, number]; items: [number, number] }> = [];
    for (const kind of KINDS) {
      const equalPaths = kind.equalAnswers ? await sameSizeInBoth(kind.equalAnswers(size), small, large) : undefined;
      if (equalPaths) figures[`${kind.key}Requests`] = equalPaths.length;
      const loads: Array<{ world: World; load: (seconds: number) => Promise<MixedSample>; paths: string[]; headers: Record<string, string> }> = [];
      for (const world of worlds) {
        const { pairs, authenticated } = equalPaths
          ? { pairs: equalPaths.map((api) => ({ api, baseline: api })), authenticated: false }
          : await ctx.requestsOf(kind.scenario, { db: world.db, count: kind.count });
        const paths = pairs.map((p) => p.api).filter((path) => kind.keep(path));
        const headers: Record<string, string> = authenticated ? { authorization: `Bearer ${world.token}` } : {};
        if (paths.length === 0 || (kind.nonEmpty && (await itemCount(world, paths[0]!, headers)) <= 0)) {
          log(`${kind.scenario}: the ${world.label} world answers no items to ${paths[0] ?? '(no request)'}: not comparable`);
          failures++;
        }
        let next = 0;
        const load = (durationSeconds: number) =>
          driveMixed({
            baseUrl: world.apiUrl,
            connections: CONNECTIONS,
            durationSeconds,
            next: () => ({ kind: kind.key, method: 'GET', path: paths[next++ % paths.length]!, headers }),
          });
        loads.push({ world, load, paths, headers });
      }
      const [smallLoad, largeLoad] = loads as [(typeof loads)[number], (typeof loads)[number]];
      log(
        `${kind.scenario}: ${small.rows[kind.rows]} and ${large.rows[kind.rows]} ${kind.rows} in turns (${timing.rounds} of ${timing.durationSeconds / timing.rounds} s each)`,
      );
      for (const { load } of loads) await load(timing.warmupSeconds);
      const slice = (l: (typeof loads)[number]) => () => l.load(timing.durationSeconds / timing.rounds);
      const sampled = await inTurn(timing.rounds, [slice(smallLoad), slice(largeLoad)]);
      const results: Array<{ figures: KindFigures; reqPerSec: number; items: number }> = [];
      for (const [i, { world, paths, headers }] of loads.entries()) {
        const samples = sampled[i as 0 | 1];
        const f = kindFigures(samples.flatMap((sample) => [...sample.byKind.values()]));
        failures += f.non2xx + samples.reduce((n, sample) => n + sample.errors, 0);
        const seconds = samples.reduce((n, sample) => n + sample.durationSeconds, 0);
        results.push({ figures: f, reqPerSec: seconds > 0 ? f.requests / seconds : 0, items: await meanItems(world, paths, headers) });
      }
      const [s, l] = results as [(typeof results)[number], (typeof results)[number]];
      measured.push({ kind, small: s.figures, large: l.figures, reqPerSec: [s.reqPerSec, l.reqPerSec], items: [s.items, l.items] });
    }

    const ms = (v: number) => `${v.toFixed(2)} ms`;
    const header = ['scenario', 'rows', 'items/answer', 'p50 small', 'p50 large', 'growth', 'p99 small', 'p99 large', 'req/s small', 'req/s large'];
    const lines = measured.map(({ kind, small: s, large: l, reqPerSec, items }) => {
      const growth = s.p50Ms > 0 ? Math.round((l.p50Ms / s.p50Ms) * 100) / 100 : 0;
      figures[`${kind.key}SmallP50Ms`] = s.p50Ms;
      figures[`${kind.key}LargeP50Ms`] = l.p50Ms;
      figures[`${kind.key}SmallP99Ms`] = s.p99Ms;
      figures[`${kind.key}LargeP99Ms`] = l.p99Ms;
      figures[`${kind.key}Growth`] = growth;
      figures[`${kind.key}SmallItems`] = items[0];
      figures[`${kind.key}LargeItems`] = items[1];
      const rows = `${small.rows[kind.rows]} -> ${large.rows[kind.rows]} ${kind.rows}`;
      targets.push({
        target: `API p50 ${ms(s.p50Ms)} at ${small.rows[kind.rows]} ${kind.rows} -> ${ms(l.p50Ms)} at ${large.rows[kind.rows]}: growth at most ${MAX_GROWTH}x`,
        ratio: growth,
        holds: growth > 0 && growth <= MAX_GROWTH,
      });
      return [
        kind.label ?? kind.scenario,
        rows,
        `${items[0]} -> ${items[1]}`,
        ms(s.p50Ms),
        ms(l.p50Ms),
        `${growth.toFixed(2)}x`,
        ms(s.p99Ms),
        ms(l.p99Ms),
        reqPerSec[0].toFixed(0),
        reqPerSec[1].toFixed(0),
      ];
    });
    const widths = header.map((h, i) => Math.max(h.length, ...lines.map((row) => (row[i] ?? '').length)));
    const line = (cells: string[]) => cells.map((c, i) => (i <= 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    report.push(line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(line));
    return {
      figures: { ...figures, connections: CONNECTIONS, durationSeconds: timing.durationSeconds, rounds: timing.rounds },
      failures,
      targets: targets.map((t, i) => ({ ...t, target: `${KINDS[i]!.label ?? KINDS[i]!.scenario}: ${t.target}` })),
      report,
    };
  },
};
