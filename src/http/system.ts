import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { problem } from '../platform/problems.js';
import { RequestMetrics } from './request-metrics.js';
import { API_VERSION } from '../platform/version.js';
import type { AppDeps } from '../trpc/context.js';

/** `/ready` answers within this long even when the database hangs. */
const READY_CHECK_TIMEOUT_MS = 3000;

/** Resolves false when `check` fails or takes longer than `ms`. */
async function within(ms: number, check: () => Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([check().then(() => true as const), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** `/health` (liveness, `/ready` (database and job runner reachable), `/metrics` (Prometheus text). */
export const systemPlugin = fp(
  async (app: FastifyInstance, opts: { deps: AppDeps }) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const requests = new RequestMetrics();
    requests.register(registry);
    app.addHook('onResponse', (request, reply, done) => {
      requests.record(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
      done();
    });

    const noLimit = { rateLimit: false } as const;
    // Liveness: the process serves HTTP. It never touches the database, so an outage does not get the process restarted.
    app.get('/health', { config: noLimit, schema: { hide: true } }, async () => ({ status: 'ok', version: API_VERSION }));
    app.get('/ready', { config: noLimit, schema: { hide: true } }, async (_request, reply) => {
      const checks: Record<string, 'ok' | 'down'> = { database: 'ok', jobs: 'ok' };
      if (!(await within(READY_CHECK_TIMEOUT_MS, () => opts.deps.orm.em.getConnection().execute('select 1')))) checks.database = 'down';
      if (opts.deps.config.jobsEnabled && !opts.deps.jobs.isRunning()) checks.jobs = 'down';
      const ready = Object.values(checks).every((v) => v === 'ok');
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks });
    });
    // In production the metrics are an operator's: served only with METRICS__TOKEN as bearer (unset: not served).
    const { production, metricsToken } = opts.deps.config;
    app.get('/metrics', { config: { rateLimit: production ? undefined : false }, schema: { hide: true } }, async (request, reply) => {
      if (production) {
        if (!metricsToken) return reply.callNotFound();
        const presented = Buffer.from(request.headers.authorization ?? '');
        const expected = Buffer.from(`Bearer ${metricsToken}`);
        if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
          return reply
            .status(401)
            .header('WWW-Authenticate', 'Bearer')
            .type('application/problem+json')
            .send(problem(401, 'UNAUTHORIZED', 'A metrics token is required.', '/metrics'));
        }
      }
      return reply.type(registry.contentType).send(await registry.metrics());
    });
  },
  { name: 'system' },
);
