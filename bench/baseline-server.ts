/**
 * The bare baseline: Fastify with no plugins and a `pg` Pool, one route per scenario running the same SQL as the
 * API. What the API costs on top of this (validation, auth, tRPC, ORM, headers) is the ratio the bench reports.
 */
import Fastify from 'fastify';
import pg from 'pg';
import { serveAsChild } from './child.js';
import { scenarios } from './scenarios.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required');

// Same pool size as the API's ORM (src/db/orm.ts), so neither side gets more database connections.
const pool = new pg.Pool({ connectionString: databaseUrl, max: 20 });
// An idle connection dropped by the database (shutdown at the end of a run) is not a reason to crash.
pool.on('error', () => {});
const app = Fastify({ logger: false });
for (const scenario of scenarios) {
  app.get(scenario.baseline.path, (request, reply) => scenario.baseline.handler(pool, request, reply));
}
const url = await app.listen({ port: 0, host: '127.0.0.1' });
serveAsChild(url, async () => {
  await app.close();
  await pool.end();
});
