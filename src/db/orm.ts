import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { fileURLToPath } from 'node:url';
import { entities } from '../entities/index.js';
import { unaccentFunction } from '../entities/territory.entity.js';
import { installPgRowTemplates } from './pg-row-templates.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

/**
 * Bounds on waiting for the database (point 3 of the production-readiness issue): a connection, new or taken from a
 * full pool, is given CONNECT_TIMEOUT_MS; a statement STATEMENT_TIMEOUT_MS; a transaction left idle is ended after
 * IDLE_IN_TRANSACTION_TIMEOUT_MS. Past them the request fails with 503 DATABASE_UNAVAILABLE (src/http/errors.ts)
 * instead of hanging; a database that went away fails at once (connection refused or terminated).
 */
export const CONNECT_TIMEOUT_MS = 10_000;
export const STATEMENT_TIMEOUT_MS = 30_000;
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

export function ormOptions(clientUrl: string, extra: Partial<Options> = {}): Options {
  return {
    entities,
    // Database functions the schema diff must know (it drops undeclared ones); trigger functions are not diffed.
    routines: [unaccentFunction],
    clientUrl,
    extensions: [Migrator],
    migrations: {
      path: MIGRATIONS_DIR,
      pathTs: MIGRATIONS_DIR,
      glob: '!(*.d).{js,ts}',
      silent: true,
      snapshot: false,
      emit: 'ts',
    },
    // Entities leave the service layer only through zod output schemas; no implicit global context.
    allowGlobalContext: false,
    debug: false,
    pool: { min: 0, max: 20 },
    // pg.Pool options: broken connections are dropped by the pool and new ones made on demand, so the app recovers
    // by itself when the database comes back.
    driverOptions: {
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
      keepAlive: true,
    },
    ...extra,
  };
}

export const createOrm = (clientUrl: string, extra: Partial<Options> = {}) => {
  installPgRowTemplates();
  return MikroORM.init(ormOptions(clientUrl, extra));
};
export type Orm = MikroORM;

/** Applies pending migrations (start-up and tests). */
export async function migrate(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}

/** Applies pending migrations on a connection of its own (the migration role's, not the app's). */
export async function migrateDatabase(clientUrl: string): Promise<void> {
  // Migrations may rewrite large tables: no statement timeout there.
  const orm = await createOrm(clientUrl, { pool: { min: 0, max: 2 }, driverOptions: { connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true } });
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
}
