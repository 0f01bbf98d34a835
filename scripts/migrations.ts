// npm run db:migration:create  -> writes a migration for the difference between entities and migrations
// npm run db:migration:check   -> exits 1 when entities and committed migrations differ (CI)
import { createOrm, migrate } from '../src/db/orm.js';
import { withTempDatabase } from './with-temp-db.js';

const command = process.argv[2];
if (command !== 'create' && command !== 'check') {
  console.error('usage: migrations.ts create|check');
  process.exit(2);
}

const exitCode = await withTempDatabase(async (url) => {
  const orm = await createOrm(url);
  try {
    await migrate(orm);
    const diff = (await orm.schema.getUpdateSchemaSQL({ wrap: false })).trim();
    if (command === 'check') {
      if (diff) {
        console.error('Entities and migrations differ; run `npm run db:migration:create`. Pending SQL:\n' + diff);
        return 1;
      }
      console.log('migrations match the entities');
      return 0;
    }
    if (!diff) {
      console.log('nothing to migrate: migrations already match the entities');
      return 0;
    }
    const result = await orm.migrator.create();
    console.log(`created ${result.fileName}`);
    return 0;
  } finally {
    await orm.close();
  }
});
process.exit(exitCode);
