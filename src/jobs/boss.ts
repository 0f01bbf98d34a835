import type { MikroORM } from '@mikro-orm/postgresql';
import { PgBoss } from 'pg-boss';
import { runAuthCleanup } from './auth-cleanup.job.js';
import { QUEUES, QUEUE_NAMES } from './queues.js';

export const BOSS_SCHEMA = 'pgboss';

export interface QueueStatsView {
  queue: string;
  queued: number;
  active: number;
  failed: number;
  deferred: number;
  total: number;
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
  ) {
    this.boss = new PgBoss({ connectionString, schema: BOSS_SCHEMA, max: 4 });
    // pg-boss reports transient errors as events; without a listener Node would crash on them.
    this.boss.on('error', (error) => console.error('[jobs]', error.message));
  }

  async start() {
    await this.boss.start();
    for (const name of QUEUE_NAMES) await this.boss.createQueue(name);
    this.started = true;
    if (!this.runWorkers) return;
    await this.boss.work(QUEUES.authCleanup.name, async () => {
      await runAuthCleanup(this.orm.em.fork());
    });
    await this.boss.schedule(QUEUES.authCleanup.name, QUEUES.authCleanup.cron, {});
  }

  async stop() {
    if (!this.started) return;
    this.started = false;
    await this.boss.stop({ graceful: true, timeout: 10_000 });
  }

  isRunning() {
    return this.started;
  }

  async stats(): Promise<QueueStatsView[]> {
    const out: QueueStatsView[] = [];
    for (const queue of QUEUE_NAMES) {
      const [s] = await this.boss.getQueueStats(queue);
      out.push({
        queue,
        queued: s?.queuedCount ?? 0,
        active: s?.activeCount ?? 0,
        failed: s?.failedCount ?? 0,
        deferred: s?.deferredCount ?? 0,
        total: s?.totalCount ?? 0,
      });
    }
    return out;
  }

  async failed(queue: string, limit: number): Promise<FailedJobView[]> {
    const rows = await this.orm.em.getConnection().execute<
      { id: string; name: string; data: unknown; output: unknown; retry_count: number; created_on: Date; completed_on: Date | null }[]
    >(
      `select id, name, data, output, retry_count, created_on, completed_on from ${BOSS_SCHEMA}.job
        where name = ? and state = 'failed' order by completed_on desc nulls last limit ?`,
      [queue, limit],
    );
    return rows.map((r) => ({
      id: r.id,
      queue: r.name,
      data: r.data,
      output: r.output,
      retryCount: r.retry_count,
      createdAtUtc: new Date(r.created_on).toISOString(),
      failedAtUtc: r.completed_on ? new Date(r.completed_on).toISOString() : null,
    }));
  }

  async retry(queue: string, jobId: string) {
    const found = await this.orm.em.getConnection().execute<{ id: string }[]>(
      `select id from ${BOSS_SCHEMA}.job where name = ? and id = ? and state = 'failed'`,
      [queue, jobId],
    );
    if (found.length === 0) return false;
    await this.boss.retry(queue, jobId);
    return true;
  }
}
