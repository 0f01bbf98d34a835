import { Migration } from '@mikro-orm/migrations';

export class Migration20261125150131 extends Migration {

  override name = 'Migration20261125150131';

  override up(): void | Promise<void> {
    this.addSql(`alter table "audit_entry" add "client_application_id" uuid null;`);

    this.addSql(`alter table "checkout" add "shipping_address" jsonb null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "audit_entry" drop column "client_application_id";`);

    this.addSql(`alter table "checkout" drop column "shipping_address";`);
  }

}
