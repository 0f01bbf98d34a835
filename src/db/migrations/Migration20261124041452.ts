import { Migration } from '@mikro-orm/migrations';

export class Migration20261124041452 extends Migration {

  override name = 'Migration20261124041452';

  override up(): void | Promise<void> {
    this.addSql(`alter table "app_user" add "tokens_valid_after_utc" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "app_user" drop column "tokens_valid_after_utc";`);
  }

}
