/**
 * The real application (buildApp: every plugin, auth, rate limiting, tRPC and the REST bridge) on the benchmark
 * database. Started by bench/run.ts with the environment it needs (DATABASE_URL, signing key, raised rate limits).
 */
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { serveAsChild } from './child.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required');

const config = loadConfig(process.env);
const built = await buildApp(config, databaseUrl);
const url = await built.app.listen({ port: 0, host: '127.0.0.1' });
serveAsChild(url, () => built.close());
