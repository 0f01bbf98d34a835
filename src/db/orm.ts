import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { fileURLToPath } from 'node:url';
import { entities } from '../entities/index.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));

export function ormOptions(clientUrl: string, extra: Partial<Options> = {}): Options {
  return {
    entities,
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
    ...extra,
  };
}

export const createOrm = (clientUrl: string, extra: Partial<Options> = {}) => MikroORM.init(ormOptions(clientUrl, extra));
export type Orm = MikroORM;

/** Applies pending migrations (start-up and tests). */
export async function migrate(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}

/** Applies pending migrations on a connection of its own (the migration role's, not the app's). */
export async function migrateDatabase(clientUrl: string): Promise<void> {
  const orm = await createOrm(clientUrl, { pool: { min: 0, max: 2 } });
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
}
