import { Counter, Histogram, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestMetrics } from '../../src/http/request-metrics.js';
import { newResident, newTerritory } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * The request metrics are counted in plain maps (src/http/request-metrics.ts) instead of prom-client's Counter and
 * Histogram: a scrape must answer exactly what those answered for the same requests.
 */
describe('request metrics', () => {
  it('a scrape answers the text prom-client answers for the same requests', async () => {
    const ours = new Registry();
    const metrics = new RequestMetrics();
    metrics.register(ours);

    const theirs = new Registry();
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [theirs],
    });
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method and route',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [theirs],
    });
    // Bounds themselves (a bucket counts up to and including its bound), between them, past the last, and zero.
    const seen: [string, string, number, number][] = [
      ['GET', '/api/v1/territories/:id', 200, 0.0012],
      ['GET', '/api/v1/territories/:id', 200, 0.005],
      ['GET', '/api/v1/territories/:id', 404, 0.0051],
      ['POST', '/api/v1/feed', 201, 0.25],
      ['POST', '/api/v1/feed', 400, 7.5],
      ['GET', 'unmatched', 404, 0],
      ['GET', '/api/v1/territories/:id', 200, 1],
    ];
    for (const [method, route, status, seconds] of seen) {
      metrics.record(method, route, status, seconds);
      requests.inc({ method, route, status });
      duration.observe({ method, route }, seconds);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());

    ours.resetMetrics();
    theirs.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  describe('served by the app', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(() => t.close());

    it('counts each answered request under its route and status', async () => {
      const territory = await newTerritory(t);
      const { token } = await newResident(t, territory);
      for (const id of [territory.id, territory.id, '9f1c7e0a-0000-4000-8000-000000000000']) {
        await t.app.inject({ method: 'GET', url: `/api/v1/territories/${id}`, headers: { authorization: `Bearer ${token}` } });
      }
      const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(text).toContain('http_requests_total{method="GET",route="/api/v1/territories/:id",status="200"} 2');
      expect(text).toContain('http_requests_total{method="GET",route="/api/v1/territories/:id",status="404"} 1');
      expect(text).toContain('http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/v1/territories/:id"} 3');
      expect(text).toContain('http_request_duration_seconds_count{method="GET",route="/api/v1/territories/:id"} 3');
    });
  });
});
