import { Migration } from '@mikro-orm/migrations';

export class Migration20261125132009 extends Migration {

  override name = 'Migration20261125132009';

  override up(): void | Promise<void> {
    this.addSql(`create table "rate_limit_counter" ("key" varchar(300) not null, "window_started_at_utc" timestamptz not null, "hits" int not null, primary key ("key"));`);
    // Counters need no crash safety: skipping the WAL makes the per-request upsert cheaper.
    this.addSql(`alter table "rate_limit_counter" set unlogged;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "rate_limit_counter" cascade;`);
  }

}
