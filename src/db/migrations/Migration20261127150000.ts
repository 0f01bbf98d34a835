import { Migration } from '@mikro-orm/migrations';

const LISTED = `('SUGGESTED', 'VALIDATED')`;

/** Adds `delta` rows (territory_id, author_user_id, pin_type, audience, n) to the counters; a territory being deleted is skipped. */
const addToAuthorCounters = (delta: string) => `insert into map_pin_author_counter (territory_id, author_user_id, pin_type, audience, pin_count)
  select d.territory_id, d.author_user_id, d.pin_type, d.audience, sum(d.n) from (${delta}) d
   where exists (select 1 from territory t where t.id = d.territory_id)
   group by d.territory_id, d.author_user_id, d.pin_type, d.audience having sum(d.n) <> 0
   order by d.territory_id, d.author_user_id, d.pin_type, d.audience
  on conflict (territory_id, author_user_id, pin_type, audience) do update set pin_count = map_pin_author_counter.pin_count + excluded.pin_count;`;

/** One trigger function: the statement's rows (`new_<rows>`, `old_<rows>`) as deltas of `delta(rows, sign)`. */
const byDelta = (fn: string, rows: string, delta: (rows: string, sign: string) => string) => `create function ${fn}() returns trigger language plpgsql as $$
      begin
        -- Each branch reads only the transition tables its trigger declares.
        if tg_op = 'INSERT' then
          ${addToAuthorCounters(delta(`new_${rows}`, ''))}
        elsif tg_op = 'DELETE' then
          ${addToAuthorCounters(delta(`old_${rows}`, '-'))}
        else
          ${addToAuthorCounters(`${delta(`new_${rows}`, '')} union all ${delta(`old_${rows}`, '-')}`)}
        end if;
        return null;
      end $$;`;

// The pins of each kind by their author: the column whose blocks hide them (src/routers/map/map.queries.ts).
const entities = (rows: string, sign: string) =>
  `select territory_id, created_by_user_id as author_user_id, 'entity' as pin_type, visibility as audience, ${sign}1 as n from ${rows} where status in ${LISTED}`;
const assets = (rows: string, sign: string) =>
  `select territory_id, created_by_user_id as author_user_id, 'asset' as pin_type, 'PUBLIC' as audience, ${sign}jsonb_array_length(geo_anchors) as n
     from ${rows} where status = 'Active'`;
const alerts = (rows: string, sign: string) =>
  `select territory_id, reported_by_user_id as author_user_id, 'alert' as pin_type, 'PUBLIC' as audience, ${sign}1 as n
     from ${rows} where status = 'VALIDATED' and latitude is not null and longitude is not null`;
// A post's or event's own pin and its media pins, as map_pin_owner holds them (the author: the post's, or the event's
// creator).
const owners = (rows: string, sign: string) =>
  `select territory_id, author_user_id, lower(owner_type) as pin_type, audience, ${sign}pins as n from ${rows}
   union all select territory_id, author_user_id, 'media', audience, ${sign}media from ${rows}`;

const TRIGGERS: Array<[table: string, fn: string, rows: string, delta: (rows: string, sign: string) => string]> = [
  ['map_entity', 'map_pin_author_map_entity', 'entities', entities],
  ['territory_asset', 'map_pin_author_territory_asset', 'assets', assets],
  ['alert', 'map_pin_author_alert', 'alerts', alerts],
  ['map_pin_owner', 'map_pin_author_owner', 'owners', owners],
];

/**
 * The map pin counts of a viewer who blocked someone, without counting the territory's pins (issue 14): they counted
 * every pin of the territory on each request (31-38 ms of PostgreSQL CPU at the bench's 20k-entity territory, against
 * 0.6 ms for a viewer who blocked nobody). `map_pin_author_counter` is map_pin_counter by author as well: the pins a
 * viewer does not see for their blocks are their blocked users' rows, read by key (src/routers/map/map.queries.ts
 * `pinCountsQuery`).
 *
 * Kept in step in the transaction of each write, like map_pin_counter: entities, assets and alerts by delta from
 * their own statements; posts, events and media from map_pin_owner, which the map_pin_* triggers rewrite with exactly
 * what each post and event adds to map_pin_counter (Migration20261125172654): its changes are map_pin_counter's own
 * deltas for those kinds, with their author. Each statement's upsert is in key order.
 */
export class Migration20261127150000 extends Migration {
  override name = 'Migration20261127150000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "map_pin_author_counter" ("territory_id" uuid not null, "author_user_id" uuid not null, "pin_type" varchar(10) not null, "audience" varchar(20) not null, "pin_count" int not null default 0, primary key ("territory_id", "author_user_id", "pin_type", "audience"));`,
    );
    this.addSql(
      `alter table "map_pin_author_counter" add constraint "map_pin_author_counter_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`,
    );
    for (const [, fn, rows, delta] of TRIGGERS) this.addSql(byDelta(fn, rows, delta));

    // What is there already.
    this.addSql(
      addToAuthorCounters(`${entities('map_entity', '')} union all ${assets('territory_asset', '')} union all ${alerts('alert', '')}
        union all ${owners('map_pin_owner', '')}`),
    );

    for (const [table, fn, rows] of TRIGGERS) {
      const referencing = { insert: `new table as new_${rows}`, update: `old table as old_${rows} new table as new_${rows}`, delete: `old table as old_${rows}` };
      for (const event of ['insert', 'update', 'delete'] as const) {
        this.addSql(`create trigger "${fn}_${event}" after ${event} on "${table}" referencing ${referencing[event]} for each statement execute function ${fn}();`);
      }
    }
  }

  override down(): void | Promise<void> {
    for (const [table, fn] of TRIGGERS) {
      for (const event of ['insert', 'update', 'delete']) this.addSql(`drop trigger if exists "${fn}_${event}" on "${table}";`);
      this.addSql(`drop function if exists ${fn}();`);
    }
    this.addSql(`drop table if exists "map_pin_author_counter" cascade;`);
  }
}
