import type { Metric, Registry } from 'prom-client';

/** Upper bounds (seconds) of `http_request_duration_seconds`'s buckets. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** One method and route: answers by status, and the duration histogram (per bucket, not yet cumulative). */
interface RouteStats {
  method: string;
  route: string;
  byStatus: Map<number, number>;
  buckets: number[];
  count: number;
  sum: number;
}

/** A metric as prom-client's registry reads it at a scrape (what its own Counter and Histogram answer). */
interface ExportedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: { labels: Record<string, string | number>; value: number; metricName?: string }[];
}

/**
 * `http_requests_total` (by method, route and status) and `http_request_duration_seconds` (by method and route),
 * counted in plain maps and read by the registry when scraped. prom-client's own `inc` and `observe` validate the
 * label names and hash the label values of every call: ~3 us of each request (bench/PROFILE.md, eighth pass).
 * Here a request costs three map lookups and a bucket search; a scrape answers the same text as before.
 */
export class RequestMetrics {
  private readonly byMethod = new Map<string, Map<string, RouteStats>>();
  /** Exported in the order first seen, as prom-client exports its label sets. */
  private readonly routesSeen: RouteStats[] = [];
  private readonly statusesSeen: { stats: RouteStats; status: number }[] = [];

  record(method: string, route: string, status: number, seconds: number): void {
    let routes = this.byMethod.get(method);
    if (!routes) this.byMethod.set(method, (routes = new Map()));
    let stats = routes.get(route);
    if (!stats) {
      routes.set(route, (stats = { method, route, byStatus: new Map(), buckets: DURATION_BUCKETS.map(() => 0), count: 0, sum: 0 }));
      this.routesSeen.push(stats);
    }
    const answered = stats.byStatus.get(status);
    if (answered === undefined) this.statusesSeen.push({ stats, status });
    stats.byStatus.set(status, (answered ?? 0) + 1);
    // A bucket counts the durations up to its bound (`le`); longer ones are in +Inf only (the count).
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket += 1;
    if (bucket < DURATION_BUCKETS.length) stats.buckets[bucket]! += 1;
    stats.count += 1;
    stats.sum += seconds;
  }

  /** Adds both metrics to `registry`. */
  register(registry: Registry): void {
    const metrics: (ExportedMetric & { get(): Promise<ExportedMetric>; reset(): void })[] = [
      this.exported('http_requests_total', 'HTTP requests by method, route and status', 'counter', () => this.requestValues()),
      this.exported('http_request_duration_seconds', 'HTTP request duration by method and route', 'histogram', () => this.durationValues()),
    ];
    // The registry reads a metric through `name`, `get()` and `reset()` only; these are not prom-client's classes.
    for (const metric of metrics) registry.registerMetric(metric as unknown as Metric);
  }

  private exported(name: string, help: string, type: ExportedMetric['type'], values: () => ExportedMetric['values']) {
    const metric = { name, help, type, aggregator: 'sum' as const, values: [] as ExportedMetric['values'] };
    return {
      ...metric,
      get: async (): Promise<ExportedMetric> => ({ ...metric, values: values() }),
      reset: () => this.reset(),
    };
  }

  private reset() {
    this.byMethod.clear();
    this.routesSeen.length = 0;
    this.statusesSeen.length = 0;
  }

  private requestValues(): ExportedMetric['values'] {
    return this.statusesSeen.map(({ stats: { method, route, byStatus }, status }) => ({ labels: { method, route, status }, value: byStatus.get(status)! }));
  }

  private durationValues(): ExportedMetric['values'] {
    const values: ExportedMetric['values'] = [];
    const name = 'http_request_duration_seconds';
    for (const { method, route, buckets, count, sum } of this.routesSeen) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += buckets[i]!;
        values.push({ metricName: `${name}_bucket`, labels: { le, method, route }, value: cumulative });
      });
      values.push(
        { metricName: `${name}_bucket`, labels: { le: '+Inf', method, route }, value: count },
        { metricName: `${name}_sum`, labels: { method, route }, value: sum },
        { metricName: `${name}_count`, labels: { method, route }, value: count },
      );
    }
    return values;
  }
}
