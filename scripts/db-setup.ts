// The database step of a deployment, before the API and workers start (docker-compose.yml's `migrate` service):
// applies the migrations as MIGRATION_DATABASE_URL's role and creates the DATABASE_URL role with its privileges
// (src/db/roles.ts), so the long-running processes never hold the owner's credentials.
import { prepareDatabase } from '../src/db/roles.js';

const appUrl = process.env.DATABASE_URL;
const migrationUrl = process.env.MIGRATION_DATABASE_URL;
if (!appUrl || !migrationUrl) {
  console.error('db-setup needs DATABASE_URL (the app role) and MIGRATION_DATABASE_URL (the owner role)');
  process.exit(1);
}
await prepareDatabase(appUrl, migrationUrl);
console.log('database migrated; app role ready');
process.exit(0);
