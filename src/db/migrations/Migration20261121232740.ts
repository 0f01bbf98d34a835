import { Migration } from '@mikro-orm/migrations';

export class Migration20261121232740 extends Migration {

  override name = 'Migration20261121232740';

  override up(): void | Promise<void> {
    this.addSql(`create table "audit_entry" ("id" uuid not null, "created_at_utc" timestamptz not null, "actor_user_id" uuid null, "action" varchar(100) not null, "subject_type" varchar(50) not null, "subject_id" varchar(100) null, "territory_id" uuid null, "data" jsonb not null default '{}', primary key ("id"));`);
    this.addSql(`create index "audit_entry_subject_type_subject_id_index" on "audit_entry" ("subject_type", "subject_id");`);
    this.addSql(`create index "audit_entry_actor_user_id_created_at_utc_index" on "audit_entry" ("actor_user_id", "created_at_utc");`);

    this.addSql(`create table "app_user" ("id" uuid not null, "created_at_utc" timestamptz not null, "display_name" varchar(200) not null, "email" varchar(320) null, "auth_provider" varchar(50) not null, "external_id" varchar(255) not null, "cpf" varchar(11) null, "foreign_document" varchar(100) null, "phone_number" varchar(30) null, "identity_verification_status" varchar(20) not null default 'Unverified', "two_factor_enabled" boolean not null default false, "two_factor_secret" varchar(64) null, "two_factor_pending_secret" varchar(64) null, "two_factor_last_step" bigint null, "deleted_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "app_user" add constraint "app_user_cpf_unique" unique ("cpf");`);
    this.addSql(`alter table "app_user" add constraint "app_user_auth_provider_external_id_unique" unique ("auth_provider", "external_id");`);

    this.addSql(`create table "two_factor_challenge" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "expires_at_utc" timestamptz not null, "attempts" int not null default 0, "consumed_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "two_factor_challenge_user_id_index" on "two_factor_challenge" ("user_id");`);

    this.addSql(`create table "territory" ("id" uuid not null, "created_at_utc" timestamptz not null, "name" varchar(200) not null, "description" varchar(2000) null, "city" varchar(200) not null, "state" varchar(100) not null, "latitude" double precision not null, "longitude" double precision not null, "radius_km" double precision not null default 5, "parent_territory_id" uuid null, "status" varchar(20) not null, "tags" text[] not null default '{}', "enabled_flags" text[] not null default '{}', "suggested_by_user_id" uuid null, primary key ("id"));`);

    this.addSql(`create table "territory_selection" ("user_id" uuid not null, "session_id" varchar(200) not null, "territory_id" uuid not null, "updated_at_utc" timestamptz not null, primary key ("user_id", "session_id"));`);

    this.addSql(`create table "territory_membership" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "user_id" uuid not null, "role" varchar(20) not null, "geo_verified_at_utc" timestamptz null, "document_verified_at_utc" timestamptz null, "capabilities" text[] not null default '{}', primary key ("id"));`);
    this.addSql(`create index "territory_membership_user_id_index" on "territory_membership" ("user_id");`);
    this.addSql(`alter table "territory_membership" add constraint "territory_membership_territory_id_user_id_unique" unique ("territory_id", "user_id");`);

    this.addSql(`create table "refresh_token" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "family_id" uuid not null, "token_hash" varchar(64) not null, "expires_at_utc" timestamptz not null, "consumed_at_utc" timestamptz null, "revoked_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "refresh_token_user_id_index" on "refresh_token" ("user_id");`);
    this.addSql(`create index "refresh_token_family_id_index" on "refresh_token" ("family_id");`);
    this.addSql(`alter table "refresh_token" add constraint "refresh_token_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "recovery_code" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "code_hash" varchar(64) not null, "used_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "recovery_code_user_id_index" on "recovery_code" ("user_id");`);

    this.addSql(`create table "evidence" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "territory_id" uuid null, "kind" varchar(40) not null, "storage_key" varchar(500) not null, "mime_type" varchar(100) not null, "size_bytes" int not null, "original_file_name" varchar(255) null, primary key ("id"));`);
    this.addSql(`create index "evidence_user_id_index" on "evidence" ("user_id");`);

    this.addSql(`create table "user_permission" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "permission" varchar(40) not null, "granted_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`alter table "user_permission" add constraint "user_permission_user_id_permission_unique" unique ("user_id", "permission");`);

    this.addSql(`create table "work_item" ("id" uuid not null, "created_at_utc" timestamptz not null, "type" varchar(40) not null, "status" varchar(20) not null default 'PENDING', "territory_id" uuid null, "subject_type" varchar(40) not null, "subject_id" uuid not null, "payload" jsonb not null default '{}', "required_permission" varchar(40) null, "required_capability" varchar(40) null, "outcome" varchar(20) null, "notes" varchar(2000) null, "completed_at_utc" timestamptz null, "completed_by_user_id" uuid null, "created_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "work_item_status_type_created_at_utc_index" on "work_item" ("status", "type", "created_at_utc");`);
    this.addSql(`create index "work_item_territory_id_status_created_at_utc_index" on "work_item" ("territory_id", "status", "created_at_utc");`);

    this.addSql(`alter table "two_factor_challenge" add constraint "two_factor_challenge_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "territory" add constraint "territory_parent_territory_id_foreign" foreign key ("parent_territory_id") references "territory" ("id") on delete set null;`);
    this.addSql(`alter table "territory" add constraint "territory_suggested_by_user_id_foreign" foreign key ("suggested_by_user_id") references "app_user" ("id") on delete set null;`);

    this.addSql(`alter table "territory_selection" add constraint "territory_selection_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "territory_selection" add constraint "territory_selection_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);

    this.addSql(`alter table "territory_membership" add constraint "territory_membership_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "territory_membership" add constraint "territory_membership_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "refresh_token" add constraint "refresh_token_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "recovery_code" add constraint "recovery_code_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "evidence" add constraint "evidence_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "evidence" add constraint "evidence_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);

    this.addSql(`alter table "user_permission" add constraint "user_permission_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "work_item" add constraint "work_item_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "two_factor_challenge" drop constraint "two_factor_challenge_user_id_foreign";`);
    this.addSql(`alter table "territory" drop constraint "territory_suggested_by_user_id_foreign";`);
    this.addSql(`alter table "territory_selection" drop constraint "territory_selection_user_id_foreign";`);
    this.addSql(`alter table "territory_membership" drop constraint "territory_membership_user_id_foreign";`);
    this.addSql(`alter table "refresh_token" drop constraint "refresh_token_user_id_foreign";`);
    this.addSql(`alter table "recovery_code" drop constraint "recovery_code_user_id_foreign";`);
    this.addSql(`alter table "evidence" drop constraint "evidence_user_id_foreign";`);
    this.addSql(`alter table "user_permission" drop constraint "user_permission_user_id_foreign";`);
    this.addSql(`alter table "territory" drop constraint "territory_parent_territory_id_foreign";`);
    this.addSql(`alter table "territory_selection" drop constraint "territory_selection_territory_id_foreign";`);
    this.addSql(`alter table "territory_membership" drop constraint "territory_membership_territory_id_foreign";`);
    this.addSql(`alter table "evidence" drop constraint "evidence_territory_id_foreign";`);
    this.addSql(`alter table "work_item" drop constraint "work_item_territory_id_foreign";`);

    this.addSql(`drop table if exists "audit_entry" cascade;`);
    this.addSql(`drop table if exists "app_user" cascade;`);
    this.addSql(`drop table if exists "two_factor_challenge" cascade;`);
    this.addSql(`drop table if exists "territory" cascade;`);
    this.addSql(`drop table if exists "territory_selection" cascade;`);
    this.addSql(`drop table if exists "territory_membership" cascade;`);
    this.addSql(`drop table if exists "refresh_token" cascade;`);
    this.addSql(`drop table if exists "recovery_code" cascade;`);
    this.addSql(`drop table if exists "evidence" cascade;`);
    this.addSql(`drop table if exists "user_permission" cascade;`);
    this.addSql(`drop table if exists "work_item" cascade;`);
  }

}
