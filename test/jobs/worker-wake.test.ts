import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { authCleanupJob } from '../../src/routers/auth/auth-cleanup.job.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * A job sent by a process that runs the queue's worker wakes that worker (src/jobs/boss.ts `send`): it fetches the
 * job at once instead of after its polling interval (2 s by default, 0.5 s for the outbox). A process without
 * workers (ROLE=api) only sends.
 */
let worker: TestApp;
let api: TestApp;
beforeAll(async () => {
  [worker, api] = await Promise.all([createTestApp(), createTestApp({ ROLE: 'api' })]);
});
afterAll(async () => {
  await worker?.close();
  await api?.close();
});

const stateOf = async (t: TestApp, id: string) => (await t.sql<{ state: string }>('select state::text as state from pgboss.job where id = $1', [id]))[0]?.state;

describe('sending a job', () => {
  it("wakes this process's worker of the queue, which runs it", async () => {
    const wake = vi.spyOn(worker.deps.jobs.boss, 'notifyWorker');
    const id = await worker.deps.jobs.send(authCleanupJob, {});
    expect(id).toBeTruthy();
    expect(wake).toHaveBeenCalledTimes(1);
    expect(wake.mock.calls[0]![0]).toEqual(expect.any(String));
    await expect.poll(() => stateOf(worker, id!), { timeout: 15_000 }).toBe('completed');
    wake.mockRestore();
  });

  it('wakes nothing in a process without workers: the job waits for a worker process', async () => {
    const wake = vi.spyOn(api.deps.jobs.boss, 'notifyWorker');
    const id = await api.deps.jobs.send(authCleanupJob, {});
    expect(wake).not.toHaveBeenCalled();
    expect(await stateOf(api, id!)).toBe('created');
    wake.mockRestore();
  });
});
