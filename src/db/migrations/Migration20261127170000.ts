import { Migration } from '@mikro-orm/migrations';

/** Adds `delta` rows (status, n) to the counters. */
const addToCounters = (delta: string) => `insert into territory_status_counter (status, territory_count)
  select d.status, sum(d.n) from (${delta}) d group by d.status having sum(d.n) <> 0 order by d.status
  on conflict (status) do update set territory_count = territory_status_counter.territory_count + excluded.territory_count;`;

const counted = (rows: string, sign: string) => `select status, ${sign}1 as n from ${rows}`;

/**
 * How many territories there are in each status (issue 14): the territory list's `totalCount`
 * (`GET /api/v1/territories/paged` without a filter) counted every ACTIVE territory on every page, a sequential scan
 * of the table (21 ms of PostgreSQL CPU a page at 100k territories; now 0.06-0.08). Kept like territory_post_counter
 * (Migration20261125154258): one aggregated upsert per statement writing territories, from its transition tables,
 * in its transaction; an update that changes no status nets to nothing and writes nothing.
 */
export class Migration20261127170000 extends Migration {
  override name = 'Migration20261127170000';

  override up(): void | Promise<void> {
    this.addSql(`create table "territory_status_counter" ("status" varchar(20) not null, "territory_count" int not null default 0, primary key ("status"));`);
    this.addSql(`create function territory_status_count() returns trigger language plpgsql as $$
      begin
        -- Each branch reads only the transition tables its trigger declares.
        if tg_op = 'INSERT' then
          ${addToCounters(counted('new_territories', ''))}
        elsif tg_op = 'DELETE' then
          ${addToCounters(counted('old_territories', '-'))}
        else
          ${addToCounters(`${counted('new_territories', '')} union all ${counted('old_territories', '-')}`)}
        end if;
        return null;
      end $$;`);
    this.addSql(addToCounters(counted('territory', '')));
    const referencing = { insert: 'new table as new_territories', update: 'old table as old_territories new table as new_territories', delete: 'old table as old_territories' };
    for (const event of ['insert', 'update', 'delete'] as const) {
      this.addSql(
        `create trigger "territory_status_count_${event}" after ${event} on "territory" referencing ${referencing[event]} for each statement execute function territory_status_count();`,
      );
    }
  }

  override down(): void | Promise<void> {
    for (const event of ['insert', 'update', 'delete']) this.addSql(`drop trigger if exists "territory_status_count_${event}" on "territory";`);
    this.addSql(`drop function if exists territory_status_count();`);
    this.addSql(`drop table if exists "territory_status_counter" cascade;`);
  }
}
