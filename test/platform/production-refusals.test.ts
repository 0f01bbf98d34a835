import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEVELOPMENT_SIGNING_KEY } from '../../src/config.js';
import { PRODUCTION_ENV, REFUSALS } from './support.js';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Starts the real server process (`node --import tsx src/server.ts`, Node from node_modules/.bin first on PATH,
 * as the npm scripts run it) with only the given environment, and collects its exit code and stderr.
 * DATABASE_URL points nowhere, so a process that failed to refuse would fail differently instead of starting.
 */
function startServer(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn('node', ['--import', 'tsx', 'src/server.ts'], {
      cwd: ROOT,
      env: {
        PATH: [join(ROOT, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
        HOME: process.env.HOME ?? tmpdir(),
        DATA_DIR: mkdtempSync(join(tmpdir(), 'territory-refusal-')),
        DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none',
        PORT: '0',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

describe('the server process refuses to start in production with an unsafe configuration', () => {
  const cases: [string, Record<string, string>, string][] = [
    ['an empty JWT__SIGNINGKEY', { ...PRODUCTION_ENV, JWT__SIGNINGKEY: '' }, REFUSALS.keyMissing],
    ['the development default key', { ...PRODUCTION_ENV, JWT__SIGNINGKEY: DEVELOPMENT_SIGNING_KEY }, REFUSALS.keyDefault],
    ['a 20-character key', { ...PRODUCTION_ENV, JWT__SIGNINGKEY: 'k'.repeat(20) }, REFUSALS.keyShort],
    ['empty Cors__AllowedOrigins', { ...PRODUCTION_ENV, Cors__AllowedOrigins: '' }, REFUSALS.cors],
    ['a wildcard in Cors__AllowedOrigins', { ...PRODUCTION_ENV, Cors__AllowedOrigins: '*' }, REFUSALS.cors],
  ];
  it.each(cases)('%s: exit code 1 and the exact message on stderr', async (_name, env, message) => {
    const { code, stderr } = await startServer(env);
    expect(code).toBe(1);
    expect(lines(stderr)).toContain(message);
  });
});
