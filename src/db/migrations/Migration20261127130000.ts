import { Migration } from '@mikro-orm/migrations';

/**
 * The planner is told that a conversation may hold thousands of messages, as Migration20261126150000 and
 * Migration20261127100000 tell it for a territory's posts and items. A message page of the default size is a named
 * statement that keeps a generic plan (`isNamedMessagePage`, chat.queries.ts), costed for the conversation at one
 * n_distinct-th of the messages: where most conversations hold a few messages and one holds 20k, that is a handful,
 * and the cheapest plan for a handful is a bitmap scan and a sort, which for the large conversation reads and sorts
 * all its messages (chosen in test/chat/page-generic-plans.test.ts without this). With n_distinct a fixed fraction
 * of the rows (-0.0002), the estimate is 5,000 messages, and the plan that walks the (conversation, seq) index
 * backwards and stops at the page is chosen.
 */
export class Migration20261127130000 extends Migration {
  override name = 'Migration20261127130000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "chat_message" alter column "conversation_id" set (n_distinct = -0.0002);`);
    this.addSql(`analyze "chat_message";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "chat_message" alter column "conversation_id" reset (n_distinct);`);
    this.addSql(`analyze "chat_message";`);
  }
}
