import { Migration } from '@mikro-orm/migrations';

export class Migration20261125150014 extends Migration {

  override name = 'Migration20261125150014';

  override up(): void | Promise<void> {
    this.addSql(`create index "post_hidden_idx" on "post" ("territory_id", "created_at_utc" desc, "id" desc) include ("map_entity_id", "visibility", "author_user_id") where status = 'HIDDEN';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "post_hidden_idx";`);
  }

}
