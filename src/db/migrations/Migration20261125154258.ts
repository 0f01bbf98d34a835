import { Migration } from '@mikro-orm/migrations';

export class Migration20261125154258 extends Migration {

  override name = 'Migration20261125154258';

  override up(): void | Promise<void> {
    this.addSql(`create table "territory_post_counter" ("territory_id" uuid not null, "visibility" varchar(20) not null, "published_count" int not null default 0, primary key ("territory_id", "visibility"));`);

    // The counter moves with every write of a post's status, visibility or territory, in that write's transaction.
    this.addSql(`create function post_feed_counter() returns trigger language plpgsql as $$
      begin
        if tg_op = 'UPDATE' and old.status is not distinct from new.status and old.visibility is not distinct from new.visibility
           and old.territory_id is not distinct from new.territory_id then
          return null;
        end if;
        if tg_op in ('UPDATE', 'DELETE') and old.status = 'PUBLISHED' then
          update territory_post_counter set published_count = published_count - 1
           where territory_id = old.territory_id and visibility = old.visibility;
        end if;
        if tg_op in ('INSERT', 'UPDATE') and new.status = 'PUBLISHED' then
          insert into territory_post_counter (territory_id, visibility, published_count) values (new.territory_id, new.visibility, 1)
          on conflict (territory_id, visibility) do update set published_count = territory_post_counter.published_count + 1;
        end if;
        return null;
      end $$;`);
    this.addSql(`insert into territory_post_counter (territory_id, visibility, published_count)
      select territory_id, visibility, count(*) from post where status = 'PUBLISHED' group by territory_id, visibility;`);
    this.addSql(`create trigger "post_feed_counter" after insert or delete or update of "status", "visibility", "territory_id" on "post" for each row execute function post_feed_counter();`);

    this.addSql(`alter table "territory_post_counter" add constraint "territory_post_counter_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "territory_post_counter" cascade;`);

    this.addSql(`drop trigger if exists "post_feed_counter" on "post";`);
    this.addSql(`drop function if exists post_feed_counter();`);
  }

}
