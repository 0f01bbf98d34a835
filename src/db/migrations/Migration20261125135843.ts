import { Migration } from '@mikro-orm/migrations';

export class Migration20261125135843 extends Migration {

  override name = 'Migration20261125135843';

  override up(): void | Promise<void> {
    this.addSql(`create table "client_application" ("id" uuid not null, "created_at_utc" timestamptz not null, "client_id" varchar(64) not null, "secret_hash" varchar(200) not null, "name" varchar(200) not null, "description" varchar(2000) null, "scopes" text[] not null, "redirect_uris" text[] not null default '{}', "is_active" boolean not null default true, "secret_version" int not null default 1, "created_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`alter table "client_application" add constraint "client_application_client_id_unique" unique ("client_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "client_application" cascade;`);
  }

}
