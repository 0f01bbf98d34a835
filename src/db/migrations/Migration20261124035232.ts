import { Migration } from '@mikro-orm/migrations';

export class Migration20261124035232 extends Migration {

  override name = 'Migration20261124035232';

  override up(): void | Promise<void> {
    this.addSql(`create table "credential_attempt" ("subject_key" varchar(200) not null, "attempts" int not null, "window_started_at_utc" timestamptz not null, primary key ("subject_key"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "credential_attempt" cascade;`);
  }

}
