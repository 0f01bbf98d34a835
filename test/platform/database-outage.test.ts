import type { EntityManager } from '@mikro-orm/postgresql';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type EmbeddedDatabase, randomPassword, startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateDatabase } from '../../src/db/orm.js';
import { APP_ROLE, ensureAppRole } from '../../src/db/roles.js';
import { newId } from '../../src/platform/ids.js';
import { signUserToken } from '../../src/platform/jwt.js';
import { enqueueNotification } from '../../src/routers/notifications/outbox.js';
import { testSession } from '../factories/index.js';
import { freePort, until } from './server-process.js';

/**
 * The database goes away under a running API and comes back (point 3 of the production-readiness issue). This file
 * runs its OWN embedded PostgreSQL (the shared one of the run must not be stopped), builds the app on it with the
 * job workers, keeps requests flowing while the server is stopped and started again, and checks that
 * - every answer meanwhile is 200 or a 503 DATABASE_UNAVAILABLE problem with Retry-After, never a 500, and none
 *   hangs past a bound;
 * - /ready answers 503 and /health 200 during the outage;
 * - afterwards the API, the LISTEN connection and the job workers recover by themselves, and outbox rows written
 *   before the outage are all delivered.
 */

/** The longest any request may take while the database is down (the pool's connect timeout is 10 s). */
const REQUEST_BOUND_MS = 12_000;

let base: string;
let db: EmbeddedDatabase;
let built: BuiltApp;
let admin: pg.Pool;
let headers: { authorization: string };
let userId: string;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'territory-outage-'));
  db = await startEmbeddedPostgres({ dir: join(base, 'pg'), port: await freePort(), persistent: true, fast: true });
  await db.createDatabase('territory');
  const ownerUrl = db.url('territory');
  await migrateDatabase(ownerUrl);
  const password = randomPassword();
  await ensureAppRole(ownerUrl, APP_ROLE, password);
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: join(base, 'data'),
    RateLimiting__PermitLimit: '100000',
    RateLimiting__FeedRead__PermitLimit: '100000',
    RateLimiting__Write__PermitLimit: '100000',
  });
  built = await buildApp(config, db.urlAs('territory', APP_ROLE, password));
  // Superuser connections of the test itself: their own pool, which also loses its connections in the outage.
  admin = new pg.Pool({ connectionString: ownerUrl, max: 2 });
  admin.on('error', () => {});
  userId = newId();
  await admin.query(
    `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
     values ($1::uuid, now(), 'Outage tester', 'test', $1::text, 'Unverified')`,
    [userId],
  );
  const { token } = await signUserToken(config.jwt, testSession(userId));
  headers = { authorization: `Bearer ${token}` };
}, 120_000);

afterAll(async () => {
  await built?.close();
  await admin?.end().catch(() => {});
  await db?.stop();
  if (db) rmSync(db.dataDir, { recursive: true, force: true });
  rmSync(base, { recursive: true, force: true });
});

interface Answer {
  url: string;
  status: number;
  ms: number;
  code?: string;
  retryAfter?: string;
  problemCode?: string;
}

const CALLS = [
  { url: '/api/v1/users/me', authed: true },
  { url: '/api/v1/territories?take=5', authed: false },
  { url: `/trpc/users.me`, authed: true },
];

async function call(index: number): Promise<Answer> {
  const { url, authed } = CALLS[index % CALLS.length]!;
  const started = Date.now();
  const res = await built.app.inject({ method: 'GET', url, headers: authed ? headers : {} });
  const body = res.body ? (JSON.parse(res.body) as { code?: string; error?: { data?: { problemCode?: string } } }) : {};
  return {
    url,
    status: res.statusCode,
    ms: Date.now() - started,
    code: body.code,
    problemCode: body.error?.data?.problemCode,
    retryAfter: res.headers['retry-after'] as string | undefined,
  };
}

/** `workers` loops of requests until `stop()`; every answer is kept. */
function load(workers: number) {
  const answers: Answer[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let i = w; running; i += workers) answers.push(await call(i));
  });
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(loops);
      return answers;
    },
  };
}

async function pendingOutbox(sourceKeys: string[]) {
  const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from outbox_message where source_key = any($1) and processed_at_utc is null`, [
    sourceKeys,
  ]);
  return rows[0]!.n;
}

async function delivered(sourceKeys: string[]) {
  const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from notification where user_id = $1 and source_key = any($2)`, [
    userId,
    sourceKeys,
  ]);
  return rows[0]!.n;
}

