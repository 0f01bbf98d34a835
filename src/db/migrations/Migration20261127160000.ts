import { Migration } from '@mikro-orm/migrations';

/** Adds `delta` rows (territory_id, author_user_id, visibility, n) to the counters; a territory being deleted is skipped. */
const addToCounters = (delta: string) => `insert into territory_author_post_counter (territory_id, author_user_id, visibility, published_count)
  select d.territory_id, d.author_user_id, d.visibility, sum(d.n) from (${delta}) d
   where exists (select 1 from territory t where t.id = d.territory_id)
   group by d.territory_id, d.author_user_id, d.visibility having sum(d.n) <> 0 order by d.territory_id, d.author_user_id, d.visibility
  on conflict (territory_id, author_user_id, visibility) do update
    set published_count = territory_author_post_counter.published_count + excluded.published_count;`;

const published = (rows: string, sign: string) =>
  `select territory_id, author_user_id, visibility, ${sign}1 as n from ${rows} where status = 'PUBLISHED'`;

/**
 * A territory's PUBLISHED posts by author and visibility (issue 14): the feed's `totalCount` for a reader who blocked
 * someone took off their blocked users' posts by counting them (post_feed_idx_count), on every page: ~3 ms for each
 * blocked author of 25k posts in the bench's territory, 2.5-12 ms a page for one to three. Now it reads their rows of
 * this table by key, as a visitor's own RESIDENTS_ONLY posts (src/routers/feed/feed.queries.ts `storedCount`). Kept
 * like territory_post_counter (Migration20261125154258): one aggregated upsert per statement writing posts, from its
 * transition tables, in its transaction.
 */
export class Migration20261127160000 extends Migration {
  override name = 'Migration20261127160000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "territory_author_post_counter" ("territory_id" uuid not null, "author_user_id" uuid not null, "visibility" varchar(20) not null, "published_count" int not null default 0, primary key ("territory_id", "author_user_id", "visibility"));`,
    );
    this.addSql(
      `alter table "territory_author_post_counter" add constraint "territory_author_post_counter_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`,
    );
    this.addSql(`create function post_author_counter() returns trigger language plpgsql as $$
      begin
        -- Each branch reads only the transition tables its trigger declares.
        if tg_op = 'INSERT' then
          ${addToCounters(published('new_posts', ''))}
        elsif tg_op = 'DELETE' then
          ${addToCounters(published('old_posts', '-'))}
        else
          ${addToCounters(`${published('new_posts', '')} union all ${published('old_posts', '-')}`)}
        end if;
        return null;
      end $$;`);
    this.addSql(addToCounters(published('post', '')));
    this.addSql(`create trigger "post_author_counter_insert" after insert on "post" referencing new table as new_posts for each statement execute function post_author_counter();`);
    this.addSql(
      `create trigger "post_author_counter_update" after update on "post" referencing old table as old_posts new table as new_posts for each statement execute function post_author_counter();`,
    );
    this.addSql(`create trigger "post_author_counter_delete" after delete on "post" referencing old table as old_posts for each statement execute function post_author_counter();`);
  }

  override down(): void | Promise<void> {
    for (const event of ['insert', 'update', 'delete']) this.addSql(`drop trigger if exists "post_author_counter_${event}" on "post";`);
    this.addSql(`drop function if exists post_author_counter();`);
    this.addSql(`drop table if exists "territory_author_post_counter" cascade;`);
  }
}
