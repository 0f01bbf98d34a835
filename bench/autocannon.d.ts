// The few parts of autocannon's programmatic API the bench uses (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
  }

  interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  interface Request extends RequestParams {
    setupRequest?: (request: RequestParams, context: Record<string, unknown>) => RequestParams | undefined;
    /** Called with every answer (the body is collected whether or not this is set); header names as sent. */
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => void;
  }

  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    /** Milliseconds between its samples; it also stops at the first one past `duration` (default 1000). */
    sampleInt?: number;
    /** Stop after this many requests (instead of after `duration`). */
    amount?: number;
    timeout?: number;
    headers?: Record<string, string>;
    requests?: Request[];
  }

  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram & { totalCount: number };
    requests: Histogram & { sent: number };
  }

  /** One connection; `requestIterator.context` is the context its current request was set up with. */
  interface Client {
    requestIterator: { context: Record<string, unknown> };
  }

  export interface Instance extends PromiseLike<Result> {
    stop(): void;
    /** Every answer, before the connection sends its next request; `responseTime` in ms (fractional). */
    on(event: 'response', listener: (client: Client, statusCode: number, resBytes: number, responseTime: number) => void): this;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}