/** Writes an outbox row through the app (its flush NOTIFYs the dispatcher), as a domain's transaction does. */
async function notify(key: string) {
  const em = built.deps.orm.em.fork() as EntityManager;
  enqueueNotification(em, {
    type: 'JOIN_REQUEST_RECEIVED',
    recipientUserIds: [userId],
    title: 'Outage test',
    body: 'Delivered despite the outage.',
    data: {},
    sourceKey: key,
  });
  await em.flush();
}

describe('a database outage under load', () => {
  it('answers 503 DATABASE_UNAVAILABLE with Retry-After meanwhile, and the API, LISTEN and job workers recover by themselves', async () => {
    const traffic = load(8);
    try {
      await outageUnder(traffic);
    } finally {
      await traffic.stop();
    }
  });
});

async function outageUnder(traffic: ReturnType<typeof load>) {
  {
    await until('answers before the outage', async () => traffic.answers.length >= 30);
    expect((await built.app.inject({ url: '/ready' })).statusCode).toBe(200);

    // Outbox rows committed without a NOTIFY right before the outage: only a dispatch after the recovery (the
    // reconnected LISTEN connection's nudge, or the schedule) delivers them.
    const before = Array.from({ length: 5 }, (_, i) => `outage-test:before:${i}`);
    for (const key of before) {
      await admin.query(
        `insert into outbox_message (id, created_at_utc, type, recipient_user_ids, title, body, data, source_key)
         values ($1, now(), 'JOIN_REQUEST_RECEIVED', $2::text[], 'Outage test', 'Written before the outage.', '{}', $3)`,
        [newId(), [userId], key],
      );
    }

    await db.stop();
    const during = await until('a 503 during the outage', async () => {
      const answer = await call(0);
      return answer.status === 503 ? answer : null;
    });
    expect(during).toMatchObject({ code: 'DATABASE_UNAVAILABLE', retryAfter: '5' });
    const problemBody = await built.app.inject({ method: 'GET', url: '/api/v1/territories?take=5' });
    expect(problemBody.statusCode).toBe(503);
    expect(problemBody.headers['content-type']).toContain('application/problem+json');
    expect(problemBody.json()).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE', title: 'Service Unavailable' });
    const trpc = await built.app.inject({ method: 'GET', url: '/trpc/users.me', headers });
    expect(trpc.statusCode).toBe(503);
    expect(trpc.headers['retry-after']).toBe('5');
    expect(trpc.json()).toMatchObject({ error: { data: { problemCode: 'DATABASE_UNAVAILABLE', httpStatus: 503 } } });
    const ready = await built.app.inject({ url: '/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ checks: { database: 'down' } });
    const health = await built.app.inject({ url: '/health' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ status: 'ok' });
    // Requests keep failing fast for a while (the load loops keep going).
    const outageAnswers = traffic.answers.length;
    await until('answers during the outage', async () => traffic.answers.length >= outageAnswers + 30);

    await db.start();
    await until('/ready after the outage', async () => (await built.app.inject({ url: '/ready' })).statusCode === 200);
    await until('successful requests after the outage', async () => (await call(0)).status === 200 && (await call(1)).status === 200);
    await until('the LISTEN connection back', async () => built.deps.realtime.isConnected());

    // Written before the outage: delivered by the recovered workers, none lost.
    await until(
      'the outbox rows of before the outage delivered',
      async () => (await pendingOutbox(before)) === 0 && (await delivered(before)) === before.length,
    );
    // Written after it: the NOTIFY reaches the recovered LISTEN connection, which starts a dispatch job at once.
    const after = ['outage-test:after:0'];
    await notify(after[0]!);
    await until('the outbox row of after the outage delivered', async () => (await delivered(after)) === 1, undefined, 15_000);

    const answers = await traffic.stop();
    const unexpected = answers.filter((a) => a.status !== 200 && a.status !== 503);
    expect(unexpected).toEqual([]);
    const unavailable = answers.filter((a) => a.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const a of unavailable) {
      expect(a.retryAfter).toBe('5');
      expect(a.code ?? a.problemCode).toBe('DATABASE_UNAVAILABLE');
    }
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(REQUEST_BOUND_MS);
    expect(answers.at(-1)?.status).toBe(200);
  }
}
