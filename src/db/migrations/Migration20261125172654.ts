import { Migration } from '@mikro-orm/migrations';

const LISTED = `('SUGGESTED', 'VALIDATED')`;
const TABLES: Array<[table: string, rows: string]> = [
  ['map_entity', 'entities'],
  ['post', 'posts'],
  ['event', 'events'],
  ['territory_asset', 'assets'],
  ['alert', 'alerts'],
  ['media_attachment', 'attachments'],
  ['media_asset', 'media'],
];

/** Adds `delta` rows (territory_id, pin_type, audience, n) to the counters; a territory being deleted is skipped. */
const addToCounters = (delta: string) => `insert into map_pin_counter (territory_id, pin_type, audience, pin_count)
  select d.territory_id, d.pin_type, d.audience, sum(d.n) from (${delta}) d
   where exists (select 1 from territory t where t.id = d.territory_id)
   group by d.territory_id, d.pin_type, d.audience having sum(d.n) <> 0 order by d.territory_id, d.pin_type, d.audience
  on conflict (territory_id, pin_type, audience) do update set pin_count = map_pin_counter.pin_count + excluded.pin_count;`;

/** More keys than this in one statement (a bulk load) take the one exclusive lock instead of a lock per key. */
const MAX_KEYS = 64;

/**
 * Locks in a fixed order (media assets, then territories, each sorted), held to the end of the transaction: each
 * key's own lock, and a shared lock on the whole map that a statement writing more than MAX_KEYS territories or media
 * assets (a bulk load: the lock table holds a limited number of locks) takes exclusively instead. `territories`,
 * `media`: uuid[] expressions; `locked` and `locked_media`: variables of the function. (Inlined into each trigger
 * function rather than a function of its own: the schema diff keeps only the functions the entities declare, and
 * trigger functions.)
 */
const lock = (territories: string, media: string) => `
        locked := array(select distinct id from unnest((${territories})::uuid[]) as u(id) where id is not null order by id);
        locked_media := array(select distinct id from unnest((${media})::uuid[]) as u(id) where id is not null order by id);
        if cardinality(locked) + cardinality(locked_media) > ${MAX_KEYS} then
          perform pg_advisory_xact_lock(hashtextextended('map_pin all', 0));
        else
          perform pg_advisory_xact_lock_shared(hashtextextended('map_pin all', 0));
          perform pg_advisory_xact_lock(hashtextextended('map_pin media ' || k.id::text, 0)) from unnest(locked_media) as k(id);
          perform pg_advisory_xact_lock(hashtextextended('map_pin territory ' || k.id::text, 0)) from unnest(locked) as k(id);
        end if;
`;

/**
 * Recomputes what the posts and events `posts` and `events` (uuid[] expressions) add to the counters (their own pin
 * and their media pins) from the current data, stores it in map_pin_owner and moves the counters by the difference.
 * `territories` and `media`: more to lock (the old and new territories of moved rows, the media assets written).
 */
