import { Migration } from '@mikro-orm/migrations';

export class Migration20261125154258 extends Migration {

  override name = 'Migration20261125154258';

  override up(): void | Promise<void> {
    this.addSql(`create table "territory_post_counter" ("territory_id" uuid not null, "visibility" varchar(20) not null, "published_count" int not null default 0, primary key ("territory_id", "visibility"));`);

    // The counters move with every statement writing posts, in its transaction: one aggregated upsert per statement
    // from its transition tables (a bulk insert of 200k posts is one upsert per territory and visibility, and an update
    // that changes no status, visibility or territory, such as a like count, nets to nothing and writes nothing).
    this.addSql(`create function post_feed_counter() returns trigger language plpgsql as $$
      begin
        -- Each branch reads only the transition tables its trigger declares.
        if tg_op = 'INSERT' then
          insert into territory_post_counter (territory_id, visibility, published_count)
          select territory_id, visibility, count(*) from new_posts where status = 'PUBLISHED'
          group by territory_id, visibility order by territory_id, visibility
          on conflict (territory_id, visibility) do update set published_count = territory_post_counter.published_count + excluded.published_count;
        elsif tg_op = 'DELETE' then
          insert into territory_post_counter (territory_id, visibility, published_count)
          -- Posts going with their territory (a cascade) take its counters with them: nothing to count down.
          select territory_id, visibility, -count(*) from old_posts
           where status = 'PUBLISHED' and exists (select 1 from territory t where t.id = old_posts.territory_id)
          group by territory_id, visibility order by territory_id, visibility
          on conflict (territory_id, visibility) do update set published_count = territory_post_counter.published_count + excluded.published_count;
        else
          insert into territory_post_counter (territory_id, visibility, published_count)
          select d.territory_id, d.visibility, sum(d.delta) from (
            select territory_id, visibility, 1 as delta from new_posts where status = 'PUBLISHED'
            union all
            select territory_id, visibility, -1 from old_posts where status = 'PUBLISHED'
          ) d
          group by d.territory_id, d.visibility having sum(d.delta) <> 0 order by d.territory_id, d.visibility
          on conflict (territory_id, visibility) do update set published_count = territory_post_counter.published_count + excluded.published_count;
        end if;
        return null;
      end $$;`);
    this.addSql(`insert into territory_post_counter (territory_id, visibility, published_count)
      select territory_id, visibility, count(*) from post where status = 'PUBLISHED' group by territory_id, visibility;`);
    this.addSql(`create trigger "post_feed_counter_insert" after insert on "post" referencing new table as new_posts for each statement execute function post_feed_counter();`);
    this.addSql(`create trigger "post_feed_counter_update" after update on "post" referencing old table as old_posts new table as new_posts for each statement execute function post_feed_counter();`);
    this.addSql(`create trigger "post_feed_counter_delete" after delete on "post" referencing old table as old_posts for each statement execute function post_feed_counter();`);

    this.addSql(`alter table "territory_post_counter" add constraint "territory_post_counter_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "territory_post_counter" cascade;`);

    this.addSql(`drop trigger if exists "post_feed_counter_insert" on "post";`);
    this.addSql(`drop trigger if exists "post_feed_counter_update" on "post";`);
    this.addSql(`drop trigger if exists "post_feed_counter_delete" on "post";`);
    this.addSql(`drop function if exists post_feed_counter();`);
  }

}
