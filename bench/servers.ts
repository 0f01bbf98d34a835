/**
 * Processes a custom scenario runs besides the API server (scenario.ts `servers`): a second API process on the bench
 * database (`ROLE=api`), a job worker (`ROLE=worker`), or an API on a database of its own on the same PostgreSQL.
 * Each gets the API server's environment (signing key, raised rate limits, data directory) with its own overrides,
 * so the bench's tokens work on all of them. They are started with the API server, while the data is loaded (a start
 * costs seconds of CPU that must not fall into a measurement), except `lazy` ones (a worker would work beside the
 * other scenarios), which start when the scenario asks for them. Stopped at tear-down with the other children.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import pg from 'pg';
import type { EmbeddedDatabase } from '../src/db/embedded.js';
import { createOrm, migrate } from '../src/db/orm.js';
import { APP_ROLE, ensureAppRole } from '../src/db/roles.js';
import { type ServerChild, startServerChild } from './child.js';

export interface ServerSpec {
  /** Unique in the run: scenarios naming the same server share one process. */
  name: string;
  /** `bench/api-server.ts` (listens) or `bench/worker-server.ts` (runs the jobs, does not listen). */
  script: string;
  /** Overrides of the API server's environment (`ROLE`, `JOBS__ENABLED`). */
  env?: Record<string, string>;
  /** The name of a database of its own (created and migrated, seeded by the scenario) instead of the bench database. */
  database?: string;
  /** Started when the scenario asks for it rather than with the API server. */
  lazy?: boolean;
}

/** The schema as the tests build it: the migrations, then entities newer than the last migration (global-setup.ts). */
export async function prepareSchema(ownerUrl: string) {
  const orm = await createOrm(ownerUrl);
  try {
    await migrate(orm);
    await orm.em.getConnection().execute('create extension if not exists pg_trgm');
    await orm.schema.update();
  } finally {
    await orm.close();
  }
}

/**
 * The schema (`prepareSchema`), then the least-privilege app role the servers connect as, as `npm start` does (seeding
 * uses the owner): the role's password and the database URL as that role.
 */
export async function prepareBenchDatabase(embedded: EmbeddedDatabase, name: string) {
  const ownerUrl = embedded.url(name);
  await prepareSchema(ownerUrl);
  const appPassword = randomBytes(24).toString('hex');
  await ensureAppRole(ownerUrl, APP_ROLE, appPassword);
  return { ownerUrl, appUrl: embedded.urlAs(name, APP_ROLE, appPassword), appPassword };
}

/**
 * The API server's environment in every bench: development mode, no logs, no jobs, a signing key of the run (the
 * bench signs its tokens with it: `loadConfig(env).jwt`) and rate limits out of reach.
 */
export function benchApiEnv(databaseUrl: string, dataDir: string): NodeJS.ProcessEnv {
  const huge = '1000000000';
  return {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    JOBS__ENABLED: 'false',
    JWT__SIGNINGKEY: randomBytes(32).toString('hex'),
    RateLimiting__PermitLimit: huge,
    RateLimiting__Auth__PermitLimit: huge,
    RateLimiting__FeedRead__PermitLimit: huge,
    RateLimiting__Write__PermitLimit: huge,
  };
}

const START_TIMEOUT_MS = 90_000;

export class ExtraServers {
  private readonly specs = new Map<string, ServerSpec>();
  private readonly started = new Map<string, Promise<ServerChild>>();
  private readonly databases = new Map<string, Promise<{ client: pg.Client; appUrl: string }>>();

  constructor(
    private readonly options: {
      embedded: EmbeddedDatabase;
      /** The app role's password: roles are cluster-wide, so every database's grants keep the one the API uses. */
      appPassword: string;
      apiEnv: NodeJS.ProcessEnv;
    },
  ) {}

  /** Registers the scenarios' servers and starts those that are not lazy. */
  declare(specs: ServerSpec[]) {
    for (const spec of specs) {
      if (this.specs.has(spec.name)) continue;
      this.specs.set(spec.name, spec);
      if (!spec.lazy) void this.start(spec.name);
    }
  }

  /** Resolves when every start so far has succeeded or failed (a failure is reported to whoever asks for it). */
  async settled() {
    await Promise.allSettled([...this.started.values()]);
  }

  server(name: string): Promise<ServerChild> {
    return this.started.get(name) ?? this.start(name);
  }

  async stop(name: string) {
    const starting = this.started.get(name);
    if (!starting) return;
    this.started.delete(name);
    const child = await starting.catch(() => null);
    await child?.stop();
  }

  async database(name: string): Promise<pg.Client> {
    return (await this.databaseOf(name)).client;
  }

  async close() {
    for (const database of this.databases.values()) {
      const opened = await database.catch(() => null);
      await opened?.client.end().catch(() => undefined);
    }
  }

  private start(name: string): Promise<ServerChild> {
    const spec = this.specs.get(name);
    if (!spec) return Promise.reject(new Error(`no server named ${name} is declared by a scenario`));
    const starting = (async () => {
      const databaseUrl = spec.database ? (await this.databaseOf(spec.database)).appUrl : this.options.apiEnv.DATABASE_URL;
      return startServerChild(name, spec.script, { ...this.options.apiEnv, ...spec.env, DATABASE_URL: databaseUrl }, START_TIMEOUT_MS);
    })();
    // Reported to the scenario that asks for it; never an unhandled rejection meanwhile.
    starting.catch(() => undefined);
    this.started.set(name, starting);
    return starting;
  }

  private databaseOf(name: string) {
    let database = this.databases.get(name);
    if (!database) {
      database = (async () => {
        const { embedded, appPassword } = this.options;
        await embedded.createDatabase(name);
        const ownerUrl = embedded.url(name);
        await prepareSchema(ownerUrl);
        await ensureAppRole(ownerUrl, APP_ROLE, appPassword);
        const client = new pg.Client({ connectionString: ownerUrl });
        // The database may go away first on Ctrl-C; that must not crash the tear-down.
        client.on('error', () => {});
        await client.connect();
        return { client, appUrl: embedded.urlAs(name, APP_ROLE, appPassword) };
      })();
      database.catch(() => undefined);
      this.databases.set(name, database);
    }
    return database;
  }
}

/** A TCP port free on 127.0.0.1 right now (for an embedded PostgreSQL of the bench's own). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
