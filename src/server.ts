import { join } from 'node:path';
import { ConfigError, type AppConfig, loadConfig } from './config.js';
import { type EmbeddedDatabase, EmbeddedStartError, randomPassword, startEmbeddedPostgres } from './db/embedded.js';
import { databaseErrorCode, isDatabaseUnavailable } from './platform/problems.js';

/** In-flight HTTP requests get this long to finish after SIGTERM; connections still open then are closed. */
const DRAIN_TIMEOUT_MS = 10_000;
/** The whole shutdown (drain, jobs, database) is given this long; past it the process exits with 1. */
const SHUTDOWN_TIMEOUT_MS = 30_000;

/**
 * The one sentence printed for a start that cannot succeed as configured (no stack: nothing to debug); null for
 * anything else, which is a bug and printed in full.
 */
function startFailure(error: unknown, config: AppConfig | null): string | null {
  if (error instanceof ConfigError || error instanceof EmbeddedStartError) return error.message;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (config && code === 'EADDRINUSE') return `Port ${config.port} is already in use: stop what uses it or set PORT to a free port.`;
  if (isDatabaseUnavailable(error)) {
    return `The database cannot be reached (${databaseErrorCode(error)}): check that PostgreSQL is running and that DATABASE_URL points at it.`;
  }
  return null;
}

function exitWith(error: unknown, config: AppConfig | null): never {
  const sentence = startFailure(error, config);
  // The exact message is the contract (operators and the tests read it).
  if (sentence) console.error(sentence);
  else console.error('territory-platform could not start:', error);
  process.exit(1);
}

function readConfig(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    exitWith(error, null);
  }
}

async function main() {
  const startedAt = Date.now();
  const config = readConfig();
  // Loaded after the configuration is accepted: a refusal prints its message without loading the whole app.
  const [{ buildApp }, { seedDemoData }, { seedSystemConfig }, roles, { migrateDatabase }] = await Promise.all([
    import('./app.js'),
    import('./db/seed/demo.js'),
    import('./db/seed/system-config.js'),
    import('./db/roles.js'),
    import('./db/orm.js'),
  ]);

  let embedded: EmbeddedDatabase | null = null;
  let built: Awaited<ReturnType<typeof buildApp>>;
  try {
    // Migrations run as the owner role; the app (HTTP and workers) connects as the least-privilege app role.
    let appUrl: string;
    if (!config.databaseUrl) {
      if (config.production) console.warn('DATABASE_URL is not set: using the embedded PostgreSQL under DATA_DIR.');
      embedded = await startEmbeddedPostgres({
        dir: join(config.dataDir, 'pg'),
        port: config.embeddedPgPort,
        persistent: true,
        // Ctrl-C in a terminal reaches this process only: PostgreSQL is stopped after the HTTP drain (below).
        ownProcessGroup: true,
        log: (line) => console.log(line),
      });
      await embedded.createDatabase('territory');
      const ownerUrl = embedded.url('territory');
      await migrateDatabase(ownerUrl);
      // A new app-role password on every start: only this process connects as the app.
      const password = randomPassword();
      await roles.ensureAppRole(ownerUrl, roles.APP_ROLE, password);
      appUrl = embedded.urlAs('territory', roles.APP_ROLE, password);
    } else {
      appUrl = config.databaseUrl;
      await roles.refuseSuperuserInProduction(config, appUrl);
      await roles.prepareDatabase(appUrl, config.migrationDatabaseUrl);
    }
    if (config.production && (await roles.mayRewriteAuditTrail(appUrl))) {
      console.warn(
        'The DATABASE_URL role may update or delete the audit trail (it owns the tables): set MIGRATION_DATABASE_URL to the owner role and DATABASE_URL to a least-privilege role.',
      );
    }

    built = await buildApp(config, appUrl);
    // The settings the code reads exist in every database (missing keys only; operators' values are kept).
    await seedSystemConfig(built.deps.orm.em.fork());
    if (config.seedDemoData) await seedDemoData(built.deps.orm.em.fork(), config);
  } catch (error) {
    // Never leave an embedded PostgreSQL running behind a failed start.
    await embedded?.stop().catch(() => {});
    exitWith(error, config);
  }

  let stopping = false;
  /**
   * SIGTERM/SIGINT: the listener closes (new connections are refused), requests in flight finish within
   * DRAIN_TIMEOUT_MS (then their connections are closed), the job workers finish their jobs, and the embedded
   * database stops last. A shutdown that hangs past SHUTDOWN_TIMEOUT_MS exits with 1.
   */
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    built.app.log.info(`${signal}: draining HTTP (up to ${DRAIN_TIMEOUT_MS / 1000} s), stopping jobs and the database`);
    const hard = setTimeout(() => {
      console.error(`Shutdown did not finish within ${SHUTDOWN_TIMEOUT_MS / 1000} s: exiting.`);
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    hard.unref();
    // Keep-alive connections whose request finished are closed as soon as they are idle, so the drain ends with the
    // last request in flight, not with the clients' keep-alive.
    const idle = setInterval(() => built.app.server.closeIdleConnections(), 100);
    idle.unref();
    const drain = setTimeout(() => {
      built.app.log.warn(`requests still open after ${DRAIN_TIMEOUT_MS / 1000} s: closing their connections`);
      built.app.server.closeAllConnections();
    }, DRAIN_TIMEOUT_MS);
    drain.unref();
    let code = 0;
    try {
      await built.close();
    } catch (error) {
      built.app.log.error({ err: error }, 'shutdown failed');
      code = 1;
    }
    clearTimeout(drain);
    clearInterval(idle);
    await embedded?.stop().catch((error: unknown) => {
      console.error('The embedded PostgreSQL did not stop cleanly:', error);
      code = 1;
    });
    process.exit(code);
  };
  // Ours are the only signal hooks: the embedded PostgreSQL is stopped last, after the drain and the job runner.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  if (config.role === 'worker') {
    console.log(`territory-platform worker running (jobs: ${built.deps.jobs.isRunning() ? 'on' : 'off'})`);
    return;
  }
  try {
    await built.app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await built.close().catch(() => {});
    await embedded?.stop().catch(() => {});
    exitWith(error, config);
  }
  const base = config.publicBaseUrl ?? `http://localhost:${config.port}`;
  console.log(`
territory-platform is up in ${((Date.now() - startedAt) / 1000).toFixed(1)} s
  API docs:  ${base}/docs   (OpenAPI: ${base}/openapi.json)
  tRPC:      ${base}/trpc   REST: ${base}/api/v1   journeys: ${base}/api/v2/journeys
  Dev login (demo admin):
    curl -s -X POST ${base}/api/v1/auth/social -H 'content-type: application/json' \\
      -d '{"authProvider":"demo","externalId":"admin","displayName":"Demo Admin"}'
`);
}

main().catch((error: unknown) => exitWith(error, null));
