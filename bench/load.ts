import autocannon, { type Instance, type Result } from 'autocannon';

export interface LoadFigures {
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 2xx, plus socket errors and timeouts: a correct run has none. */
  failures: number;
  statusCodes: Record<string, number>;
  /** With `countHeader`: how many answers carried each value of that header (`(none)`: absent). */
  headerCounts?: Record<string, number>;
}

/** A request of the rotation: a path, or a path with headers of its own (added to the common ones). */
export type RotatedRequest = string | { path: string; headers: Record<string, string> };

export interface LoadOptions {
  baseUrl: string;
  paths: RotatedRequest[];
  headers?: Record<string, string>;
  connections: number;
  durationSeconds: number;
  /**
   * Where the rotation goes on from (default: a fresh one from the first request). Shared by a warm-up and the
   * measured run, the latter continues where the former stopped instead of sending its requests again.
   */
  rotation?: { next: number };
  /** Tallies the values of this response header (name in lower case), e.g. `x-cache`. */
  countHeader?: string;
}

/** The loads in progress (two at once when a scenario drives two API processes). */
const running = new Set<{ stop(): void }>();

/** Stops the loads in progress (on SIGINT), so the run can clean up at once. */
export function stopLoad() {
  for (const instance of running) instance.stop();
}

/** Awaits a load, known to `stopLoad` meanwhile. */
async function tracked(instance: Instance): Promise<Result> {
  running.add(instance);
  try {
    return await instance;
  } finally {
    running.delete(instance);
  }
}

/**
 * What one load measured: every answer's latency (ms, fractional) and status, over autocannon's own duration.
 * Autocannon's histogram keeps whole milliseconds (an answer of 10.9 ms counted as 10, so a p50 of "10" could be
 * 10.9), hence the latencies are taken from its `response` events.
 */
export interface LoadSample {
  durationSeconds: number;
  latenciesMs: number[];
  statusCodes: Record<string, number>;
  /** Socket errors and timeouts (answers that never came). */
  errors: number;
  headerCounts?: Record<string, number>;
}

/** Keeps the latency and status of every answer of `instance`. */
function sampled(instance: Instance) {
  const sample = { latenciesMs: [] as number[], statusCodes: {} as Record<string, number> };
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    sample.latenciesMs.push(responseTime);
    sample.statusCodes[statusCode] = (sample.statusCodes[statusCode] ?? 0) + 1;
  });
  return sample;
}

/** The figures of one load or of several merged (slices of a load taken in turns: `inTurn`). */
export function loadFigures(samples: LoadSample[]): LoadFigures {
  const latencies = samples.flatMap((s) => s.latenciesMs).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, s) => sum + s.durationSeconds, 0);
  const statusCodes: Record<string, number> = {};
  for (const s of samples) for (const [code, n] of Object.entries(s.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const non2xx = Object.entries(statusCodes).reduce((n, [code, count]) => (code.startsWith('2') ? n : n + count), 0);
  const counted = samples.filter((s) => s.headerCounts);
  const headerCounts: Record<string, number> = {};
  for (const s of counted) for (const [value, n] of Object.entries(s.headerCounts ?? {})) headerCounts[value] = (headerCounts[value] ?? 0) + n;
  const round = (v: number) => Math.round(v * 100) / 100;
  return {
    requests: latencies.length,
    reqPerSec: seconds > 0 ? latencies.length / seconds : 0,
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    failures: non2xx + samples.reduce((sum, s) => sum + s.errors, 0),
    statusCodes,
    ...(counted.length > 0 ? { headerCounts } : {}),
  };
}

/**
 * Runs two loads in turn, `rounds` times each, swapping which goes first every round (A B, B A, A B...), and answers
 * each one's results in order. Two loads measured one after the other (10 s, then 10 s) compare two moments of a
 * shared machine as well as the two servers: a slow spell during one of them moved a ratio by tenths. Taken in
 * short turns, both meet the same moments.
 */
export async function inTurn<T>(rounds: number, loads: readonly [() => Promise<T>, () => Promise<T>]): Promise<[T[], T[]]> {
  const results: [T[], T[]] = [[], []];
  for (let round = 0; round < rounds; round++) {
    for (const which of round % 2 === 0 ? [0, 1] : [1, 0]) results[which]!.push(await loads[which]!());
  }
  return results;
}

/** Drives GET requests at `baseUrl`, rotating through `paths` (every request takes the next one). */
export async function drive(options: LoadOptions): Promise<LoadSample> {
  const rotation = options.rotation ?? { next: 0 };
  const counted = options.countHeader;
  const headerCounts: Record<string, number> = {};
  const instance = autocannon({
    url: options.baseUrl,
    connections: options.connections,
    duration: options.durationSeconds,
    // Autocannon stops at its first tick past the duration: ticks of 1 s (its default) made a 0.5 s load last 1 s.
    sampleInt: 100,
    timeout: 10,
    headers: options.headers,
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => {
          const next = options.paths[rotation.next++ % options.paths.length] as RotatedRequest;
          return typeof next === 'string' ? { ...request, path: next } : { ...request, path: next.path, headers: next.headers };
        },
        ...(counted
          ? {
              onResponse: (_status, _body, _context, headers) => {
                // Header names come as the server spelled them.
                const name = Object.keys(headers).find((h) => h.toLowerCase() === counted);
                const value = name === undefined ? undefined : headers[name];
                const key = value === undefined ? '(none)' : String(value);
                headerCounts[key] = (headerCounts[key] ?? 0) + 1;
              },
            }
          : {}),
      },
    ],
  });
  const sample = sampled(instance);
  const result = await tracked(instance);
  return { durationSeconds: result.duration, ...sample, errors: result.errors + result.timeouts, ...(counted ? { headerCounts } : {}) };
}

