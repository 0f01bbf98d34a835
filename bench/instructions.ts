/**
 * `npm run bench:instructions`: the instructions one request costs the API and the bare baseline, counted by callgrind
 * (valgrind), for the scenarios whose ratio is the framework's overhead: territory by id and the journeys cache hit.
 *
 * Why: on this 2-core machine `npm run bench`'s req/s and CPU per request move by 10-20% between runs of the same code
 * (bench/PROFILE.md, twenty-first pass), so a change of a few microseconds cannot be read from it. An instruction
 * count does not depend on the other processes, the CPU's clock or the scheduler (the bare by-id route counted 517,055
 * and 517,059 instructions a request in two runs of one window), but it does depend on V8's garbage collections and
 * compilations: rounds of 300 vary by up to half on either server, and the min of 7 rounds of the same bare route
 * moved by 4% between two runs. So it is not yet the ruler it was meant to be for a change of 1-2%: compare versions
 * over several runs, and read where instructions go by function (`callgrind_annotate` of a dump), which is what it
 * was most useful for (PROFILE.md, twenty-second pass). Instructions are not time either (the API
 * misses the caches more): `CACHE_SIM=1` adds callgrind's cache and branch simulation and its estimate of cycles,
 * whose ratio came near the bench's CPU ratio (PROFILE.md, twenty-second pass); about twice as slow.
 *
 * How: both servers run as `npm run bench` runs them (built by tsc, `node --enable-source-maps`, the same environment,
 * the smoke data set, on one embedded PostgreSQL), each under `valgrind --tool=callgrind --instr-atstart=no`. Per
 * scenario and server: a warm-up of `WARMUP` requests (V8 optimizes meanwhile, the caches fill), then `ROUNDS` rounds:
 * counting switched on (`callgrind_control -i on`), `N` requests sent over real HTTP one at a time (autocannon, one
 * connection: per request, a whole turn of the event loop, whatever the machine's load), counting switched off and
 * the counts dumped; instructions per request = the round's total / N. The server's process only: PostgreSQL and the
 * load generator are not counted. Needs valgrind (`apt-get install valgrind`); ~6 minutes. The dumps stay in the
 * printed directory (`callgrind_annotate <file>` lists the costs by function).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { signUserToken } from '../src/platform/jwt.js';
import { JOURNEY_CACHE_SECONDS } from '../src/routers/journeys/answer-cache.js';
import { runningChildren, type ServerChild, startServerChild, stopChild } from './child.js';
import type { RequestPair, Scenario } from './scenario.js';
import { scenarios } from './scenarios.js';
import { insertBenchUser, SIZES, seededRandom } from './seed.js';
import { benchApiEnv, freePort, prepareBenchDatabase } from './servers.js';

const MEASURED = ['territory by id', 'journeys feed, cache hit'];
/** The cache and branch simulation of `CACHE_SIM=1` (about twice as slow: fewer requests, so a cache hit's 60 s hold). */
const simulate = process.env.CACHE_SIM === '1' ? ['--cache-sim=yes', '--branch-sim=yes'] : [];
/** Requests per counted round, and rounds: a round that a major garbage collection falls into counts more (min, median). */
const N = Number(process.env.N ?? (simulate.length ? 150 : 300));
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const WARMUP = Number(process.env.WARMUP ?? 1500);
type Request = { path: string; headers: Record<string, string> };
const size = SIZES.smoke;
const run = promisify(execFile);

async function callgrindControl(pid: number, ...args: string[]) {
  await run('callgrind_control', [...args, String(pid)]);
}

/** The totals of the newest dump in `dir` whose name starts with `prefix` (callgrind names them `<file>.<part>`), by event. */
function lastDumpTotals(dir: string, prefix: string): Record<string, number> {
  const parts = readdirSync(dir)
    .filter((f) => f.startsWith(`${prefix}.`))
    .map((f) => ({ f, part: Number(f.split('.').pop()) }))
    .sort((a, b) => b.part - a.part);
  const text = readFileSync(join(dir, parts[0]!.f), 'utf8');
  const events = /^events: (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/);
  const totals = /^totals: (.+)$/m.exec(text)?.[1]?.trim().split(/\s+/).map(Number);
  if (!events || !totals) throw new Error(`no totals in ${parts[0]!.f}`);
  return Object.fromEntries(events.map((event, i) => [event, totals[i] ?? 0]));
}

