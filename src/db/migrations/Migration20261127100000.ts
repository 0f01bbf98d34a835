import { Migration } from '@mikro-orm/migrations';

/**
 * The planner is told that a territory may hold thousands of items, as Migration20261126150000 tells it for posts.
 * An item search's window (`recentItemsQuery`) is a named statement that keeps a generic plan, costed for the
 * territory at one n_distinct-th of the rows: where most territories hold a few items and one holds 50k, that is a
 * handful, and the cheapest plan for a handful may be a bitmap scan and a sort, which for the large territory reads
 * and sorts all its items (chosen in two of three runs of test/marketplace/search-generic-plans.test.ts without
 * this). With n_distinct a fixed fraction of the rows (-0.0002), the estimate is 5,000 items, above the window's
 * 1,000, so the plan that reads item_active_territory_idx in order and stops at the window is chosen. The plain
 * search's custom plans keep the most common territories' exact counts; the others are estimated larger than they
 * are, which favours the same ordered read.
 */
export class Migration20261127100000 extends Migration {
  override name = 'Migration20261127100000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "item" alter column "territory_id" set (n_distinct = -0.0002);`);
    this.addSql(`analyze "item";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "item" alter column "territory_id" reset (n_distinct);`);
    this.addSql(`analyze "item";`);
  }
}
