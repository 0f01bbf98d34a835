import { Migration } from '@mikro-orm/migrations';

const TRIGRAM_INDEXES = ['item_active_text_trgm_idx', 'territory_active_name_key_trgm_idx', 'territory_active_city_key_trgm_idx', 'territory_active_state_key_trgm_idx'];

export class Migration20261125221500 extends Migration {

  override name = 'Migration20261125221500';

  override up(): void | Promise<void> {
    // Search indexes without GIN's pending list: new rows go straight into the index instead of a list every search
    // scans until a vacuum merges it. Turning it off keeps what is pending, so it is merged here.
    for (const index of TRIGRAM_INDEXES) {
      this.addSql(`alter index "${index}" set (fastupdate = off);`);
      this.addSql(`select gin_clean_pending_list('"${index}"'::regclass);`);
    }

    this.addSql(`create table "store_item_counter" ("store_id" uuid not null, "type" varchar(20) not null, "category_key" text not null, "active_count" int not null default 0, primary key ("store_id", "type", "category_key"));`);
    this.addSql(`alter table "store_item_counter" add constraint "store_item_counter_store_id_foreign" foreign key ("store_id") references "store" ("id") on delete cascade;`);

    // One aggregated upsert per statement from its transition tables, in the writing transaction (as the feed's
    // post_feed_counter): an update that changes no status, type, category or store nets to nothing and writes nothing.
    this.addSql(`create function item_store_counter() returns trigger language plpgsql as $$
      begin
        -- Each branch reads only the transition tables its trigger declares.
        if tg_op = 'INSERT' then
          insert into store_item_counter (store_id, type, category_key, active_count)
          select store_id, type, lower(coalesce(category, '')), count(*) from new_items where status = 'ACTIVE'
          group by 1, 2, 3 order by 1, 2, 3
          on conflict (store_id, type, category_key) do update set active_count = store_item_counter.active_count + excluded.active_count;
        elsif tg_op = 'DELETE' then
          insert into store_item_counter (store_id, type, category_key, active_count)
          -- Items going with their store (a cascade) take its counters with them: nothing to count down.
          select store_id, type, lower(coalesce(category, '')), -count(*) from old_items
           where status = 'ACTIVE' and exists (select 1 from store s where s.id = old_items.store_id)
          group by 1, 2, 3 order by 1, 2, 3
          on conflict (store_id, type, category_key) do update set active_count = store_item_counter.active_count + excluded.active_count;
        else
          insert into store_item_counter (store_id, type, category_key, active_count)
          select d.store_id, d.type, d.category_key, sum(d.delta) from (
            select store_id, type, lower(coalesce(category, '')) as category_key, 1 as delta from new_items where status = 'ACTIVE'
            union all
            select store_id, type, lower(coalesce(category, '')), -1 from old_items where status = 'ACTIVE'
          ) d
          group by 1, 2, 3 having sum(d.delta) <> 0 order by 1, 2, 3
          on conflict (store_id, type, category_key) do update set active_count = store_item_counter.active_count + excluded.active_count;
        end if;
        return null;
      end $$;`);
    this.addSql(`insert into store_item_counter (store_id, type, category_key, active_count)
      select store_id, type, lower(coalesce(category, '')), count(*) from item where status = 'ACTIVE' group by 1, 2, 3;`);
    this.addSql(`create trigger "item_store_counter_insert" after insert on "item" referencing new table as new_items for each statement execute function item_store_counter();`);
    this.addSql(`create trigger "item_store_counter_update" after update on "item" referencing old table as old_items new table as new_items for each statement execute function item_store_counter();`);
    this.addSql(`create trigger "item_store_counter_delete" after delete on "item" referencing old table as old_items for each statement execute function item_store_counter();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "item_store_counter_insert" on "item";`);
    this.addSql(`drop trigger if exists "item_store_counter_update" on "item";`);
    this.addSql(`drop trigger if exists "item_store_counter_delete" on "item";`);
    this.addSql(`drop function if exists item_store_counter();`);
    this.addSql(`drop table if exists "store_item_counter" cascade;`);
    for (const index of TRIGRAM_INDEXES) this.addSql(`alter index "${index}" reset (fastupdate);`);
  }

}