/**
 * With the cache and branch simulation: callgrind's estimate of cycles, each first-level miss and mispredicted
 * branch counted as 10 instructions and each last-level miss as 100.
 */
const estimatedCycles = (t: Record<string, number>) =>
  (t.Ir ?? 0) + 10 * ((t.I1mr ?? 0) + (t.D1mr ?? 0) + (t.D1mw ?? 0) + (t.Bcm ?? 0) + (t.Bim ?? 0)) + 100 * ((t.ILmr ?? 0) + (t.DLmr ?? 0) + (t.DLmw ?? 0));

/**
 * Sends `amount` requests one at a time (one connection: a server then handles each alone, whatever the machine's
 * load, which a count per request needs), taking `requests` in turn. Every answer must be a 200 and, with `cache`, carry
 * that `X-Cache` (a cache hit measured after its entry expired would count a miss).
 */
async function send(baseUrl: string, amount: number, requests: Request[], cache: 'HIT' | undefined, from: { next: number; lastMissMs: number }) {
  const answers: Record<string, number> = {};
  const instance = autocannon({
    url: baseUrl,
    connections: 1,
    amount,
    timeout: 30,
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => ({ ...request, ...requests[from.next++ % requests.length]! }),
        onResponse: (status, _body, _context, headers) => {
          const name = Object.keys(headers).find((h) => h.toLowerCase() === 'x-cache');
          const value = name === undefined ? undefined : String(headers[name]);
          if (value === 'MISS') from.lastMissMs = Date.now();
          const key = `${status}${cache && value ? ` ${value}` : ''}`;
          answers[key] = (answers[key] ?? 0) + 1;
        },
      },
    ],
  });
  await instance;
  const expected = cache ? `200 ${cache}` : '200';
  if (answers[expected] !== amount) {
    throw new Error(
      `${baseUrl}: answers ${JSON.stringify(answers)}, expected ${amount} x ${expected} (misses: the requests outlasted the cache's 60 s, lower N)`,
    );
  }
}

