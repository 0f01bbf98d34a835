import { describe, expect, it } from 'vitest';
import { DEVELOPMENT_SIGNING_KEY } from '../../src/config.js';
import { lines, serverExit } from './server-process.js';
import { PRODUCTION_ENV, REFUSALS } from './support.js';

/**
 * The real server process (Node from node_modules/.bin first on PATH, as the npm scripts run it) with only the given
 * environment. DATABASE_URL points nowhere, so a process that failed to refuse would fail differently instead of
 * starting.
 */
const startServer = (env: Record<string, string>) => serverExit({ DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none', ...env });

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
