/**
 * The two servers under test run as child processes (their own event loop and CPU, as in production). A child
 * announces its address over the IPC channel and exits on SIGTERM/SIGINT or when the parent goes away.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildForBench, builtScript, PRODUCTION_NODE_OPTIONS } from './build.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface ReadyMessage {
  type: 'ready';
  url: string;
}

/** Every child still running: the tear-down stops them, started or still starting. */
export const runningChildren = new Set<ChildProcess>();

export interface ServerChild {
  name: string;
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * `BENCH_CPU_PROF=<dir>`: the children run under `node --cpu-prof`, each writing `<name>-<ms>.cpuprofile` into that
 * directory when it stops (Node refuses the flag in NODE_OPTIONS).
 */
const profileDir = process.env.BENCH_CPU_PROF;

/** The build every child of this run starts from, made once. */
let build: Promise<void> | undefined;

/**
 * Starts `script` (a source path, `bench/api-server.ts`) as production runs the server: its tsc build (bench/build.ts,
 * compiled once per run) under `node --enable-source-maps`. Resolves with its address once it listens. `wrapper`: a
 * command the node process runs under (bench/instructions.ts: valgrind), which keeps its process id.
 */
export async function startServerChild(name: string, script: string, env: NodeJS.ProcessEnv, timeoutMs: number, wrapper: string[] = []): Promise<ServerChild> {
  await (build ??= buildForBench());
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : [];
  const command = [...wrapper, process.execPath, ...profile, ...PRODUCTION_NODE_OPTIONS, builtScript(script)];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  runningChildren.add(child);
  child.once('exit', () => runningChildren.delete(child));
  const stop = () => stopChild(child, 5000);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${name} did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before listening (code ${code}, signal ${signal})`));
    });
    child.on('message', (message: ReadyMessage) => {
      if (message?.type !== 'ready') return;
      clearTimeout(timer);
      resolve({ name, url: message.url, process: child, stop });
    });
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Child side: report the address, and close (then exit) on a signal or when the parent disappears. */
export function serveAsChild(url: string, close: () => Promise<void>) {
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    close()
      .catch((error: unknown) => console.error(error))
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.on('disconnect', shutdown);
  process.send?.({ type: 'ready', url } satisfies ReadyMessage);
}