async function countedPerRequest(server: ServerChild, dumpDir: string, requests: Request[], cache: 'HIT' | undefined) {
  const from = { next: 0, lastMissMs: 0 };
  await send(server.url, WARMUP, requests, undefined, from);
  /**
   * Under valgrind the rounds may outlast the 60 s of a cache entry: before a round, entries older than half that
   * are left to expire, then one pass over the requests makes them anew (uncounted), and the round's hits follow.
   */
  const fresh = async () => {
    if (!cache || Date.now() - from.lastMissMs < (JOURNEY_CACHE_SECONDS / 2) * 1000) return;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, from.lastMissMs + (JOURNEY_CACHE_SECONDS + 1) * 1000 - Date.now())));
    await send(server.url, requests.length, requests, undefined, from);
  };
  const started = Date.now();
  const pid = server.process.pid!;
  const rounds: { instructions: number; cycles: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await fresh();
    await callgrindControl(pid, '--zero');
    await callgrindControl(pid, '--instr=on');
    await send(server.url, N, requests, cache, from);
    await callgrindControl(pid, '--instr=off');
    await callgrindControl(pid, '--dump');
    const totals = lastDumpTotals(dumpDir, `${server.name}.${pid}`);
    rounds.push({ instructions: (totals.Ir ?? 0) / N, cycles: estimatedCycles(totals) / N });
  }
  console.log(`  ${server.name}: ${ROUNDS} rounds of ${N} requests in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const pick = (of: 'instructions' | 'cycles') => {
    const sorted = rounds.map((r) => r[of]).sort((a, b) => a - b);
    return { min: sorted[0]!, median: sorted[Math.floor(sorted.length / 2)]! };
  };
  return { instructions: pick('instructions'), cycles: pick('cycles') };
}

try {
  await run('callgrind_control', ['--version']);
} catch {
  console.error('bench:instructions needs valgrind (callgrind): apt-get install valgrind');
  process.exit(1);
}

const dirs = ['pg', 'data', 'dumps'].map((name) => mkdtempSync(join(tmpdir(), `territory-instructions-${name}-`)));
const [pgDir, dataDir, dumpDir] = dirs as [string, string, string];
const database = await startEmbeddedPostgres({ dir: pgDir, port: await freePort(), persistent: false, fast: true });
try {
  await database.createDatabase('bench');
  const { ownerUrl, appUrl } = await prepareBenchDatabase(database, 'bench');
  const owner = new pg.Client({ connectionString: ownerUrl });
  // The database may go away first on Ctrl-C; that must not crash the tear-down.
  owner.on('error', () => {});
  await owner.connect();
  const chosen = MEASURED.map((name) => scenarios.find((s) => s.name === name)).filter((s): s is Scenario => s !== undefined);
  const userId = await insertBenchUser(owner);
  for (const step of new Set(chosen.map((s) => s.seed))) await step.run(owner, size);
  await owner.query('vacuum analyze');

  const apiEnv = benchApiEnv(appUrl, dataDir);
  const under = (name: string) => ['valgrind', '--tool=callgrind', '--instr-atstart=no', ...simulate, `--callgrind-out-file=${join(dumpDir, `${name}.%p`)}`];
  console.log('starting both servers under valgrind (about a minute)');
  const [api, baseline] = await Promise.all([
    startServerChild('api', 'bench/api-server.ts', apiEnv, 600_000, under('api')),
    startServerChild('baseline', 'bench/baseline-server.ts', { ...process.env, DATABASE_URL: appUrl }, 600_000, under('baseline')),
  ]);
  const jwt = loadConfig(apiEnv).jwt;
  const tokenFor = async (id: string) => (await signUserToken(jwt, { userId: id, sessionId: randomUUID(), authenticatedAt: new Date() })).token;
  const token = await tokenFor(userId);

  const rows: string[][] = [];
  for (const scenario of chosen) {
    const pairs: RequestPair[] = await scenario.requests({ db: owner, random: seededRandom(20261122), count: 200, size, apiUrl: api.url, tokenFor });
    const apiHeaders: Record<string, string> = scenario.authenticated ? { authorization: `Bearer ${token}` } : {};
    console.log(`${scenario.name}: ${WARMUP} requests of warm-up, then ${ROUNDS} counted rounds of ${N}, on each server`);
    const cache = scenario.cache === 'HIT' ? 'HIT' : undefined;
    const apiCount = await countedPerRequest(
      api,
      dumpDir,
      pairs.map((p) => ({ path: p.api, headers: p.apiHeaders ?? apiHeaders })),
      cache,
    );
    const bareCount = await countedPerRequest(
      baseline,
      dumpDir,
      pairs.map((p) => ({ path: p.baseline, headers: {} })),
      cache,
    );
    const figures = (of: 'instructions' | 'cycles') => {
      const api = apiCount[of],
        bare = bareCount[of];
      const n = (x: number) => Math.round(x).toLocaleString('en');
      return [
        `${n(api.min)} / ${n(api.median)}`,
        `${n(bare.min)} / ${n(bare.median)}`,
        `${(bare.min / api.min).toFixed(3)} / ${(bare.median / api.median).toFixed(3)}`,
      ];
    };
    rows.push([scenario.name, ...figures('instructions'), ...(simulate.length ? figures('cycles') : [])]);
  }
  await owner.end();
  const header = ['scenario', 'API instructions', 'bare instructions', 'bare/API'];
  if (simulate.length) header.push('API cycles (est.)', 'bare cycles (est.)', 'bare/API');
  const sub = header.map((_h, i) => (i === 0 ? '' : 'min / median'));
  const widths = header.map((h, i) => Math.max(h.length, sub[i]!.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\nInstructions per request (callgrind, ${ROUNDS} rounds of ${N} requests after ${WARMUP} of warm-up, smoke data; dumps in ${dumpDir})\n`);
  console.log(line(header));
  console.log(line(sub));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
} finally {
  await Promise.all([...runningChildren].map((child) => stopChild(child, 10_000)));
  await database.stop();
  for (const dir of [pgDir, dataDir]) rmSync(dir, { recursive: true, force: true });
}
