import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authCleanupJob } from '../../src/routers/auth/auth-cleanup.job.js';
import { newAdmin, newUser, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let admin: TestUser;
// ROLE=api: pg-boss runs (send, stats, retry) but no worker picks the test's jobs up.
beforeAll(async () => {
  t = await createTestApp({ ROLE: 'api' });
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const QUEUE = authCleanupJob.queue;

/** A real pg-boss job made to fail (no retries left). */
async function failedJob(message = 'boom') {
  const boss = t.deps.jobs.boss;
  const id = await boss.send(QUEUE, { test: message }, { retryLimit: 0 });
  expect(id).toBeTruthy();
  await boss.fail(QUEUE, id!, { message });
  return id!;
}

const jobState = async (id: string) => (await t.sql<{ state: string }>('select state::text as state from pgboss.job where id = $1', [id]))[0]?.state;

type Stats = { queue: string; queued: number; active: number; failed: number; deferred: number; total: number };
async function statsOf(queue: string) {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/admin/jobs', headers: admin.headers });
  expect(res.statusCode).toBe(200);
  return (res.json() as Stats[]).find((s) => s.queue === queue)!;
}

describe('GET /api/v1/admin/jobs', () => {
  it('reports live counts per queue', async () => {
    const before = await statsOf(QUEUE);
    expect(before).toEqual({
      queue: QUEUE,
      queued: expect.any(Number),
      active: expect.any(Number),
      failed: expect.any(Number),
      deferred: expect.any(Number),
      total: expect.any(Number),
    });

    await t.deps.jobs.boss.send(QUEUE, {}, { startAfter: 3600 });
    await failedJob();
    const after = await statsOf(QUEUE);
    expect(after.failed).toBe(before.failed + 1);
    expect(after.deferred).toBe(before.deferred + 1);
    expect(after.queued).toBe(before.queued + 1);
    expect(after.total).toBe(before.total + 2);
  });

  it('is 401 without a token and 403 for a non-admin', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/admin/jobs' })).statusCode).toBe(401);
    const user = await newUser(t);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/admin/jobs', headers: user.headers })).statusCode).toBe(403);
  });
});

describe('GET /api/v1/admin/jobs/{queue}/failed', () => {
  it('lists failed jobs, most recent first, paged', async () => {
    const first = await failedJob('first');
    const second = await failedJob('second');
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/admin/jobs/${QUEUE}/failed?pageSize=1`, headers: admin.headers });
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(page).toMatchObject({ pageNumber: 1, pageSize: 1, hasNextPage: true });
    expect(page.totalCount).toBeGreaterThanOrEqual(2);
    expect(page.items[0]).toEqual({
      id: second,
      queue: QUEUE,
      data: { test: 'second' },
      output: { message: 'second' },
      retryCount: 0,
      createdAtUtc: expect.any(String),
      failedAtUtc: expect.any(String),
    });
    const all = await t.app.inject({ method: 'GET', url: `/api/v1/admin/jobs/${QUEUE}/failed?pageSize=100`, headers: admin.headers });
    expect(all.json().items.map((j: { id: string }) => j.id)).toEqual(expect.arrayContaining([first, second]));
    const beyond = await t.app.inject({ method: 'GET', url: `/api/v1/admin/jobs/${QUEUE}/failed?pageNumber=50`, headers: admin.headers });
    expect(beyond.json()).toMatchObject({ items: [], totalCount: page.totalCount });
  });

  it('is 404 for an unknown queue and 400 for bad paging', async () => {
    const unknown = await t.app.inject({ method: 'GET', url: '/api/v1/admin/jobs/no-such-queue/failed', headers: admin.headers });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND' });
    const bad = await t.app.inject({ method: 'GET', url: `/api/v1/admin/jobs/${QUEUE}/failed?pageSize=101`, headers: admin.headers });
    expect(bad.statusCode).toBe(400);
  });

  it('is 401 without a token and 403 for a non-admin', async () => {
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/admin/jobs/${QUEUE}/failed` })).statusCode).toBe(401);
    const user = await newUser(t);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/admin/jobs/${QUEUE}/failed`, headers: user.headers })).statusCode).toBe(403);
  });
});

describe('POST /api/v1/admin/jobs/{queue}/{jobId}/retry', () => {
  it('puts a failed job back in its queue; a second retry is 404 (no longer failed)', async () => {
    const id = await failedJob();
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/admin/jobs/${QUEUE}/${id}/retry`, headers: admin.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ queue: QUEUE, jobId: id, state: 'retry' });
    expect(await jobState(id)).toBe('retry');
    const failed = await t.app.inject({ method: 'GET', url: `/api/v1/admin/jobs/${QUEUE}/failed?pageSize=100`, headers: admin.headers });
    expect(failed.json().items.map((j: { id: string }) => j.id)).not.toContain(id);

    const again = await t.app.inject({ method: 'POST', url: `/api/v1/admin/jobs/${QUEUE}/${id}/retry`, headers: admin.headers });
    expect(again.statusCode).toBe(404);
  });

  it('is 404 for an unknown queue or job and for a job that is not failed; 400 for a malformed id', async () => {
    const id = await failedJob();
    const unknownQueue = await t.app.inject({ method: 'POST', url: `/api/v1/admin/jobs/no-such-queue/${id}/retry`, headers: admin.headers });
    expect(unknownQueue.statusCode).toBe(404);
    const unknownJob = await t.app.inject({ method: 'POST', url: `/api/v1/admin/jobs/${QUEUE}/${UNKNOWN_ID}/retry`, headers: admin.headers });
    expect(unknownJob.statusCode).toBe(404);
    const queued = await t.deps.jobs.boss.send(QUEUE, {}, { startAfter: 3600 });
    const notFailed = await t.app.inject({ method: 'POST', url: `/api/v1/admin/jobs/${QUEUE}/${queued}/retry`, headers: admin.headers });
    expect(notFailed.statusCode).toBe(404);
    expect(await jobState(queued!)).toBe('created');
    const malformed = await t.app.inject({ method: 'POST', url: `/api/v1/admin/jobs/${QUEUE}/42/retry`, headers: admin.headers });
    expect(malformed.statusCode).toBe(400);
    expect(await jobState(id)).toBe('failed');
  });

  it('is 401 without a token and 403 for a non-admin, leaving the job failed', async () => {
    const id = await failedJob();
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/admin/jobs/${QUEUE}/${id}/retry` })).statusCode).toBe(401);
    const user = await newUser(t);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/admin/jobs/${QUEUE}/${id}/retry`, headers: user.headers })).statusCode).toBe(403);
    expect(await jobState(id)).toBe('failed');
  });
});

describe('with the job runner disabled (JOBS__ENABLED=false)', () => {
  it('answers 409 JOBS_DISABLED instead of failing', async () => {
    const off = await createTestApp({ JOBS__ENABLED: 'false' });
    try {
      const offAdmin = await newAdmin(off);
      for (const [method, url] of [
        ['GET', '/api/v1/admin/jobs'],
        ['GET', `/api/v1/admin/jobs/${QUEUE}/failed`],
        ['POST', `/api/v1/admin/jobs/${QUEUE}/${UNKNOWN_ID}/retry`],
      ] as const) {
        const res = await off.app.inject({ method, url, headers: offAdmin.headers });
        expect(res.statusCode, url).toBe(409);
        expect(res.json()).toMatchObject({ code: 'JOBS_DISABLED' });
      }
    } finally {
      await off.close();
    }
  });
});
