import { Migration } from '@mikro-orm/migrations';

/**
 * PostgreSQL extensions the schema relies on (pg_trgm: trigram indexes for territory search). Named to sort before
 * every generated migration, which may create indexes that need them.
 */
export class Migration00000000000000_extensions extends Migration {

  override name = 'Migration00000000000000_extensions';

  override async up(): Promise<void> {
    this.addSql(`create extension if not exists pg_trgm;`);
  }

}
