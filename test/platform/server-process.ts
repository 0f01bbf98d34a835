import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = resolve(import.meta.dirname, '../..');

/** A port nobody listens on right now (the kernel's pick). */
export const freePort = () =>
  new Promise<number>((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

export interface ServerProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kills it (SIGKILL) if it is still running: test clean-up. */
  kill(): Promise<void>;
}

/**
 * The real server process as `npm start` runs it (`node --import tsx src/server.ts`, Node from node_modules/.bin
 * first on PATH), from any working directory: tsx and the entry point are given as absolute paths.
 */
export function spawnServer(cwd: string, env: Record<string, string>): ServerProcess {
  const child = spawn('node', ['--import', pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href, join(ROOT, 'src', 'server.ts')], {
    cwd,
    env: {
      PATH: [join(ROOT, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
      HOME: process.env.HOME ?? tmpdir(),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on('exit', (code, signal) => done({ code, signal })));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/**
 * The real server started from the project's root with only `env` (and a data directory of its own, removed once it
 * has exited), run until it exits: its exit code and stderr. For configurations it must refuse to start with; it is
 * killed after 30 s if it does not exit.
 */
export async function serverExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'territory-refusal-'));
  const server = spawnServer(ROOT, { DATA_DIR: dataDir, PORT: '0', ...env });
  const timer = setTimeout(() => void server.kill(), 30_000);
  try {
    const { code } = await server.exited;
    return { code, stderr: server.stderr() };
  } finally {
    clearTimeout(timer);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Polls until `probe` returns something truthy; fails after `timeoutMs` or when the server process has exited. */
export async function until<T>(what: string, probe: () => Promise<T | false | null | undefined>, server?: ServerProcess, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (server && (server.child.exitCode !== null || server.child.signalCode !== null)) {
      throw new Error(`the server exited while waiting for ${what}:\n${server.stdout()}\n${server.stderr()}`);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${server ? `:\n${server.stdout()}\n${server.stderr()}` : ''}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** Waits until GET /ready answers 200. */
export const waitReady = (server: ServerProcess, port: number) =>
  until('GET /ready to answer 200', async () => (await fetch(`http://127.0.0.1:${port}/ready`)).status === 200, server);

export const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
