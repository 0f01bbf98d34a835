import { Migration } from '@mikro-orm/migrations';

export class Migration20261125133517 extends Migration {

  override name = 'Migration20261125133517';

  override up(): void | Promise<void> {
    this.addSql(`create table "report_sanction" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "target_type" varchar(10) not null, "target_id" uuid not null, "source" varchar(20) not null, "reporter_count" int not null default 0, "applied_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`alter table "report_sanction" add constraint "report_sanction_target_unique" unique ("territory_id", "target_type", "target_id");`);

    this.addSql(`create table "report" ("id" uuid not null, "created_at_utc" timestamptz not null, "reporter_user_id" uuid null, "territory_id" uuid not null, "target_type" varchar(10) not null, "target_id" uuid not null, "reason" varchar(300) not null, "details" varchar(2000) null, "status" varchar(20) not null default 'OPEN', "decided_at_utc" timestamptz null, "decided_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "report_dedup_idx" on "report" ("reporter_user_id", "target_type", "target_id", "created_at_utc" desc);`);
    this.addSql(`create index "report_target_idx" on "report" ("target_type", "target_id", "territory_id", "created_at_utc" desc);`);
    this.addSql(`create index "report_territory_idx" on "report" ("territory_id", "created_at_utc" desc, "id" desc);`);

    this.addSql(`create table "posting_restriction" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "user_id" uuid not null, "ends_at_utc" timestamptz not null, "sanction_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "posting_restriction_user_idx" on "posting_restriction" ("user_id", "territory_id", "ends_at_utc" desc);`);

    this.addSql(`create table "voting" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "created_by_user_id" uuid null, "type" varchar(40) not null, "title" varchar(200) not null, "description" varchar(2000) null, "options" text[] not null, "visibility" varchar(20) not null, "status" varchar(20) not null default 'Draft', "starts_at_utc" timestamptz null, "ends_at_utc" timestamptz null, "payload" jsonb not null default '{}', "opened_at_utc" timestamptz null, "closed_at_utc" timestamptz null, "results" jsonb null, "winner" varchar(100) null, "created_rule_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "voting_territory_idx" on "voting" ("territory_id", "created_at_utc" desc, "id" desc);`);
    this.addSql(`create index "voting_schedule_idx" on "voting" ("status", "starts_at_utc", "ends_at_utc") where status in ('Draft', 'Open');`);
    this.addSql(`create index "voting_rule_idx" on "voting" ("created_rule_id") where created_rule_id is not null;`);

    this.addSql(`create table "vote" ("id" uuid not null, "created_at_utc" timestamptz not null, "voting_id" uuid not null, "user_id" uuid not null, "selected_option" varchar(100) not null, primary key ("id"));`);
    this.addSql(`create index "vote_user_idx" on "vote" ("user_id", "created_at_utc" desc);`);
    this.addSql(`alter table "vote" add constraint "vote_voting_user_unique" unique ("voting_id", "user_id");`);

    this.addSql(`alter table "report_sanction" add constraint "report_sanction_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);

    this.addSql(`alter table "report" add constraint "report_reporter_user_id_foreign" foreign key ("reporter_user_id") references "app_user" ("id") on delete set null;`);
    this.addSql(`alter table "report" add constraint "report_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);

    this.addSql(`alter table "posting_restriction" add constraint "posting_restriction_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "posting_restriction" add constraint "posting_restriction_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "posting_restriction" add constraint "posting_restriction_sanction_id_foreign" foreign key ("sanction_id") references "report_sanction" ("id") on delete cascade;`);

    this.addSql(`alter table "voting" add constraint "voting_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "voting" add constraint "voting_created_by_user_id_foreign" foreign key ("created_by_user_id") references "app_user" ("id") on delete set null;`);

    this.addSql(`alter table "vote" add constraint "vote_voting_id_foreign" foreign key ("voting_id") references "voting" ("id") on delete cascade;`);
    this.addSql(`alter table "vote" add constraint "vote_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "posting_restriction" drop constraint "posting_restriction_sanction_id_foreign";`);
    this.addSql(`alter table "vote" drop constraint "vote_voting_id_foreign";`);

    this.addSql(`drop table if exists "report_sanction" cascade;`);
    this.addSql(`drop table if exists "report" cascade;`);
    this.addSql(`drop table if exists "posting_restriction" cascade;`);
    this.addSql(`drop table if exists "voting" cascade;`);
    this.addSql(`drop table if exists "vote" cascade;`);
  }

}
