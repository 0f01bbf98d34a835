// npm run jobs -> live counts per pg-boss queue (the table GET /api/v1/admin/jobs answers), plus recent failures.
// Connects to DATABASE_URL or, when unset, the embedded dev database that `npm start` runs.
import { join } from 'node:path';
import pg from 'pg';
import { embeddedSuperuserUrl } from '../src/db/embedded.js';
import { BOSS_SCHEMA, readFailedJobs, readQueueStats, type SqlRunner } from '../src/jobs/boss.js';

// The embedded cluster's password is generated at its first start and kept beside its data directory.
const url =
  process.env.DATABASE_URL ?? embeddedSuperuserUrl(join(process.env.DATA_DIR || '.data', 'pg'), Number(process.env.EMBEDDED_PG_PORT || '54329'), 'territory');

/** The URL without its password, for messages. */
function shown(connectionString: string) {
  try {
    const u = new URL(connectionString);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

function table(rows: Record<string, string | number>[]) {
  const first = rows[0];
  if (!first) return '';
  const columns = Object.keys(first);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (values: string[]) => values.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(columns.map((c) => String(r[c]))))].join('\n');
}

async function main() {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    console.error(`Cannot reach PostgreSQL at ${shown(url)}: ${(error as Error).message}`);
    console.error(
      process.env.DATABASE_URL
        ? 'Check DATABASE_URL and that the server is running.'
        : 'DATABASE_URL is not set, so the embedded dev database was tried: start the app first (npm start), or set DATABASE_URL.',
    );
    return 1;
  }
  try {
    const schema = await client.query('select 1 from information_schema.tables where table_schema = $1 and table_name = $2', [BOSS_SCHEMA, 'job']);
    if (schema.rowCount === 0) {
      console.error(`No pg-boss tables in ${shown(url)} (schema "${BOSS_SCHEMA}"): start the app once so the job runner creates them.`);
      return 1;
    }
    const run: SqlRunner = (text, values) => client.query(text, values as unknown[]);
    const stats = await readQueueStats(run);
    console.log(`pg-boss queues at ${shown(url)} (${new Date().toISOString()})\n`);
    console.log(table(stats.map((s) => ({ queue: s.queue, queued: s.queued, active: s.active, failed: s.failed, deferred: s.deferred, total: s.total }))));
    for (const s of stats.filter((q) => q.failed > 0)) {
      const { items } = await readFailedJobs(run, s.queue, 0, 5);
      console.log(`\nlatest failed in ${s.queue} (retry: POST /api/v1/admin/jobs/${s.queue}/{jobId}/retry):`);
      for (const job of items) console.log(`  ${job.id}  ${job.failedAtUtc ?? '-'}  ${JSON.stringify(job.output).slice(0, 120)}`);
    }
    return 0;
  } finally {
    await client.end();
  }
}

process.exit(await main());
