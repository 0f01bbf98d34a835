import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** How long one file's metadata may take to parse before the file is refused. */
export const DEFAULT_PROBE_TIME_LIMIT_MS = 5_000;
let probeTimeLimitMs = DEFAULT_PROBE_TIME_LIMIT_MS;

/** Sets the time limit of later probes (tests shorten it to reach the timeout path); returns the previous one. */
export function setProbeTimeLimit(ms: number): number {
  const previous = probeTimeLimitMs;
  probeTimeLimitMs = ms;
  return previous;
}

/** Heap of one probe worker: a hostile file that makes the parser allocate ends the worker, not the process. */
const PROBE_HEAP_MB = 128;

export type ProbeResult = { kind: 'duration'; seconds: number } | { kind: 'unreadable' } | { kind: 'timeout' };

// At most this many workers parse at once; later probes wait for a slot (their time limit starts with the worker).
const MAX_CONCURRENT_PROBES = Math.max(2, availableParallelism());
let running = 0;
const waiting: (() => void)[] = [];

async function slot(): Promise<() => void> {
  if (running >= MAX_CONCURRENT_PROBES) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  return () => {
    running -= 1;
    waiting.shift()?.();
  };
}

/** The worker script beside this module, with this module's extension (.ts under tsx and vitest). */
const workerUrl = new URL(`./media-probe.worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url);

/**
 * Reads the duration of an audio or video file in a worker thread (music-metadata parses untrusted bytes): the
 * worker is terminated when it takes longer than the time limit, runs out of its heap or fails.
 */
export async function probeDuration(input: { path: string; mimeType: string; sizeBytes: number }, timeLimitMs = probeTimeLimitMs): Promise<ProbeResult> {
  const release = await slot();
  try {
    return await new Promise<ProbeResult>((resolve) => {
      const worker = new Worker(workerUrl, {
        workerData: input,
        resourceLimits: { maxOldGenerationSizeMb: PROBE_HEAP_MB, maxYoungGenerationSizeMb: 16 },
      });
      let settled = false;
      const settle = (result: ProbeResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
        void worker.terminate();
      };
      const timer = setTimeout(() => settle({ kind: 'timeout' }), timeLimitMs);
      worker.once('message', (message: { durationSeconds?: unknown }) => {
        const seconds = message?.durationSeconds;
        settle(typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? { kind: 'duration', seconds } : { kind: 'unreadable' });
      });
      worker.once('error', () => settle({ kind: 'unreadable' }));
      worker.once('exit', () => settle({ kind: 'unreadable' }));
    });
  } finally {
    release();
  }
}
