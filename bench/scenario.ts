/** What a benchmark scenario is; the list of them is bench/scenarios.ts, each scenario in its own file. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import type { ServerChild } from './child.js';
import type { BenchSize, SeedStep } from './seed.js';
import type { ServerSpec } from './servers.js';

export interface RequestPair {
  /** Path and query of the API call. */
  api: string;
  /** Path and query of the same call on the baseline server. */
  baseline: string;
  /** Headers of this API call (instead of the bench user's bearer token): a journeys client token and user token. */
  apiHeaders?: Record<string, string>;
}

export interface RequestContext {
  db: pg.Client;
  /** Seeded random numbers in [0, 1): every run asks the same requests. */
  random: () => number;
  /** How many distinct requests to rotate through. */
  count: number;
  size: BenchSize;
  /** The API server's base URL: the requests are built once it listens (a scenario may set up through the API). */
  apiUrl: string;
  /** A bearer token the API server accepts for the user. */
  tokenFor(userId: string): Promise<string>;
}

/**
 * A figure of the performance section, computed from the run's results and printed after the table (not
 * enforced: the machines are shared and noisy; the ratios are what to track):
 * - `p99-within`: the API p99 of this scenario at most `factor` times the API p99 of the scenario named `of`
 *   (which `--only` then runs too, so both are measured in the same run);
 * - `throughput-at-least`: the API req/s at least `factor` times its baseline's;
 * - `latency-at-most`: the API p50 and p99 at most these many milliseconds (two lines, one per percentile).
 */
export type ScenarioTarget =
  | { kind: 'p99-within'; of: string; factor: number }
  | { kind: 'throughput-at-least'; factor: number }
  | { kind: 'latency-at-most'; p50Ms: number; p99Ms: number };

/** A hot read of the issue "Performance" (target 1): p99 at most 50 ms and p50 at most 10 ms at 10 connections, full data. */
export const HOT_READ: ScenarioTarget = { kind: 'latency-at-most', p50Ms: 10, p99Ms: 50 };

export interface Scenario {
  name: string;
  seed: SeedStep;
  /** API calls carry the bench user's bearer token. */
  authenticated: boolean;
  requests(ctx: RequestContext): Promise<RequestPair[]>;
  /**
   * The `X-Cache` every measured API answer must carry (the journeys read cache): MISS for cold reads (the rotation
   * then never repeats a request between the comparison, the warm-up and the measured run), HIT for cache hits
   * (the warm-up fills the cache). Any other answer fails the run: the figure would not be what it says.
   */
  cache?: 'HIT' | 'MISS';
  targets?: ScenarioTarget[];
  baseline: {
    /** Fastify route path on the baseline server. */
    path: string;
    handler(pool: pg.Pool, request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  };
}

/** What a custom scenario gets to drive the API with. */
export interface CustomRunContext {
  /** The API server's base URL (`http://127.0.0.1:<port>`). */
  apiUrl: string;
  db: pg.Client;
  size: BenchSize;
  /** A bearer token the API server accepts for the user. */
  tokenFor(userId: string): Promise<string>;
  /** The bench user's bearer token (what the request/baseline scenarios marked `authenticated` send). */
  token: string;
  /** The API server's process id and PostgreSQL's data directory: where the CPU went during a load (cpu.ts). */
  apiPid: number | undefined;
  postgresDataDir: string;
  log(message: string): void;
  /** A process of the scenario's `servers`: started with the API server, or now when `lazy` (resolves once it is up). */
  server(name: string): Promise<ServerChild>;
  /** Stops a process of `servers` (a worker that must not run beside the scenarios after it). */
  stopServer(name: string): Promise<void>;
  /** The owner's connection to a database of its own that a `servers` entry names (created and migrated, not seeded). */
  database(name: string): Promise<pg.Client>;
  /**
   * The request pairs of a request/baseline scenario of scenarios.ts, by name, built as the table's run builds them
   * (the same seeded random numbers every call), on `db` (default: the bench database).
   */
  requestsOf(name: string, options?: { db?: pg.Client; count?: number }): Promise<{ pairs: RequestPair[]; authenticated: boolean }>;
}

/**
 * A target of the performance section measured by a custom scenario (printed with the others, kept under
 * `targets` in the results): what is compared, in words with the measured values, the figure compared with the goal
 * (a ratio, or measured/goal for a time) and whether it holds.
 */
export interface CustomTarget {
  target: string;
  ratio: number;
  holds: boolean;
}

/** A custom scenario's figures: named numbers (ms, per-second rates, counts) and how many operations failed. */
export interface CustomFigures {
  figures: Record<string, number>;
  /** Failed operations (non-2xx answers, missing deliveries): a correct run has none. */
  failures: number;
  /** Targets measured (never met while `failures` is not 0: the figures are not what they say). */
  targets?: CustomTarget[];
  /** Lines printed under the scenario's figures (a table per kind of request). */
  report?: string[];
  /** Structured figures kept in the results file and not printed (per kind of request). */
  details?: Record<string, unknown>;
}

/**
 * A scenario the request/baseline pairs cannot express (writes that consume their data, WebSocket fan-out): it
 * drives the API itself and reports its own figures, without a baseline.
 */
export interface CustomScenario {
  name: string;
  seed: SeedStep;
  /** Seed steps its data also comes from (run before `seed`, each step once per run, in this order). */
  needs?: SeedStep[];
  /** Processes besides the API server (a second API process, a worker, an API on a database of its own). */
  servers?: ServerSpec[];
  run(ctx: CustomRunContext): Promise<CustomFigures>;
}
