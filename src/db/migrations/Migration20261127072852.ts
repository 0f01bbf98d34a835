import { Migration } from '@mikro-orm/migrations';

/**
 * A post's like, comment and share counts move to their own table (`post_interaction_count`, one row per post that
 * has any). With the counts on the post, every like rewrote the post's row and ran the post's statement triggers, and
 * a rewritten page lost its all-visible bit: a later feed page, which skips the rows before it in `post_feed_idx`,
 * then checked each skipped row in the heap (the bench's feed pages: 721-807 buffers a request, 305-328 after). The
 * existing counts are copied, then the columns dropped.
 */
export class Migration20261127072852 extends Migration {
  override name = 'Migration20261127072852';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "post_interaction_count" ("post_id" uuid not null, "like_count" int not null default 0, "comment_count" int not null default 0, "share_count" int not null default 0, primary key ("post_id"));`,
    );
    this.addSql(
      `alter table "post_interaction_count" add constraint "post_interaction_count_post_id_foreign" foreign key ("post_id") references "post" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `insert into "post_interaction_count" ("post_id", "like_count", "comment_count", "share_count")
       select "id", "like_count", "comment_count", "share_count" from "post" where "like_count" <> 0 or "comment_count" <> 0 or "share_count" <> 0;`,
    );
    this.addSql(`alter table "post" drop column "like_count", drop column "comment_count", drop column "share_count";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "post" add "like_count" int4 not null default 0, add "comment_count" int4 not null default 0, add "share_count" int4 not null default 0;`);
    this.addSql(
      `update "post" p set "like_count" = c."like_count", "comment_count" = c."comment_count", "share_count" = c."share_count"
         from "post_interaction_count" c where c."post_id" = p."id";`,
    );
    this.addSql(`drop table if exists "post_interaction_count" cascade;`);
  }
}
