import autocannon from 'autocannon';

export interface LoadFigures {
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 2xx, plus socket errors and timeouts: a correct run has none. */
  failures: number;
  statusCodes: Record<string, number>;
}

export interface LoadOptions {
  baseUrl: string;
  paths: string[];
  headers?: Record<string, string>;
  connections: number;
  durationSeconds: number;
}

let running: { stop(): void } | null = null;

/** Stops the load in progress (on SIGINT), so the run can clean up at once. */
export function stopLoad() {
  running?.stop();
}

/** Drives GET requests at `baseUrl`, rotating through `paths` (every request takes the next one). */
export async function drive(options: LoadOptions): Promise<LoadFigures> {
  let next = 0;
  const instance = autocannon({
    url: options.baseUrl,
    connections: options.connections,
    duration: options.durationSeconds,
    timeout: 10,
    headers: options.headers,
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => ({ ...request, path: options.paths[next++ % options.paths.length] }),
      },
    ],
  });
  running = instance;
  const result = await instance;
  running = null;
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
  return {
    requests: result.requests.total,
    reqPerSec: result.duration > 0 ? result.requests.total / result.duration : 0,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
    statusCodes,
  };
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
  running = instance;
  const result = await instance;
  running = null;
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
  return {
    requests: result.requests.total,
    reqPerSec: result.duration > 0 ? result.requests.total / result.duration : 0,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
    statusCodes,
  };
}
