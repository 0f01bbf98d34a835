import { Migration } from '@mikro-orm/migrations';

export class Migration20261125130443 extends Migration {

  override name = 'Migration20261125130443';

  override up(): void | Promise<void> {
    this.addSql(`create table "chat_conversation" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "kind" varchar(30) not null, "status" varchar(20) not null, "name" varchar(100) null, "description" varchar(500) null, "created_by_user_id" uuid null, "direct_key" varchar(80) null, "last_seq" int not null default 0, "last_message_at_utc" timestamptz null, "last_message_preview" varchar(200) null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "chat_conversation_created_by_user_id_index" on "chat_conversation" ("created_by_user_id");`);
    this.addSql(`create index "chat_conversation_territory_id_kind_status_index" on "chat_conversation" ("territory_id", "kind", "status");`);
    this.addSql(`create unique index "chat_conversation_channel_unique" on "chat_conversation" ("territory_id", "kind") where kind in ('TERRITORY_PUBLIC', 'TERRITORY_RESIDENTS');`);
    this.addSql(`create unique index "chat_conversation_direct_unique" on "chat_conversation" ("territory_id", "direct_key") where direct_key is not null;`);

    this.addSql(`create table "chat_participant" ("conversation_id" uuid not null, "user_id" uuid not null, "role" varchar(10) not null, "joined_at_utc" timestamptz not null, "last_read_message_id" uuid null, "last_read_seq" int not null default 0, "last_read_at_utc" timestamptz null, "muted_until_utc" timestamptz null, primary key ("conversation_id", "user_id"));`);
    this.addSql(`create index "chat_participant_user_id_index" on "chat_participant" ("user_id");`);

    this.addSql(`create table "chat_message" ("id" uuid not null, "created_at_utc" timestamptz not null, "conversation_id" uuid not null, "seq" int not null, "sender_user_id" uuid not null, "text" varchar(4000) not null, "media_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "chat_message_sender_user_id_index" on "chat_message" ("sender_user_id");`);
    this.addSql(`create index "chat_message_conversation_id_created_at_utc_index" on "chat_message" ("conversation_id", "created_at_utc");`);
    this.addSql(`alter table "chat_message" add constraint "chat_message_conversation_id_seq_unique" unique ("conversation_id", "seq");`);

    this.addSql(`alter table "chat_conversation" add constraint "chat_conversation_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "chat_conversation" add constraint "chat_conversation_created_by_user_id_foreign" foreign key ("created_by_user_id") references "app_user" ("id") on delete set null;`);

    this.addSql(`alter table "chat_participant" add constraint "chat_participant_conversation_id_foreign" foreign key ("conversation_id") references "chat_conversation" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "chat_participant" add constraint "chat_participant_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "chat_message" add constraint "chat_message_conversation_id_foreign" foreign key ("conversation_id") references "chat_conversation" ("id") on delete cascade;`);
    this.addSql(`alter table "chat_message" add constraint "chat_message_sender_user_id_foreign" foreign key ("sender_user_id") references "app_user" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "chat_participant" drop constraint "chat_participant_conversation_id_foreign";`);
    this.addSql(`alter table "chat_message" drop constraint "chat_message_conversation_id_foreign";`);

    this.addSql(`drop table if exists "chat_conversation" cascade;`);
    this.addSql(`drop table if exists "chat_participant" cascade;`);
    this.addSql(`drop table if exists "chat_message" cascade;`);
  }

}
