/**
 * The journeys example (client-sdk/examples/journeys-rest.ts) run as a user would run it from the repository, against
 * a live server with the demo data: it obtains a client token through the SDK's typed REST client (registering a
 * client as the demo admin, or with the CLIENT_ID and CLIENT_SECRET it is given) and renders two journeys, the
 * territories near Vila Madalena and Vila Madalena's feed for the demo visitor.
 */
import { spawn } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../../src/db/seed/demo.js';
import { countRows, newAdmin } from '../../test/factories/index.js';
import { newPost } from '../../test/factories/content.js';
import { createTestApp, type TestApp } from '../../test/setup/test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await createTestApp();
  await seedDemoData(t.deps.orm.em.fork(), t.deps.config);
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
});

/** Runs the example to its end with the given settings: exit code and output. */
function runExample(env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', join('client-sdk', 'examples', 'journeys-rest.ts')], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}`, API_URL: baseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill();
      reject(new Error(`the example did not finish within 20 s: ${stdout}${stderr}`));
    }, 20_000);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('examples/journeys-rest.ts', () => {
  let territoryId: string;

  beforeAll(async () => {
    const [territory] = await t.sql<{ id: string }>(`select id from territory where name = 'Vila Madalena'`);
    const [resident] = await t.sql<{ id: string }>(`select id from app_user where auth_provider = 'demo' and external_id = 'resident'`);
    territoryId = territory!.id;
    await newPost(t, { territoryId, authorUserId: resident!.id, title: 'Street fair on Saturday' });
  });

  it('registers a client as the demo admin, gets a client token and renders the two journeys', async () => {
    const clientsBefore = await countRows(t, 'client_application');
    const { code, stdout, stderr } = await runExample();

    expect(stderr).toBe('');
    expect(code).toBe(0);
    const [registered] = await t.sql<{ client_id: string; name: string }>(
      `select client_id, name from client_application order by created_at_utc desc limit 1`,
    );
    expect(await countRows(t, 'client_application')).toBe(clientsBefore + 1);
    expect(registered!.name).toBe('journeys-rest example');
    expect(stdout).toContain(`registered client ${registered!.client_id} (journeys:read journeys:write)`);
    expect(stdout).toContain('client token: Bearer, scope "journeys:read", expires in 3600 s');
    // Nearest first: the point is Vila Madalena's centre.
    expect(stdout).toMatch(/near -23\.5535, -46\.6915: Vila Madalena \(0 km\), Pinheiros \([\d.]+ km\)/);
    expect(stdout).toContain('feed of Vila Madalena (X-Cache: MISS), posts: 1');
    expect(stdout).toContain('- Street fair on Saturday by Demo Resident: 0 likes, 0 comments, 0 media');
  });

  it('uses the client it is given; a repeat within 60 s is served from the cache', async () => {
    const admin = await newAdmin(t);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/admin/clients',
      headers: admin.headers,
      payload: { name: 'Given client', scopes: ['journeys:read'] },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { clientId, clientSecret } = res.json() as { clientId: string; clientSecret: string };
    const clientsBefore = await countRows(t, 'client_application');

    const first = await runExample({ CLIENT_ID: clientId, CLIENT_SECRET: clientSecret });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).not.toContain('registered client');
    expect(first.stdout).toContain('feed of Vila Madalena (X-Cache: MISS), posts: 1');

    // Same client, same user, same query: the journeys cache answers.
    const second = await runExample({ CLIENT_ID: clientId, CLIENT_SECRET: clientSecret });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('feed of Vila Madalena (X-Cache: HIT), posts: 1');
    expect(await countRows(t, 'client_application')).toBe(clientsBefore);
  });

  it('fails with the token endpoint answer when the secret is wrong', async () => {
    const { code, stdout, stderr } = await runExample({ CLIENT_ID: 'cli_unknown', CLIENT_SECRET: 'wrong' });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('token request failed: 401 {"error":"invalid_client"');
  });
});