const refresh = (posts: string, events: string, territories: string, media: string) => `
        ${lock(`${territories} || array(
          select o.territory_id from map_pin_owner o
           where (o.owner_type = 'POST' and o.owner_id = any(${posts})) or (o.owner_type = 'EVENT' and o.owner_id = any(${events}))
          union select territory_id from post where id = any(${posts})
          union select territory_id from event where id = any(${events}))`, media)}
        with fresh as (
          -- As the pins query reads them: a PUBLISHED post placed at a listed entity of its own territory (PUBLIC when
          -- both are), a SCHEDULED event; the media pins are their attachments whose asset is not marked deleted.
          select 'POST'::varchar(10) as owner_type, p.id as owner_id, p.territory_id,
                 (case when p.visibility = 'PUBLIC' and e.visibility = 'PUBLIC' then 'PUBLIC' else 'RESIDENTS_ONLY' end)::varchar(20) as audience,
                 1 as pins,
                 (select count(*) from media_attachment ma join media_asset m on m.id = ma.media_asset_id
                   where ma.owner_type = 'POST' and ma.owner_id = p.id and m.deleted_at_utc is null)::int as media,
                 p.created_at_utc as sort_at_utc, p.author_user_id
            from post p join map_entity e on e.id = p.map_entity_id
           where p.id = any(${posts}) and p.status = 'PUBLISHED' and e.territory_id = p.territory_id and e.status in ${LISTED}
          union all
          select 'EVENT', ev.id, ev.territory_id, 'PUBLIC', 1,
                 (select count(*) from media_attachment ma join media_asset m on m.id = ma.media_asset_id
                   where ma.owner_type = 'EVENT' and ma.owner_id = ev.id and m.deleted_at_utc is null)::int,
                 ev.starts_at_utc, ev.created_by_user_id
            from event ev
           where ev.id = any(${events}) and ev.status = 'SCHEDULED'
        ), was as (
          select o.* from map_pin_owner o
           where (o.owner_type = 'POST' and o.owner_id = any(${posts})) or (o.owner_type = 'EVENT' and o.owner_id = any(${events}))
        ), dropped as (
          delete from map_pin_owner o using was
           where o.owner_type = was.owner_type and o.owner_id = was.owner_id
             and not exists (select 1 from fresh f where f.owner_type = was.owner_type and f.owner_id = was.owner_id)
        ), stored as (
          insert into map_pin_owner (owner_type, owner_id, territory_id, audience, pins, media, sort_at_utc, author_user_id)
          select owner_type, owner_id, territory_id, audience, pins, media, sort_at_utc, author_user_id from fresh
          on conflict (owner_type, owner_id) do update
             set territory_id = excluded.territory_id, audience = excluded.audience, pins = excluded.pins, media = excluded.media,
                 sort_at_utc = excluded.sort_at_utc, author_user_id = excluded.author_user_id
           where (map_pin_owner.territory_id, map_pin_owner.audience, map_pin_owner.pins, map_pin_owner.media, map_pin_owner.sort_at_utc, map_pin_owner.author_user_id)
                 is distinct from (excluded.territory_id, excluded.audience, excluded.pins, excluded.media, excluded.sort_at_utc, excluded.author_user_id)
        )
        ${addToCounters(`select territory_id, lower(owner_type) as pin_type, audience, pins as n from fresh
          union all select territory_id, 'media', audience, media from fresh
          union all select territory_id, lower(owner_type), audience, -pins from was
          union all select territory_id, 'media', audience, -media from was`)}
`;

/**
 * Stored map pin counts (issue 14): `GET /api/v1/map/pins/paged` reads its `totalCount` from `map_pin_counter` instead
 * of counting a territory's pins per request (src/routers/map/map.queries.ts `pinsCountQuery`).
 *
 * Entities, assets and alerts are pins by their own row: each statement adds its net change per territory, type and
 * audience, as the feed's post counter does. Posts, events and media are pins through other rows (a post through
 * its entity's status and visibility, a media pin through its attachment, its asset's deletion mark and its owner),
 * so a statement's net change cannot be read from its own rows alone, and cascades (a user's deletion removes their
 * entities and their posts in one statement) write several tables at once. Instead `map_pin_owner` keeps what each
 * post and event adds to the counters, and every write to any of those tables recomputes the owners it touches
 * from the current data (`refresh` below), moving the counters by the difference: whichever trigger runs last for
 * an owner sees all the writes before it, so the order the triggers run in does not matter.
 *
 * Concurrent writes: a recomputation reads rows other transactions may be changing. Transaction-level advisory
 * locks on every territory involved (and on every media asset involved, which has no territory) make the
 * recomputations of overlapping writes take turns, and each reads after taking them (READ COMMITTED: a new snapshot
 * per statement), so the later one sees the earlier one's rows. A trigger that looks owners up through another
 * table (an entity's posts, a media asset's attachments) takes its locks before the lookup.
 */
