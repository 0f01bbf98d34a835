/**
 * The chat example (client-sdk/examples/chat-messages.ts) run as a user would run it from the repository, against a
 * live server with the demo data: it logs in as the demo visitor, finds Vila Madalena's public channel, subscribes
 * with `client.chat.onMessage.subscribe`, and prints the message a resident sends after it subscribed (not the one
 * sent before).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../../src/db/seed/demo.js';
import { CHAT_FLAGS, chatApi, verifiedResident } from '../../test/chat/helpers.js';
import { createTestApp, type TestApp } from '../../test/setup/test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let t: TestApp;
let baseUrl: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  t = await createTestApp();
  await seedDemoData(t.deps.orm.em.fork(), t.deps.config);
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill();
  await t?.close();
});

describe('examples/chat-messages.ts', () => {
  it('subscribes with the typed client and prints a message sent after it subscribed', async () => {
    const [territory] = await t.sql<{ id: string; enabled_flags: string[] }>(`select id, enabled_flags from territory where name = 'Vila Madalena'`);
    expect(territory).toBeDefined();
    // The demo territory has the chat and its public channel on.
    expect(CHAT_FLAGS.filter((f) => territory!.enabled_flags.includes(f))).toEqual(['CHATENABLED', 'CHATTERITORYPUBLICCHANNEL']);
    const writer = await verifiedResident(t, territory!);
    const api = chatApi(t);
    const channel = await api.channelId(territory!.id, writer, 'TERRITORY_PUBLIC');
    expect((await api.send(channel, writer, { text: 'sent before the example subscribed' })).statusCode).toBe(201);

    let stdout = '';
    let stderr = '';
    const proc = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', join('client-sdk', 'examples', 'chat-messages.ts')], {
      cwd: ROOT,
      env: { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}`, API_URL: baseUrl, COUNT: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

    await expect
      .poll(() => (proc.exitCode === null ? stdout : `exited ${proc.exitCode}: ${stdout}${stderr}`), { timeout: 30_000 })
      .toContain(`listening to ${channel}`);
    const sent = await api.send(channel, writer, { text: 'Hello from the test' });
    expect(sent.statusCode).toBe(201);

    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('territory Vila Madalena: Public channel');
    expect(stdout).toContain(`] ${writer.id}: Hello from the test`);
    expect(stdout).toContain((sent.json() as { createdAtUtc: string }).createdAtUtc);
    expect(stdout).not.toContain('sent before the example subscribed');
  });
});
