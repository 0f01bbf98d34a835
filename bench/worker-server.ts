/**
 * A job worker as deployed (`ROLE=worker`, `JOBS__ENABLED=true`): the app without a listener, running the job
 * handlers and schedules (the outbox dispatcher among them) on the benchmark database. Started by a scenario that
 * needs jobs done (servers.ts); it announces itself ready once the job runner works.
 */
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { serveAsChild } from './child.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required');

const config = loadConfig(process.env);
if (config.role !== 'worker' || !config.jobsEnabled) throw new Error('the worker needs ROLE=worker and JOBS__ENABLED=true');
const built = await buildApp(config, databaseUrl);
serveAsChild('', () => built.close());