export interface PreparedRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Drives `amount` requests, each one built by `next()` (its own method, path, headers and body: a write that
 * consumes its data, a caller per request), `connections` at a time. The figures are those of `drive`.
 */
export async function driveEach(options: { baseUrl: string; connections: number; amount: number; next: () => PreparedRequest }): Promise<LoadFigures> {
  const instance = autocannon({
    url: options.baseUrl,
    connections: options.connections,
    amount: options.amount,
    timeout: 10,
    requests: [{ setupRequest: () => options.next() }],
  });
  const sample = sampled(instance);
  const result = await tracked(instance);
  return loadFigures([{ durationSeconds: result.duration, ...sample, errors: result.errors + result.timeouts }]);
}

/** A request of a mixed load: its kind (the figures are kept per kind), method, path, headers and body. */
export interface MixedRequest {
  kind: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** The answers of one kind: their latencies (ms, fractional) and status codes. */
export interface KindSample {
  latenciesMs: number[];
  statusCodes: Record<string, number>;
}

export interface MixedSample {
  /** Measured seconds (autocannon's own duration of the run). */
  durationSeconds: number;
  byKind: Map<string, KindSample>;
  /** Socket errors and timeouts (answers that never came). */
  errors: number;
}

/**
 * Drives requests built by `next()` (each its own kind, method, path, headers, body) on `connections` keep-alive
 * connections for `durationSeconds`, and keeps every answer's latency and status per kind: autocannon's histogram
 * has whole milliseconds and no kinds. A connection sends its next request once the answer came, so the latency
 * is the time from the write to the last byte of the answer.
 */
export async function driveMixed(options: { baseUrl: string; connections: number; durationSeconds: number; next: () => MixedRequest }): Promise<MixedSample> {
  const byKind = new Map<string, KindSample>();
  const instance = autocannon({
    url: options.baseUrl,
    connections: options.connections,
    duration: options.durationSeconds,
    sampleInt: 100,
    timeout: 10,
    requests: [
      {
        setupRequest: (request, context) => {
          const next = options.next();
          context.kind = next.kind;
          return { ...request, method: next.method, path: next.path, headers: next.headers, body: next.body ?? '' };
        },
      },
    ],
  });
  instance.on('response', (client, statusCode, _bytes, responseTime) => {
    const kind = String(client.requestIterator.context.kind);
    let sample = byKind.get(kind);
    if (!sample) byKind.set(kind, (sample = { latenciesMs: [], statusCodes: {} }));
    sample.latenciesMs.push(responseTime);
    sample.statusCodes[statusCode] = (sample.statusCodes[statusCode] ?? 0) + 1;
  });
  const result = await tracked(instance);
  return { durationSeconds: result.duration, byKind, errors: result.errors + result.timeouts };
}

/** The `p`-th percentile (nearest rank) of ascending numbers; 0 for none. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;

export interface KindFigures {
  requests: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 2xx. */
  non2xx: number;
  statusCodes: Record<string, number>;
}

/** Request count, p50, p99 and non-2xx of one kind's answers (of one sample or several merged). */
export function kindFigures(samples: KindSample[]): KindFigures {
  const latencies = samples.flatMap((s) => s.latenciesMs).sort((a, b) => a - b);
  const statusCodes: Record<string, number> = {};
  for (const s of samples) for (const [code, n] of Object.entries(s.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const non2xx = Object.entries(statusCodes).reduce((n, [code, count]) => (code.startsWith('2') ? n : n + count), 0);
  const round = (v: number) => Math.round(v * 100) / 100;
  return { requests: latencies.length, p50Ms: round(percentile(latencies, 50)), p99Ms: round(percentile(latencies, 99)), non2xx, statusCodes };
}
