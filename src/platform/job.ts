/**
 * A background job, declared beside its domain in `src/routers/<domain>/<name>.job.ts`: its queue, the schema of
 * its payload (parsed before the handler runs; a malformed payload fails the job, it never reaches the handler),
 * an optional cron schedule, and the handler. `src/jobs/registry.ts` lists them; `src/jobs/boss.ts` registers that list.
 * Handlers are idempotent: pg-boss may run a job twice.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { z } from 'zod';
import type { AppConfig } from '../config.js';
import type { Clock } from './service-context.js';
import type { Storage } from './storage.js';

/** What a handler gets: a fresh EntityManager fork per job, and the process's shared pieces. */
export interface JobContext {
  em: EntityManager;
  storage: Storage;
  clock: Clock;
  /** The process configuration (jobs that reach a provider read it). Absent in contexts tests build by hand. */
  config?: AppConfig;
  /** Sends a follow-up job (e.g. a status check right after a run). Absent in contexts tests build by hand. */
  send?: (job: JobDefinition, payload: object) => Promise<string | null>;
}

export interface JobDefinition<P extends z.ZodType = z.ZodType> {
  /** The pg-boss queue name (also shown to operators: `GET /api/v1/admin/jobs`, `npm run jobs`). */
  queue: string;
  payload: P;
  /** Cron expression (UTC) of the recurring run; none for jobs that are only sent. */
  schedule?: string;
  /** How often an idle worker polls (pg-boss default 2 s): lower for jobs that someone waits on. */
  pollingIntervalSeconds?: number;
  handle(ctx: JobContext, payload: z.output<P>): Promise<void>;
}

export const defineJob = <P extends z.ZodType>(job: JobDefinition<P>): JobDefinition<P> => job;