export class Migration20261125172654 extends Migration {
  override name = 'Migration20261125172654';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "map_pin_owner" ("owner_type" varchar(10) not null, "owner_id" uuid not null, "territory_id" uuid not null, "audience" varchar(20) not null, "pins" int not null, "media" int not null, "sort_at_utc" timestamptz not null, "author_user_id" uuid not null, primary key ("owner_type", "owner_id"));`,
    );
    this.addSql(`create index "map_pin_owner_territory_id_index" on "map_pin_owner" ("territory_id");`);
    this.addSql(
      `create index "map_pin_owner_post_idx" on "map_pin_owner" ("territory_id", "sort_at_utc" desc, "owner_id" desc) include ("audience", "author_user_id") where owner_type = 'POST';`,
    );
    // The entities' index covers the pin filters (src/entities/map.entity.ts).
    this.addSql(`drop index if exists "map_entity_territory_idx";`);
    this.addSql(
      `create index "map_entity_territory_idx" on "map_entity" ("territory_id", "created_at_utc" desc, "id" desc) include ("status", "visibility", "created_by_user_id");`,
    );
    this.addSql(
      `create table "map_pin_counter" ("territory_id" uuid not null, "pin_type" varchar(10) not null, "audience" varchar(20) not null, "pin_count" int not null default 0, primary key ("territory_id", "pin_type", "audience"));`,
    );
    this.addSql(
      `alter table "map_pin_owner" add constraint "map_pin_owner_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "map_pin_counter" add constraint "map_pin_counter_territory_id_foreign" foreign key ("territory_id") references "territory" ("id") on delete cascade;`,
    );

    // Entities: their own pins by delta; the posts placed at those whose listing, visibility or territory changed
    // are recomputed (after locking the territories, so a post being placed there concurrently is seen or waits).
    this.addSql(`create function map_pin_map_entity() returns trigger language plpgsql as $$
      declare
        ids uuid[];
        territories uuid[];
        posts uuid[];
        locked uuid[];
        locked_media uuid[];
      begin
        if tg_op = 'INSERT' then
          ${addToCounters(`select territory_id, 'entity' as pin_type, visibility as audience, 1 as n from new_entities where status in ${LISTED}`)}
          select array_agg(id), array_agg(distinct territory_id) into ids, territories from new_entities where status in ${LISTED};
        elsif tg_op = 'DELETE' then
          ${addToCounters(`select territory_id, 'entity' as pin_type, visibility as audience, -1 as n from old_entities where status in ${LISTED}`)}
          select array_agg(id), array_agg(distinct territory_id) into ids, territories from old_entities where status in ${LISTED};
        else
          ${addToCounters(`select territory_id, 'entity' as pin_type, visibility as audience, 1 as n from new_entities where status in ${LISTED}
            union all select territory_id, 'entity', visibility, -1 from old_entities where status in ${LISTED}`)}
          select array_agg(distinct coalesce(n.id, o.id)), array_agg(distinct n.territory_id) || array_agg(distinct o.territory_id)
            into ids, territories
            from new_entities n full join old_entities o on o.id = n.id
           where (n.status in ${LISTED} or o.status in ${LISTED})
             and (n.id is null or o.id is null
                  or (n.status in ${LISTED}, n.visibility, n.territory_id) is distinct from (o.status in ${LISTED}, o.visibility, o.territory_id));
        end if;
        if ids is not null then
          ${lock('territories', `'{}'`)}
          posts := array(select p.id from post p where p.map_entity_id = any(ids) and p.status = 'PUBLISHED');
          ${refresh('posts', `'{}'::uuid[]`, 'territories', `'{}'::uuid[]`)}
        end if;
        return null;
      end $$;`);

    // Posts and events: those that are or were candidates, when inserted, deleted, or changed in what makes them one.
    this.addSql(`create function map_pin_post() returns trigger language plpgsql as $$
      declare
        ids uuid[];
        territories uuid[];
        locked uuid[];
        locked_media uuid[];
      begin
        if tg_op = 'INSERT' then
          select array_agg(id), array_agg(distinct territory_id) into ids, territories from new_posts where status = 'PUBLISHED' and map_entity_id is not null;
        elsif tg_op = 'DELETE' then
          select array_agg(id), array_agg(distinct territory_id) into ids, territories from old_posts where status = 'PUBLISHED' and map_entity_id is not null;
        else
          select array_agg(distinct coalesce(n.id, o.id)), array_agg(distinct n.territory_id) || array_agg(distinct o.territory_id)
            into ids, territories
            from new_posts n full join old_posts o on o.id = n.id
           where ((n.status = 'PUBLISHED' and n.map_entity_id is not null) or (o.status = 'PUBLISHED' and o.map_entity_id is not null))
             and (n.id is null or o.id is null
                  or (n.status, n.visibility, n.territory_id, n.map_entity_id, n.created_at_utc, n.author_user_id)
                     is distinct from (o.status, o.visibility, o.territory_id, o.map_entity_id, o.created_at_utc, o.author_user_id));
        end if;
        if ids is not null then
          ${refresh('ids', `'{}'::uuid[]`, 'territories', `'{}'::uuid[]`)}
        end if;
        return null;
      end $$;`);
    this.addSql(`create function map_pin_event() returns trigger language plpgsql as $$
      declare
        ids uuid[];
        territories uuid[];
        locked uuid[];
        locked_media uuid[];
      begin
        if tg_op = 'INSERT' then
          select array_agg(id), array_agg(distinct territory_id) into ids, territories from new_events where status = 'SCHEDULED';
        elsif tg_op = 'DELETE' then
          select array_agg(id), array_agg(distinct territory_id) into ids, territories from old_events where status = 'SCHEDULED';
        else
          select array_agg(distinct coalesce(n.id, o.id)), array_agg(distinct n.territory_id) || array_agg(distinct o.territory_id)
            into ids, territories
            from new_events n full join old_events o on o.id = n.id
           where (n.status = 'SCHEDULED' or o.status = 'SCHEDULED')
             and (n.id is null or o.id is null
                  or (n.status, n.territory_id, n.starts_at_utc, n.created_by_user_id) is distinct from (o.status, o.territory_id, o.starts_at_utc, o.created_by_user_id));
        end if;
        if ids is not null then
          ${refresh(`'{}'::uuid[]`, 'ids', 'territories', `'{}'::uuid[]`)}
        end if;
        return null;
      end $$;`);

    // Attachments of posts and events: their owners are recomputed.
    this.addSql(`create function map_pin_media_attachment() returns trigger language plpgsql as $$
      declare
        posts uuid[];
        events uuid[];
        assets uuid[];
        locked uuid[];
        locked_media uuid[];
      begin
        -- Each branch reads only the transition tables its trigger declares; an update counts by the rows that
        -- change what is attached where.
        if tg_op = 'INSERT' then
          select array_agg(distinct owner_id) filter (where owner_type = 'POST'), array_agg(distinct owner_id) filter (where owner_type = 'EVENT'),
                 array_agg(distinct media_asset_id)
            into posts, events, assets
            from new_attachments where owner_type in ('POST', 'EVENT');
        elsif tg_op = 'DELETE' then
          select array_agg(distinct owner_id) filter (where owner_type = 'POST'), array_agg(distinct owner_id) filter (where owner_type = 'EVENT'),
                 array_agg(distinct media_asset_id)
            into posts, events, assets
            from old_attachments where owner_type in ('POST', 'EVENT');
        else
          select array_agg(distinct owner_id) filter (where owner_type = 'POST'), array_agg(distinct owner_id) filter (where owner_type = 'EVENT'),
                 array_agg(distinct media_asset_id)
            into posts, events, assets
            from ((select owner_type, owner_id, media_asset_id from new_attachments except all select owner_type, owner_id, media_asset_id from old_attachments)
                  union all
                  (select owner_type, owner_id, media_asset_id from old_attachments except all select owner_type, owner_id, media_asset_id from new_attachments)) moved
           where owner_type in ('POST', 'EVENT');
        end if;
        if assets is not null then
          posts := coalesce(posts, '{}');
          events := coalesce(events, '{}');
          ${refresh('posts', 'events', `'{}'::uuid[]`, 'assets')}
        end if;
        return null;
      end $$;`);

    // Media assets: marked deleted (or back), or deleted while unmarked; the owners they are attached to are
    // recomputed (after locking the assets, so an attachment being made concurrently is seen or waits).
    this.addSql(`create function map_pin_media_asset() returns trigger language plpgsql as $$
      declare
        ids uuid[];
        posts uuid[];
        events uuid[];
        locked uuid[];
        locked_media uuid[];
      begin
        if tg_op = 'INSERT' then
          return null; -- nothing is attached to a new asset yet
        elsif tg_op = 'DELETE' then
          select array_agg(id) into ids from old_media where deleted_at_utc is null;
        else
          select array_agg(distinct coalesce(n.id, o.id)) into ids
            from new_media n full join old_media o on o.id = n.id
           where n.id is null or o.id is null or (n.deleted_at_utc is null) <> (o.deleted_at_utc is null);
        end if;
        if ids is not null then
          ${lock(`'{}'`, 'ids')}
          select array_agg(distinct owner_id) filter (where owner_type = 'POST'), array_agg(distinct owner_id) filter (where owner_type = 'EVENT')
            into posts, events
            from media_attachment where media_asset_id = any(ids);
          if posts is not null or events is not null then
            posts := coalesce(posts, '{}');
            events := coalesce(events, '{}');
            ${refresh('posts', 'events', `'{}'::uuid[]`, 'ids')}
          end if;
        end if;
        return null;
      end $$;`);

    // Assets (one pin per geo anchor while Active) and alerts (VALIDATED with coordinates): by delta.
    const anchors = (rows: string, sign: string) =>
      `select territory_id, 'asset' as pin_type, 'PUBLIC' as audience, ${sign}jsonb_array_length(geo_anchors) as n from ${rows} where status = 'Active'`;
    const alerts = (rows: string, sign: string) =>
      `select territory_id, 'alert' as pin_type, 'PUBLIC' as audience, ${sign}1 as n from ${rows}
        where status = 'VALIDATED' and latitude is not null and longitude is not null`;
    for (const [table, rows, delta] of [
      ['territory_asset', 'assets', anchors],
      ['alert', 'alerts', alerts],
    ] as const) {
      this.addSql(`create function map_pin_${table}() returns trigger language plpgsql as $$
        begin
          if tg_op = 'INSERT' then
            ${addToCounters(delta(`new_${rows}`, ''))}
          elsif tg_op = 'DELETE' then
            ${addToCounters(delta(`old_${rows}`, '-'))}
          else
            ${addToCounters(`${delta(`new_${rows}`, '')} union all ${delta(`old_${rows}`, '-')}`)}
          end if;
          return null;
        end $$;`);
    }

    // What is there already.
    this.addSql(`do $$
      declare
        posts uuid[] := array(select id from post where status = 'PUBLISHED' and map_entity_id is not null);
        events uuid[] := array(select id from event where status = 'SCHEDULED');
        locked uuid[];
        locked_media uuid[];
      begin
        ${refresh('posts', 'events', `'{}'::uuid[]`, `'{}'::uuid[]`)}
      end $$;`);
    this.addSql(`insert into map_pin_counter (territory_id, pin_type, audience, pin_count)
      select territory_id, 'entity', visibility, count(*) from map_entity where status in ${LISTED} group by territory_id, visibility
      union all select territory_id, 'asset', 'PUBLIC', sum(jsonb_array_length(geo_anchors)) from territory_asset where status = 'Active' group by territory_id
      union all select territory_id, 'alert', 'PUBLIC', count(*) from alert
       where status = 'VALIDATED' and latitude is not null and longitude is not null group by territory_id;`);

    for (const [table, rows] of TABLES) {
      const referencing = { insert: `new table as new_${rows}`, update: `old table as old_${rows} new table as new_${rows}`, delete: `old table as old_${rows}` };
      for (const event of ['insert', 'update', 'delete'] as const) {
        this.addSql(
          `create trigger "${table}_map_pin_${event}" after ${event} on "${table}" referencing ${referencing[event]} for each statement execute function map_pin_${table}();`,
        );
      }
    }
  }

  override down(): void | Promise<void> {
    for (const [table] of TABLES) {
      for (const event of ['insert', 'update', 'delete']) this.addSql(`drop trigger if exists "${table}_map_pin_${event}" on "${table}";`);
      this.addSql(`drop function if exists map_pin_${table}();`);
    }
    this.addSql(`drop table if exists "map_pin_owner" cascade;`);
    this.addSql(`drop table if exists "map_pin_counter" cascade;`);
    this.addSql(`drop index if exists "map_entity_territory_idx";`);
    this.addSql(`create index "map_entity_territory_idx" on "map_entity" ("territory_id", "created_at_utc" desc, "id" desc);`);
  }
}
