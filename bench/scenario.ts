/** What a benchmark scenario is; the list of them is bench/scenarios.ts, each scenario in its own file. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import type { SeedStep } from './seed.js';

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
