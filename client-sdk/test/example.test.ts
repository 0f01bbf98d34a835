import { execFile } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../../src/db/seed/demo.js';
import { createTestApp, type TestApp } from '../../test/setup/test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await createTestApp();
  await seedDemoData(t.deps.orm.em.fork(), t.deps.config);
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => t.close());

describe('client-sdk/examples/list-territories.ts', () => {
  it('logs in as the demo visitor and lists the seeded territories over tRPC and REST', async () => {
    const seeded = await t.sql<{ name: string }>(`select name from territory where status = 'ACTIVE' order by name`);
    expect(seeded.length).toBeGreaterThan(0);

    // The example runs as users run it: its own Node process, against a real listening server.
    const { stdout } = await run('node', ['--import', 'tsx', 'client-sdk/examples/list-territories.ts'], {
      cwd: ROOT,
      env: { ...process.env, API_URL: baseUrl, PATH: `${join(ROOT, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` },
      timeout: 60_000,
    });

    expect(stdout).toContain('logged in as Demo Visitor');
    const [trpcPart, restPart] = stdout.split('REST GET /api/v1/territories');
    expect(trpcPart).toContain(`tRPC territories.list: ${seeded.length} territories`);
    expect(restPart).toContain(`: ${seeded.length} territories`);
    for (const { name } of seeded) {
      expect(trpcPart).toContain(`- ${name} (`);
      expect(restPart).toContain(`- ${name} (`);
    }
  });
});
