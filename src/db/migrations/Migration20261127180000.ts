import { Migration } from '@mikro-orm/migrations';

/**
 * The planner is told that messages have many senders. A message page of the default size read by someone who blocked
 * somebody is a named statement that keeps a generic plan (`isNamedMessagePage`, chat.queries.ts), its hidden senders
 * an array PostgreSQL costs as ten unknown ones: with the sampled statistics of a young platform (a few senders in
 * all), ten of them looked like every message, the page's filter like keeping almost none, and the cheapest plan a
 * bitmap of the conversation's messages and a sort, which reads and sorts a large conversation whole (chosen in
 * test/chat/page-generic-plans.test.ts without this). With n_distinct a fixed fraction of the rows (-0.01: a sender
 * per hundred messages), ten senders are a small part of a conversation, and the plan walks the (conversation, seq)
 * index backwards and stops at the page, as for a reader who blocked nobody.
 */
export class Migration20261127180000 extends Migration {
  override name = 'Migration20261127180000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "chat_message" alter column "sender_user_id" set (n_distinct = -0.01);`);
    this.addSql(`analyze "chat_message";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "chat_message" alter column "sender_user_id" reset (n_distinct);`);
    this.addSql(`analyze "chat_message";`);
  }
}
