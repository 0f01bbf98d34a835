import { Migration } from '@mikro-orm/migrations';

/**
 * The published posts by tag (GIN), for a feed filtered by the reader's interests (`filterByInterests`: `tags && the
 * reader's tags`). Without it the filtered feed's exact count read every post of the territory to test its tags
 * (200-225 ms of PostgreSQL CPU at the bench's 200k-post territory; with it 18-25 ms for tags carried by 23-44k posts,
 * 0.1 ms for a rare one), and a page of a rare tag walked the whole territory to find its twenty (132-160 ms; with it
 * 0.9-1.6).
 */
export class Migration20261127190000 extends Migration {
  override name = 'Migration20261127190000';

  override up(): void | Promise<void> {
    this.addSql(`create index "post_feed_tags_idx" on "post" using gin ("tags") with (fastupdate = off) where status = 'PUBLISHED';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "post_feed_tags_idx";`);
  }
}
