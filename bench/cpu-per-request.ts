/**
 * `npm run bench:cpu`: the CPU one request costs the API and the bare baseline route, in this process, with no
 * socket, no load generator and no other server sharing the cores: what `npm run bench`'s ratios cannot separate on a
 * 2-core machine. Both apps run in this process on one embedded PostgreSQL with the smoke data set: the real API
 * (`buildApp`, every plugin and hook) and the baseline server's routes (bench/baseline-server.ts: Fastify with no
 * plugins and a `pg` pool). Each request of a scenario's own list is sent with `app.inject`, one at a time, and
 * `process.cpuUsage()` is read around a round of N requests; 9 rounds, min and median printed in microseconds.
 *
 * What the figures include: routing, hooks, the handler, the PostgreSQL round trips of this process (`pg` parsing and
 * the socket writes), and `app.inject`'s own request and response objects (the same for both apps). What they leave
 * out: the HTTP socket and PostgreSQL's own CPU. `N=<requests per round>` (default 2000); `--cpu-prof` on the command
 * line of the built harness (`node --cpu-prof dist/bench/bench/cpu-per-request.js` after `npm run bench:cpu` or
 * `node --import tsx bench/build.ts`) profiles the loops.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp, type BuiltApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { signUserToken } from '../src/platform/jwt.js';
import type { RequestPair, Scenario } from './scenario.js';
import { scenarios } from './scenarios.js';
import { insertBenchUser, SIZES, seededRandom } from './seed.js';
import { benchApiEnv, freePort, prepareSchema } from './servers.js';

const MEASURED = ['territory by id', 'territories nearby', 'feed read', 'journeys feed, cache hit'];
const ROUNDS = 9;
const N = Number(process.env.N ?? 2000);
const size = SIZES.smoke;

type Request = { url: string; headers: Record<string, string> };

/** CPU microseconds per request over ROUNDS rounds of N requests (after a warm-up round): min and median. */
async function cpuPerRequest(app: FastifyInstance, requests: Request[]): Promise<{ min: number; median: number }> {
  const send = async (i: number) => {
    const request = requests[i % requests.length]!;
    const response = await app.inject({ method: 'GET', url: request.url, headers: request.headers });
    if (response.statusCode !== 200) throw new Error(`${request.url} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
  };
  for (let i = 0; i < Math.min(N, 500); i++) await send(i);
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < N; i++) await send(i);
    const used = process.cpuUsage(start);
    rounds.push((used.user + used.system) / N);
  }
  rounds.sort((a, b) => a - b);
  return { min: rounds[0]!, median: rounds[Math.floor(ROUNDS / 2)]! };
}

const dirs = [mkdtempSync(join(tmpdir(), 'territory-cpu-pg-')), mkdtempSync(join(tmpdir(), 'territory-cpu-data-'))];
const [pgDir, dataDir] = dirs as [string, string];
const database = await startEmbeddedPostgres({ dir: pgDir, port: await freePort(), persistent: false, fast: true });
let built: BuiltApp | undefined;
let pool: pg.Pool | undefined;
try {
  await database.createDatabase('bench');
  const url = database.url('bench');
  await prepareSchema(url);
  const owner = new pg.Client({ connectionString: url });
  await owner.connect();
  const chosen = MEASURED.map((name) => scenarios.find((s) => s.name === name)).filter((s): s is Scenario => s !== undefined);
  for (const step of new Set(chosen.map((s) => s.seed))) await step.run(owner, size);
  const userId = await insertBenchUser(owner);

  const config = loadConfig(benchApiEnv(url, dataDir));
  built = await buildApp(config, url);
  // Scenarios may set up through the API (the journeys client registers itself): it listens for that only.
  const apiUrl = await built.app.listen({ port: 0, host: '127.0.0.1' });
  const tokenFor = async (id: string) => (await signUserToken(config.jwt, { userId: id, sessionId: randomUUID(), authenticatedAt: new Date() })).token;
  const token = await tokenFor(userId);

  pool = new pg.Pool({ connectionString: url, max: 20 });
  pool.on('error', () => {});
  const bare = Fastify({ logger: false });
  for (const scenario of scenarios) bare.get(scenario.baseline.path, (request, reply) => scenario.baseline.handler(pool!, request, reply));
  await bare.ready();

  const rows: string[][] = [];
  const health = await cpuPerRequest(built.app, [{ url: '/health', headers: { authorization: `Bearer ${token}` } }]);
  rows.push(['/health (hooks only, with a token)', health.min.toFixed(0), health.median.toFixed(0), '', '', '']);
  for (const scenario of chosen) {
    await owner.query('vacuum analyze');
    const pairs: RequestPair[] = await scenario.requests({ db: owner, random: seededRandom(20261122), count: 200, size, apiUrl, tokenFor });
    const apiHeaders: Record<string, string> = scenario.authenticated ? { authorization: `Bearer ${token}` } : {};
    const api = await cpuPerRequest(
      built.app,
      pairs.map((p) => ({ url: p.api, headers: p.apiHeaders ?? apiHeaders })),
    );
    const base = await cpuPerRequest(
      bare,
      pairs.map((p) => ({ url: p.baseline, headers: {} })),
    );
    rows.push([scenario.name, api.min.toFixed(0), api.median.toFixed(0), base.min.toFixed(0), base.median.toFixed(0), (base.min / api.min).toFixed(2)]);
  }
  await owner.end();
  const header = ['request', 'API min', 'API median', 'bare min', 'bare median', 'bare/API (min)'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`CPU per request in microseconds (${ROUNDS} rounds of ${N}, app.inject, smoke data)\n`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
} finally {
  await built?.close();
  await pool?.end();
  await database.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
