import type { MikroORM } from '@mikro-orm/postgresql';
import type { AppConfig } from '../config.js';
import { PgBoss } from 'pg-boss';
import { CONNECT_TIMEOUT_MS } from '../db/orm.js';
import { clock } from '../platform/clock.js';
import type { JobDefinition } from '../platform/job.js';
import type { Storage } from '../platform/storage.js';
import { JOBS, QUEUE_NAMES } from './registry.js';

export const BOSS_SCHEMA = 'pgboss';

export interface QueueStatsView {
  queue: string;
  queued: number;
  active: number;
  failed: number;
  deferred: number;
  total: number;
}

/** Runs a query with `$n` parameters: pg-boss's pool in the app, a plain `pg` client in `npm run jobs`. */
export type SqlRunner = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

/**
 * Live counts per queue, straight from the job table with pg-boss's own definitions (queued = not yet active,
 * deferred = queued with a future start). `boss.getQueueStats` serves a cache that may be a minute old even when
 * forced, and an operator checking a retry needs the current numbers.
 */
export async function readQueueStats(run: SqlRunner, queues: readonly string[] = QUEUE_NAMES): Promise<QueueStatsView[]> {
  const { rows } = await run(
    `select name,
            (count(*) filter (where state < 'active'))::int as queued,
            (count(*) filter (where state = 'active'))::int as active,
            (count(*) filter (where state = 'failed'))::int as failed,
            (count(*) filter (where state < 'active' and start_after > now()))::int as deferred,
            count(*)::int as total
       from ${BOSS_SCHEMA}.job where name = any($1::text[]) group by name`,
    [queues],
  );
  const byName = new Map((rows as (Omit<QueueStatsView, 'queue'> & { name: string })[]).map((r) => [r.name, r]));
  return queues.map((queue) => {
    const r = byName.get(queue);
    return { queue, queued: r?.queued ?? 0, active: r?.active ?? 0, failed: r?.failed ?? 0, deferred: r?.deferred ?? 0, total: r?.total ?? 0 };
  });
}

/** Failed jobs of one queue, most recently failed first, with the total for paging. */
export async function readFailedJobs(run: SqlRunner, queue: string, offset: number, limit: number): Promise<{ items: FailedJobView[]; total: number }> {
  const { rows } = await run(
    `select id, name, data, output, retry_count, created_on, completed_on, count(*) over () as total
       from ${BOSS_SCHEMA}.job where name = $1 and state = 'failed'
      order by completed_on desc nulls last, id limit $2 offset $3`,
    [queue, limit, offset],
  );
  const typed = rows as {
    id: string;
    name: string;
    data: unknown;
    output: unknown;
    retry_count: number;
    created_on: Date;
    completed_on: Date | null;
    total: string;
  }[];
  let total = Number(typed[0]?.total ?? 0);
  if (typed.length === 0 && offset > 0) {
    const count = await run(`select count(*)::int as n from ${BOSS_SCHEMA}.job where name = $1 and state = 'failed'`, [queue]);
    total = (count.rows[0] as { n: number } | undefined)?.n ?? 0;
  }
  const items = typed.map((r) => ({
    id: r.id,
    queue: r.name,
    data: r.data ?? null,
    output: r.output ?? null,
    retryCount: r.retry_count,
    createdAtUtc: new Date(r.created_on).toISOString(),
    failedAtUtc: r.completed_on ? new Date(r.completed_on).toISOString() : null,
  }));
  return { items, total };
}

export interface FailedJobView {
  id: string;
  queue: string;
  data: unknown;
  output: unknown;
  retryCount: number;
  createdAtUtc: string;
  failedAtUtc: string | null;
}

/**
 * pg-boss in its own schema. The API process sends jobs; workers (ROLE=all or worker) also run handlers and
 * schedules. Handlers are idempotent: a job may run twice.
 */
export class JobRunner {
  readonly boss: PgBoss;
  private started = false;

  constructor(
    connectionString: string,
    private readonly orm: MikroORM,
    private readonly runWorkers: boolean,
    private readonly storage: Storage,
    private readonly config?: AppConfig,
  ) {
    // A bounded wait for a connection: while the database is down, sends fail fast and workers keep polling; the
    // pool makes new connections once it is back, so workers and schedules resume by themselves.
    this.boss = new PgBoss({ connectionString, schema: BOSS_SCHEMA, max: 4, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    // pg-boss reports transient errors as events; without a listener Node would crash on them. During an outage
    // every poll fails: one line per distinct message per minute, not a flood.
    this.boss.on('error', (error) => this.reportError(error));
  }

  private readonly reported = new Map<string, number>();
  private reportError(error: Error) {
    const now = Date.now();
    const key = error.message;
    if ((this.reported.get(key) ?? 0) > now - 60_000) return;
    if (this.reported.size > 100) this.reported.clear();
    this.reported.set(key, now);
    console.error('[jobs]', error.message);
  }

  async start() {
    await this.boss.start();
    for (const name of QUEUE_NAMES) await this.boss.createQueue(name);
    this.started = true;
    if (!this.runWorkers) return;
    for (const job of JOBS) await this.register(job);
  }

  /** This process's worker of each queue (pg-boss's worker id), when it runs workers. */
  private readonly workerIds = new Map<string, string>();

  /** One worker per queue (batch size 1: a thrown job fails alone) and its schedule, from the job's definition. */
  private async register(job: JobDefinition) {
    const options = job.pollingIntervalSeconds === undefined ? {} : { pollingIntervalSeconds: job.pollingIntervalSeconds };
    const workerId = await this.boss.work(job.queue, options, async ([sent]) => {
      if (!sent) return;
      // A payload that does not match its schema fails the job here (visible to operators), before any work.
      const payload = job.payload.parse(sent.data ?? {});
      await job.handle({ em: this.orm.em.fork(), storage: this.storage, clock, config: this.config, send: (next, data) => this.send(next, data) }, payload);
    });
    this.workerIds.set(job.queue, workerId);
    if (job.schedule) await this.boss.schedule(job.queue, job.schedule, {});
  }

  /**
   * Sends a job of a registered queue; the payload is checked against the queue's schema first. When this process
   * runs the queue's worker, the worker fetches at once instead of after its polling interval (the job is committed:
   * pg-boss sends on its own pool), so e.g. the outbox's dispatch starts as soon as a commit announces new rows.
   */
  async send<P extends JobDefinition>(job: P, payload: Parameters<P['payload']['parse']>[0]) {
    const id = await this.boss.send(job.queue, job.payload.parse(payload) as object);
    const workerId = this.workerIds.get(job.queue);
    if (workerId) this.boss.notifyWorker(workerId);
    return id;
  }

  async stop() {
    if (!this.started) return;
    this.started = false;
    this.workerIds.clear();
    await this.boss.stop({ graceful: true, timeout: 10_000 });
  }

  isRunning() {
    return this.started;
  }

  /** Runs SQL on pg-boss's own pool (the job tables live in its schema). */
  private readonly sql: SqlRunner = (text, values) => this.boss.getDb().executeSql(text, values);

  async stats(): Promise<QueueStatsView[]> {
    return readQueueStats(this.sql);
  }

  async failed(queue: string, offset: number, limit: number) {
    return readFailedJobs(this.sql, queue, offset, limit);
  }

  /** Puts a failed job back in the queue; false when no failed job of that queue has this id. */
  async retry(queue: string, jobId: string) {
    // The typings declare an empty CommandResponse; at run time it carries the `affected` count.
    const result = (await this.boss.retry(queue, jobId)) as { affected?: number };
    return (result.affected ?? 0) > 0;
  }
}
