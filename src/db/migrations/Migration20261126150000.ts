import { Migration } from '@mikro-orm/migrations';

/**
 * The planner is told that a territory may hold thousands of posts, whatever their average. The feed's named page
 * statements keep a generic plan (src/db/sql.ts `runHotRead`, feedPageQuery), costed for `territory_id = $1` at one
 * n_distinct-th of the rows: where most territories hold a few posts and one holds 100k, that is a handful of rows,
 * and the cheapest plan for a handful is a bitmap scan and a sort, which for the large territory reads and sorts all
 * its rows (43-89 ms a page instead of 0.5, measured) once PostgreSQL keeps that plan. With n_distinct a fixed
 * fraction of the rows (-0.0002), the generic estimate is the largest territory up to 5,000 posts, above the longest
 * span a page reads (4,096 rows), so the plan that reads post_feed_idx in order and stops at the page is chosen, and
 * costs the same for any territory (test/platform/generic-plans.test.ts). Custom plans keep the most common
 * territories' exact counts; the others are estimated larger than they are, which favours the same ordered reads.
 */
export class Migration20261126150000 extends Migration {
  override name = 'Migration20261126150000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "post" alter column "territory_id" set (n_distinct = -0.0002);`);
    this.addSql(`analyze "post";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "post" alter column "territory_id" reset (n_distinct);`);
    this.addSql(`analyze "post";`);
  }
}
