/** What a benchmark scenario is; the list of them is bench/scenarios.ts, each scenario in its own file. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import type { BenchSize, SeedStep } from './seed.js';

export interface RequestPair {
  /** Path and query of the API call. */
  api: string;
  /** Path and query of the same call on the baseline server. */
  baseline: string;
}

export interface RequestContext {
  db: pg.Client;
  /** Seeded random numbers in [0, 1): every run asks the same requests. */
  random: () => number;
  /** How many distinct requests to rotate through. */
  count: number;
}

export interface Scenario {
  name: string;
  seed: SeedStep;
  /** API calls carry the bench user's bearer token. */
  authenticated: boolean;
  requests(ctx: RequestContext): Promise<RequestPair[]>;
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
  log(message: string): void;
}

/** A custom scenario's figures: named numbers (ms, per-second rates, counts) and how many operations failed. */
export interface CustomFigures {
  figures: Record<string, number>;
  /** Failed operations (non-2xx answers, missing deliveries): a correct run has none. */
  failures: number;
}

/**
 * A scenario the request/baseline pairs cannot express (writes that consume their data, WebSocket fan-out): it
 * drives the API itself and reports its own figures, without a baseline.
 */
export interface CustomScenario {
  name: string;
  seed: SeedStep;
  run(ctx: CustomRunContext): Promise<CustomFigures>;
}
