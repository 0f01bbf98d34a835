import { Migration } from '@mikro-orm/migrations';

/**
 * The feed (issue 14): whether the caller has HIDDEN posts in the territory is read with the territory access, a
 * probe of this small partial index; only those who do get the feed's second (hidden) branch. Everyone else runs
 * the plain statement, whose first page keeps one generic plan (0.92-1.1 -> 0.44-0.49 ms at the bench's data).
 */
export class Migration20261126093844 extends Migration {
  override name = 'Migration20261126093844';

  override up(): void | Promise<void> {
    this.addSql(`create index "post_hidden_author_idx" on "post" ("author_user_id", "territory_id") where status = 'HIDDEN';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "post_hidden_author_idx";`);
  }
}
