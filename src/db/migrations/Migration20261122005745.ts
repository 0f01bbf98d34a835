import { Migration } from '@mikro-orm/migrations';

export class Migration20261122005745 extends Migration {

  override name = 'Migration20261122005745';

  override up(): void | Promise<void> {
    this.addSql(`create table "audit_entry" ("id" uuid not null, "created_at_utc" timestamptz not null, "actor_user_id" uuid null, "action" varchar(100) not null, "subject_type" varchar(50) not null, "subject_id" varchar(100) null, "territory_id" uuid null, "data" jsonb not null default '{}', primary key ("id"));`);
    this.addSql(`create index "audit_entry_subject_type_subject_id_index" on "audit_entry" ("subject_type", "subject_id");`);
    this.addSql(`create index "audit_entry_actor_user_id_created_at_utc_index" on "audit_entry" ("actor_user_id", "created_at_utc");`);

    this.addSql(`create table "outbox_message" ("id" uuid not null, "created_at_utc" timestamptz not null, "type" varchar(50) not null, "recipient_user_ids" text[] not null, "title" text not null, "body" text not null, "data" jsonb not null default '{}', "source_key" varchar(200) not null, "processed_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "outbox_message_pending_idx" on "outbox_message" ("created_at_utc") where processed_at_utc is null;`);

    this.addSql(`create table "system_config" ("key" varchar(200) not null, "value" text not null, "category" varchar(100) null, "description" varchar(1000) null, "created_at_utc" timestamptz not null, "updated_at_utc" timestamptz not null, "updated_by_user_id" uuid null, primary key ("key"));`);

    this.addSql(`create table "app_user" ("id" uuid not null, "created_at_utc" timestamptz not null, "display_name" varchar(200) not null, "email" varchar(320) null, "auth_provider" varchar(50) not null, "external_id" varchar(255) not null, "cpf" varchar(11) null, "foreign_document" varchar(100) null, "phone_number" varchar(30) null, "identity_verification_status" varchar(20) not null default 'Unverified', "two_factor_enabled" boolean not null default false, "two_factor_secret" varchar(64) null, "two_factor_pending_secret" varchar(64) null, "two_factor_last_step" bigint null, "deleted_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "app_user" add constraint "app_user_cpf_unique" unique ("cpf");`);
    this.addSql(`alter table "app_user" add constraint "app_user_auth_provider_external_id_unique" unique ("auth_provider", "external_id");`);

    this.addSql(`create table "two_factor_challenge" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "expires_at_utc" timestamptz not null, "attempts" int not null default 0, "consumed_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "two_factor_challenge_user_id_index" on "two_factor_challenge" ("user_id");`);

    this.addSql(`create table "territory" ("id" uuid not null, "created_at_utc" timestamptz not null, "name" varchar(200) not null, "description" varchar(2000) null, "city" varchar(200) not null, "state" varchar(100) not null, "latitude" double precision not null, "longitude" double precision not null, "radius_km" double precision not null default 5, "parent_territory_id" uuid null, "status" varchar(20) not null, "tags" text[] not null default '{}', "enabled_flags" text[] not null default '{}', "suggested_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "territory_active_geo_idx" on "territory" using gist (point("longitude", "latitude")) where status = 'ACTIVE';`);
    this.addSql(`create index "territory_active_name_idx" on "territory" ("name", "id") where status = 'ACTIVE';`);
    this.addSql(`create index "territory_active_name_trgm_idx" on "territory" using gin ("name" gin_trgm_ops) where status = 'ACTIVE';`);
    this.addSql(`create index "territory_active_city_trgm_idx" on "territory" using gin ("city" gin_trgm_ops) where status = 'ACTIVE';`);
    this.addSql(`create index "territory_active_state_trgm_idx" on "territory" using gin ("state" gin_trgm_ops) where status = 'ACTIVE';`);
    this.addSql(`create index "territory_active_name_prefix_idx" on "territory" (lower("name") text_pattern_ops) where status = 'ACTIVE';`);
    this.addSql(`create index "territory_active_city_prefix_idx" on "territory" (lower("city") text_pattern_ops) where status = 'ACTIVE';`);
    this.addSql(`create index "territory_active_state_prefix_idx" on "territory" (lower("state") text_pattern_ops) where status = 'ACTIVE';`);
    this.addSql(`create unique index "territory_name_city_state_unique" on "territory" (lower(btrim("name")), lower(btrim("city")), lower(btrim("state"))) where status <> 'REJECTED';`);

    this.addSql(`create table "territory_selection" ("user_id" uuid not null, "session_id" varchar(200) not null, "territory_id" uuid not null, "updated_at_utc" timestamptz not null, primary key ("user_id", "session_id"));`);

    this.addSql(`create table "territory_moderation_rule" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "rule_type" varchar(40) not null, "name" varchar(200) not null, "config" jsonb not null default '{}', "is_active" boolean not null default true, "created_by_user_id" uuid null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "territory_moderation_rule_active_idx" on "territory_moderation_rule" ("territory_id", "rule_type") where is_active;`);

    this.addSql(`create table "territory_membership" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "user_id" uuid not null, "role" varchar(20) not null, "geo_verified_at_utc" timestamptz null, "document_verified_at_utc" timestamptz null, "capabilities" text[] not null default '{}', primary key ("id"));`);
    this.addSql(`create index "territory_membership_user_id_index" on "territory_membership" ("user_id");`);
    this.addSql(`alter table "territory_membership" add constraint "territory_membership_territory_id_user_id_unique" unique ("territory_id", "user_id");`);

    this.addSql(`create table "territory_media_config" ("territory_id" uuid not null, "posts" jsonb not null default '{}', "events" jsonb not null default '{}', "marketplace" jsonb not null default '{}', "chat" jsonb not null default '{}', "updated_by_user_id" uuid null, "created_at_utc" timestamptz not null, "updated_at_utc" timestamptz not null, primary key ("territory_id"));`);

    this.addSql(`create table "territory_asset" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "created_by_user_id" uuid not null, "type" varchar(50) not null, "subtype" varchar(40) null, "name" varchar(200) not null, "description" varchar(1000) null, "geo_anchors" jsonb not null, "status" varchar(20) not null default 'Suggested', "validation_count" int not null default 0, "curated_at_utc" timestamptz null, "curated_by_user_id" uuid null, "archived_at_utc" timestamptz null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "territory_asset_created_by_user_id_index" on "territory_asset" ("created_by_user_id");`);
    this.addSql(`create index "territory_asset_territory_idx" on "territory_asset" ("territory_id", "created_at_utc" desc, "id" desc);`);
    this.addSql(`create index "territory_asset_active_idx" on "territory_asset" ("territory_id", "created_at_utc" desc, "id" desc) where status = 'Active';`);

    this.addSql(`create table "refresh_token" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "family_id" uuid not null, "token_hash" varchar(64) not null, "expires_at_utc" timestamptz not null, "consumed_at_utc" timestamptz null, "revoked_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "refresh_token_user_id_index" on "refresh_token" ("user_id");`);
    this.addSql(`create index "refresh_token_family_id_index" on "refresh_token" ("family_id");`);
    this.addSql(`alter table "refresh_token" add constraint "refresh_token_token_hash_unique" unique ("token_hash");`);

    this.addSql(`create table "recovery_code" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "code_hash" varchar(64) not null, "used_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "recovery_code_user_id_index" on "recovery_code" ("user_id");`);

    this.addSql(`create table "post" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "author_user_id" uuid not null, "title" varchar(200) not null, "content" text not null, "type" varchar(20) not null, "visibility" varchar(20) not null, "status" varchar(20) not null default 'PUBLISHED', "tags" text[] not null default '{}', "map_entity_id" uuid null, "asset_ids" text[] not null default '{}', "event_id" uuid null, "alert_id" uuid null, "like_count" int not null default 0, "comment_count" int not null default 0, "share_count" int not null default 0, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "post_feed_idx" on "post" ("territory_id", "created_at_utc" desc, "id" desc) where status = 'PUBLISHED';`);
    this.addSql(`create index "post_feed_idx_count" on "post" ("territory_id", "visibility", "author_user_id") where status = 'PUBLISHED';`);
    this.addSql(`create index "post_map_pin_idx" on "post" ("territory_id", "created_at_utc" desc, "id" desc) include ("map_entity_id", "visibility", "author_user_id") where status = 'PUBLISHED' and map_entity_id is not null;`);
    this.addSql(`create index "post_author_idx" on "post" ("author_user_id", "created_at_utc" desc, "id" desc);`);
    this.addSql(`create index "post_map_entity_idx" on "post" ("map_entity_id") where map_entity_id is not null;`);
    this.addSql(`create index "post_event_idx" on "post" ("event_id") where event_id is not null;`);
    this.addSql(`create index "post_alert_idx" on "post" ("alert_id") where alert_id is not null;`);
    this.addSql(`create index "post_asset_ids_idx" on "post" using gin ("asset_ids");`);

    this.addSql(`create table "post_share" ("id" uuid not null, "created_at_utc" timestamptz not null, "post_id" uuid not null, "user_id" uuid not null, primary key ("id"));`);
    this.addSql(`create index "post_share_user_id_index" on "post_share" ("user_id");`);
    this.addSql(`alter table "post_share" add constraint "post_share_post_user_uniq" unique ("post_id", "user_id");`);

    this.addSql(`create table "post_like" ("post_id" uuid not null, "user_id" uuid not null, "created_at_utc" timestamptz not null, primary key ("post_id", "user_id"));`);
    this.addSql(`create index "post_like_user_id_index" on "post_like" ("user_id");`);

    this.addSql(`create table "post_comment" ("id" uuid not null, "created_at_utc" timestamptz not null, "post_id" uuid not null, "author_user_id" uuid not null, "content" text not null, primary key ("id"));`);
    this.addSql(`create index "post_comment_author_user_id_index" on "post_comment" ("author_user_id");`);
    this.addSql(`create index "post_comment_post_idx" on "post_comment" ("post_id", "created_at_utc", "id");`);

    this.addSql(`create table "notification" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "type" varchar(50) not null, "title" text not null, "body" text not null, "data" jsonb not null default '{}', "source_key" varchar(200) not null, "read_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "notification_user_created_idx" on "notification" ("user_id", "created_at_utc", "id");`);
    this.addSql(`alter table "notification" add constraint "notification_source_user_uniq" unique ("source_key", "user_id");`);

    this.addSql(`create table "natural_asset" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "created_by_user_id" uuid not null, "type" varchar(20) not null, "name" varchar(200) not null, "description" varchar(1000) null, "latitude" double precision not null, "longitude" double precision not null, "status" varchar(20) not null default 'PENDING', "published_at_utc" timestamptz null, "published_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "natural_asset_created_by_user_id_index" on "natural_asset" ("created_by_user_id");`);
    this.addSql(`create index "natural_asset_territory_idx" on "natural_asset" ("territory_id", "created_at_utc" desc, "id" desc);`);

    this.addSql(`create table "media_asset" ("id" uuid not null, "created_at_utc" timestamptz not null, "uploaded_by_user_id" uuid not null, "media_type" varchar(10) not null, "mime_type" varchar(100) not null, "size_bytes" int not null, "duration_seconds" double precision null, "storage_key" varchar(500) not null, "title" varchar(200) null, "description" varchar(2000) null, "deleted_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "media_asset_uploaded_by_user_id_index" on "media_asset" ("uploaded_by_user_id");`);
    this.addSql(`create index "media_asset_deleted_idx" on "media_asset" ("deleted_at_utc") where deleted_at_utc is not null;`);

    this.addSql(`create table "media_attachment" ("id" uuid not null, "created_at_utc" timestamptz not null, "media_asset_id" uuid not null, "owner_type" varchar(20) not null, "owner_id" uuid not null, "display_order" int not null, primary key ("id"));`);
    this.addSql(`alter table "media_attachment" add constraint "media_attachment_media_asset_id_unique" unique ("media_asset_id");`);
    this.addSql(`create index "media_attachment_owner_type_owner_id_display_order_index" on "media_attachment" ("owner_type", "owner_id", "display_order");`);

    this.addSql(`create table "map_entity" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "created_by_user_id" uuid not null, "name" varchar(200) not null, "category" varchar(100) not null, "latitude" double precision not null, "longitude" double precision not null, "visibility" varchar(20) not null, "status" varchar(20) not null default 'SUGGESTED', "confirmation_count" int not null default 0, "validated_at_utc" timestamptz null, "validated_by_user_id" uuid null, "updated_at_utc" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "map_entity_created_by_user_id_index" on "map_entity" ("created_by_user_id");`);
    this.addSql(`create index "map_entity_territory_idx" on "map_entity" ("territory_id", "created_at_utc" desc, "id" desc);`);

    this.addSql(`create table "map_entity_relation" ("id" uuid not null, "created_at_utc" timestamptz not null, "entity_id" uuid not null, "user_id" uuid not null, primary key ("id"));`);
    this.addSql(`create index "map_entity_relation_user_id_index" on "map_entity_relation" ("user_id");`);
    this.addSql(`alter table "map_entity_relation" add constraint "map_entity_relation_entity_user_uniq" unique ("entity_id", "user_id");`);

    this.addSql(`create table "map_entity_confirmation" ("entity_id" uuid not null, "user_id" uuid not null, "created_at_utc" timestamptz not null, primary key ("entity_id", "user_id"));`);
    this.addSql(`create index "map_entity_confirmation_user_id_index" on "map_entity_confirmation" ("user_id");`);

    this.addSql(`create table "join_request" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "requester_user_id" uuid not null, "message" varchar(2000) null, "status" varchar(20) not null default 'PENDING', "is_transfer" boolean not null default false, "decided_at_utc" timestamptz null, "decided_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "join_request_requester_user_id_territory_id_create_b721e_index" on "join_request" ("requester_user_id", "territory_id", "created_at_utc");`);
    this.addSql(`create index "join_request_territory_id_status_created_at_utc_index" on "join_request" ("territory_id", "status", "created_at_utc");`);
    this.addSql(`create unique index "join_request_one_pending_uniq" on "join_request" ("territory_id", "requester_user_id") where status = 'PENDING';`);

    this.addSql(`create table "join_request_recipient" ("join_request_id" uuid not null, "recipient_user_id" uuid not null, primary key ("join_request_id", "recipient_user_id"));`);
    this.addSql(`create index "join_request_recipient_recipient_user_id_join_request_id_index" on "join_request_recipient" ("recipient_user_id", "join_request_id");`);

    this.addSql(`create table "evidence" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "territory_id" uuid null, "kind" varchar(40) not null, "storage_key" varchar(500) not null, "mime_type" varchar(100) not null, "size_bytes" int not null, "original_file_name" varchar(255) null, primary key ("id"));`);
    this.addSql(`create index "evidence_user_id_index" on "evidence" ("user_id");`);

    this.addSql(`create table "event" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "title" varchar(200) not null, "description" varchar(2000) null, "starts_at_utc" timestamptz not null, "ends_at_utc" timestamptz null, "latitude" double precision not null, "longitude" double precision not null, "location_label" varchar(200) null, "cover_media_id" uuid null, "additional_media_ids" text[] not null default '{}', "status" varchar(20) not null default 'SCHEDULED', "created_by_user_id" uuid not null, "created_by_membership" varchar(20) not null, "post_id" uuid null, "cancelled_at_utc" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "event_post_id_index" on "event" ("post_id");`);
    this.addSql(`create index "event_territory_id_starts_at_utc_index" on "event" ("territory_id", "starts_at_utc");`);
    this.addSql(`create index "event_scheduled_geo_idx" on "event" using gist (point("longitude", "latitude")) where status = 'SCHEDULED';`);

    this.addSql(`create table "event_participation" ("event_id" uuid not null, "user_id" uuid not null, "status" varchar(20) not null, "created_at_utc" timestamptz not null, "updated_at_utc" timestamptz not null, primary key ("event_id", "user_id"));`);
    this.addSql(`create index "event_participation_event_id_status_index" on "event_participation" ("event_id", "status");`);

    this.addSql(`create table "asset_validation" ("asset_id" uuid not null, "user_id" uuid not null, "created_at_utc" timestamptz not null, primary key ("asset_id", "user_id"));`);
    this.addSql(`create index "asset_validation_user_id_index" on "asset_validation" ("user_id");`);

    this.addSql(`create table "alert" ("id" uuid not null, "created_at_utc" timestamptz not null, "territory_id" uuid not null, "title" varchar(200) not null, "description" varchar(2000) not null, "latitude" double precision null, "longitude" double precision null, "status" varchar(20) not null default 'PENDING', "reported_by_user_id" uuid not null, "post_id" uuid null, "decided_at_utc" timestamptz null, "decided_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "alert_validated_territory_idx" on "alert" ("territory_id", "created_at_utc", "id") where status = 'VALIDATED';`);

    this.addSql(`create table "user_block" ("id" uuid not null, "created_at_utc" timestamptz not null, "blocker_user_id" uuid not null, "blocked_user_id" uuid not null, primary key ("id"));`);
    this.addSql(`create index "user_block_blocked_user_id_index" on "user_block" ("blocked_user_id");`);
    this.addSql(`alter table "user_block" add constraint "user_block_blocker_user_id_blocked_user_id_unique" unique ("blocker_user_id", "blocked_user_id");`);

    this.addSql(`create table "user_interest" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "tag" varchar(50) not null, primary key ("id"));`);
    this.addSql(`alter table "user_interest" add constraint "user_interest_user_id_tag_unique" unique ("user_id", "tag");`);

    this.addSql(`create table "user_media_preferences" ("user_id" uuid not null, "show_images" boolean not null default true, "show_videos" boolean not null default true, "show_audio" boolean not null default true, "auto_play_videos" boolean not null default false, "auto_play_audio" boolean not null default false, "created_at_utc" timestamptz not null, "updated_at_utc" timestamptz not null, primary key ("user_id"));`);

    this.addSql(`create table "user_permission" ("id" uuid not null, "created_at_utc" timestamptz not null, "user_id" uuid not null, "permission" varchar(40) not null, "granted_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`alter table "user_permission" add constraint "user_permission_user_id_permission_unique" unique ("user_id", "permission");`);

    this.addSql(`create table "user_preferences" ("user_id" uuid not null, "profile_visibility" varchar(20) not null default 'Public', "contact_visibility" varchar(20) not null default 'ResidentsOnly', "share_location" boolean not null default false, "show_memberships" boolean not null default true, "notifications" jsonb not null default '{}', "created_at_utc" timestamptz not null, "updated_at_utc" timestamptz not null, primary key ("user_id"));`);

    this.addSql(`create table "work_item" ("id" uuid not null, "created_at_utc" timestamptz not null, "type" varchar(40) not null, "status" varchar(20) not null default 'PENDING', "territory_id" uuid null, "subject_type" varchar(40) not null, "subject_id" uuid not null, "payload" jsonb not null default '{}', "required_permission" varchar(40) null, "required_capability" varchar(40) null, "outcome" varchar(20) null, "notes" varchar(2000) null, "completed_at_utc" timestamptz null, "completed_by_user_id" uuid null, "created_by_user_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "work_item_status_type_created_at_utc_index" on "work_item" ("status", "type", "created_at_utc");`);
    this.addSql(`create index "work_item_territory_id_status_created_at_utc_index" on "work_item" ("territory_id", "status", "created_at_utc");`);

    this.addSql(`alter table "two_factor_challenge" add constraint "two_factor_challenge_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "territory" add constraint "territory_parent_territory_id_foreign" foreign key ("parent_territory_id") references "territory" ("id") on delete set null;`);
    this.addSql(`alter table "territory" add constraint "territory_suggested_by_user_id_foreign" foreign key ("suggested_by_user_id") references "app_user" ("id") on delete set null;`);

    this.addSql(`alter table "territory_selection" add constraint "territory_selection_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "territory_selection" add constraint "territory_selection_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);

    this.addSql(`alter table "territory_moderation_rule" add constraint "territory_moderation_rule_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "territory_moderation_rule" add constraint "territory_moderation_rule_created_by_user_id_foreign" foreign key ("created_by_user_id") references "app_user" ("id") on delete set null;`);

    this.addSql(`alter table "territory_membership" add constraint "territory_membership_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "territory_membership" add constraint "territory_membership_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "territory_media_config" add constraint "territory_media_config_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "territory_asset" add constraint "territory_asset_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "territory_asset" add constraint "territory_asset_created_by_user_id_foreign" foreign key ("created_by_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "refresh_token" add constraint "refresh_token_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "recovery_code" add constraint "recovery_code_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "post" add constraint "post_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "post" add constraint "post_author_user_id_foreign" foreign key ("author_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "post_share" add constraint "post_share_post_id_foreign" foreign key ("post_id") references "post" ("id") on delete cascade;`);
    this.addSql(`alter table "post_share" add constraint "post_share_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "post_like" add constraint "post_like_post_id_foreign" foreign key ("post_id") references "post" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "post_like" add constraint "post_like_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "post_comment" add constraint "post_comment_post_id_foreign" foreign key ("post_id") references "post" ("id") on delete cascade;`);
    this.addSql(`alter table "post_comment" add constraint "post_comment_author_user_id_foreign" foreign key ("author_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "notification" add constraint "notification_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "natural_asset" add constraint "natural_asset_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "natural_asset" add constraint "natural_asset_created_by_user_id_foreign" foreign key ("created_by_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "media_asset" add constraint "media_asset_uploaded_by_user_id_foreign" foreign key ("uploaded_by_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "media_attachment" add constraint "media_attachment_media_asset_id_foreign" foreign key ("media_asset_id") references "media_asset" ("id") on delete cascade;`);

    this.addSql(`alter table "map_entity" add constraint "map_entity_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "map_entity" add constraint "map_entity_created_by_user_id_foreign" foreign key ("created_by_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "map_entity_relation" add constraint "map_entity_relation_entity_id_foreign" foreign key ("entity_id") references "map_entity" ("id") on delete cascade;`);
    this.addSql(`alter table "map_entity_relation" add constraint "map_entity_relation_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "map_entity_confirmation" add constraint "map_entity_confirmation_entity_id_foreign" foreign key ("entity_id") references "map_entity" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "map_entity_confirmation" add constraint "map_entity_confirmation_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "join_request" add constraint "join_request_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "join_request" add constraint "join_request_requester_user_id_foreign" foreign key ("requester_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "join_request_recipient" add constraint "join_request_recipient_join_request_id_foreign" foreign key ("join_request_id") references "join_request" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "join_request_recipient" add constraint "join_request_recipient_recipient_user_id_foreign" foreign key ("recipient_user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "evidence" add constraint "evidence_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "evidence" add constraint "evidence_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);

    this.addSql(`alter table "event" add constraint "event_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "event" add constraint "event_created_by_user_id_foreign" foreign key ("created_by_user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "event" add constraint "event_post_id_foreign" foreign key ("post_id") references "post" ("id") on delete set null;`);

    this.addSql(`alter table "event_participation" add constraint "event_participation_event_id_foreign" foreign key ("event_id") references "event" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "event_participation" add constraint "event_participation_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "asset_validation" add constraint "asset_validation_asset_id_foreign" foreign key ("asset_id") references "territory_asset" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "asset_validation" add constraint "asset_validation_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "alert" add constraint "alert_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
    this.addSql(`alter table "alert" add constraint "alert_reported_by_user_id_foreign" foreign key ("reported_by_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "user_block" add constraint "user_block_blocker_user_id_foreign" foreign key ("blocker_user_id") references "app_user" ("id") on delete cascade;`);
    this.addSql(`alter table "user_block" add constraint "user_block_blocked_user_id_foreign" foreign key ("blocked_user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "user_interest" add constraint "user_interest_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "user_media_preferences" add constraint "user_media_preferences_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "user_permission" add constraint "user_permission_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on delete cascade;`);

    this.addSql(`alter table "user_preferences" add constraint "user_preferences_user_id_foreign" foreign key ("user_id") references "app_user" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "work_item" add constraint "work_item_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "two_factor_challenge" drop constraint "two_factor_challenge_user_id_foreign";`);
    this.addSql(`alter table "territory" drop constraint "territory_suggested_by_user_id_foreign";`);
    this.addSql(`alter table "territory_selection" drop constraint "territory_selection_user_id_foreign";`);
    this.addSql(`alter table "territory_moderation_rule" drop constraint "territory_moderation_rule_created_by_user_id_foreign";`);
    this.addSql(`alter table "territory_membership" drop constraint "territory_membership_user_id_foreign";`);
    this.addSql(`alter table "territory_asset" drop constraint "territory_asset_created_by_user_id_foreign";`);
    this.addSql(`alter table "refresh_token" drop constraint "refresh_token_user_id_foreign";`);
    this.addSql(`alter table "recovery_code" drop constraint "recovery_code_user_id_foreign";`);
    this.addSql(`alter table "post" drop constraint "post_author_user_id_foreign";`);
    this.addSql(`alter table "post_share" drop constraint "post_share_user_id_foreign";`);
    this.addSql(`alter table "post_like" drop constraint "post_like_user_id_foreign";`);
    this.addSql(`alter table "post_comment" drop constraint "post_comment_author_user_id_foreign";`);
    this.addSql(`alter table "notification" drop constraint "notification_user_id_foreign";`);
    this.addSql(`alter table "natural_asset" drop constraint "natural_asset_created_by_user_id_foreign";`);
    this.addSql(`alter table "media_asset" drop constraint "media_asset_uploaded_by_user_id_foreign";`);
    this.addSql(`alter table "map_entity" drop constraint "map_entity_created_by_user_id_foreign";`);
    this.addSql(`alter table "map_entity_relation" drop constraint "map_entity_relation_user_id_foreign";`);
    this.addSql(`alter table "map_entity_confirmation" drop constraint "map_entity_confirmation_user_id_foreign";`);
    this.addSql(`alter table "join_request" drop constraint "join_request_requester_user_id_foreign";`);
    this.addSql(`alter table "join_request_recipient" drop constraint "join_request_recipient_recipient_user_id_foreign";`);
    this.addSql(`alter table "evidence" drop constraint "evidence_user_id_foreign";`);
    this.addSql(`alter table "event" drop constraint "event_created_by_user_id_foreign";`);
    this.addSql(`alter table "event_participation" drop constraint "event_participation_user_id_foreign";`);
    this.addSql(`alter table "asset_validation" drop constraint "asset_validation_user_id_foreign";`);
    this.addSql(`alter table "alert" drop constraint "alert_reported_by_user_id_foreign";`);
    this.addSql(`alter table "user_block" drop constraint "user_block_blocker_user_id_foreign";`);
    this.addSql(`alter table "user_block" drop constraint "user_block_blocked_user_id_foreign";`);
    this.addSql(`alter table "user_interest" drop constraint "user_interest_user_id_foreign";`);
    this.addSql(`alter table "user_media_preferences" drop constraint "user_media_preferences_user_id_foreign";`);
    this.addSql(`alter table "user_permission" drop constraint "user_permission_user_id_foreign";`);
    this.addSql(`alter table "user_preferences" drop constraint "user_preferences_user_id_foreign";`);
    this.addSql(`alter table "territory" drop constraint "territory_parent_territory_id_foreign";`);
    this.addSql(`alter table "territory_selection" drop constraint "territory_selection_territory_id_foreign";`);
    this.addSql(`alter table "territory_moderation_rule" drop constraint "territory_moderation_rule_territory_id_foreign";`);
    this.addSql(`alter table "territory_membership" drop constraint "territory_membership_territory_id_foreign";`);
    this.addSql(`alter table "territory_media_config" drop constraint "territory_media_config_territory_id_foreign";`);
    this.addSql(`alter table "territory_asset" drop constraint "territory_asset_territory_id_foreign";`);
    this.addSql(`alter table "post" drop constraint "post_territory_id_foreign";`);
    this.addSql(`alter table "natural_asset" drop constraint "natural_asset_territory_id_foreign";`);
    this.addSql(`alter table "map_entity" drop constraint "map_entity_territory_id_foreign";`);
    this.addSql(`alter table "join_request" drop constraint "join_request_territory_id_foreign";`);
    this.addSql(`alter table "evidence" drop constraint "evidence_territory_id_foreign";`);
    this.addSql(`alter table "event" drop constraint "event_territory_id_foreign";`);
    this.addSql(`alter table "alert" drop constraint "alert_territory_id_foreign";`);
    this.addSql(`alter table "work_item" drop constraint "work_item_territory_id_foreign";`);
    this.addSql(`alter table "asset_validation" drop constraint "asset_validation_asset_id_foreign";`);
    this.addSql(`alter table "post_share" drop constraint "post_share_post_id_foreign";`);
    this.addSql(`alter table "post_like" drop constraint "post_like_post_id_foreign";`);
    this.addSql(`alter table "post_comment" drop constraint "post_comment_post_id_foreign";`);
    this.addSql(`alter table "event" drop constraint "event_post_id_foreign";`);
    this.addSql(`alter table "media_attachment" drop constraint "media_attachment_media_asset_id_foreign";`);
    this.addSql(`alter table "map_entity_relation" drop constraint "map_entity_relation_entity_id_foreign";`);
    this.addSql(`alter table "map_entity_confirmation" drop constraint "map_entity_confirmation_entity_id_foreign";`);
    this.addSql(`alter table "join_request_recipient" drop constraint "join_request_recipient_join_request_id_foreign";`);
    this.addSql(`alter table "event_participation" drop constraint "event_participation_event_id_foreign";`);

    this.addSql(`drop table if exists "audit_entry" cascade;`);
    this.addSql(`drop table if exists "outbox_message" cascade;`);
    this.addSql(`drop table if exists "system_config" cascade;`);
    this.addSql(`drop table if exists "app_user" cascade;`);
    this.addSql(`drop table if exists "two_factor_challenge" cascade;`);
    this.addSql(`drop table if exists "territory" cascade;`);
    this.addSql(`drop table if exists "territory_selection" cascade;`);
    this.addSql(`drop table if exists "territory_moderation_rule" cascade;`);
    this.addSql(`drop table if exists "territory_membership" cascade;`);
    this.addSql(`drop table if exists "territory_media_config" cascade;`);
    this.addSql(`drop table if exists "territory_asset" cascade;`);
    this.addSql(`drop table if exists "refresh_token" cascade;`);
    this.addSql(`drop table if exists "recovery_code" cascade;`);
    this.addSql(`drop table if exists "post" cascade;`);
    this.addSql(`drop table if exists "post_share" cascade;`);
    this.addSql(`drop table if exists "post_like" cascade;`);
    this.addSql(`drop table if exists "post_comment" cascade;`);
    this.addSql(`drop table if exists "notification" cascade;`);
    this.addSql(`drop table if exists "natural_asset" cascade;`);
    this.addSql(`drop table if exists "media_asset" cascade;`);
    this.addSql(`drop table if exists "media_attachment" cascade;`);
    this.addSql(`drop table if exists "map_entity" cascade;`);
    this.addSql(`drop table if exists "map_entity_relation" cascade;`);
    this.addSql(`drop table if exists "map_entity_confirmation" cascade;`);
    this.addSql(`drop table if exists "join_request" cascade;`);
    this.addSql(`drop table if exists "join_request_recipient" cascade;`);
    this.addSql(`drop table if exists "evidence" cascade;`);
    this.addSql(`drop table if exists "event" cascade;`);
    this.addSql(`drop table if exists "event_participation" cascade;`);
    this.addSql(`drop table if exists "asset_validation" cascade;`);
    this.addSql(`drop table if exists "alert" cascade;`);
    this.addSql(`drop table if exists "user_block" cascade;`);
    this.addSql(`drop table if exists "user_interest" cascade;`);
    this.addSql(`drop table if exists "user_media_preferences" cascade;`);
    this.addSql(`drop table if exists "user_permission" cascade;`);
    this.addSql(`drop table if exists "user_preferences" cascade;`);
    this.addSql(`drop table if exists "work_item" cascade;`);
  }

}
