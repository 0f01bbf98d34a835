import autocannon from 'autocannon';

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

let running: { stop(): void } | null = null;

/** Stops the load in progress (on SIGINT), so the run can clean up at once. */
export function stopLoad() {
  running?.stop();
}

/** Drives GET requests at `baseUrl`, rotating through `paths` (every request takes the next one). */
export async function drive(options: LoadOptions): Promise<LoadFigures> {
  const rotation = options.rotation ?? { next: 0 };
  const counted = options.countHeader;
  const headerCounts: Record<string, number> = {};
  const instance = autocannon({
    url: options.baseUrl,
    connections: options.connections,
    duration: options.durationSeconds,
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
    ...(counted ? { headerCounts } : {}),
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
