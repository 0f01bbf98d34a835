/**
 * SQL of the map read paths (entity list, pins), explicit columns and `?` placeholders as
 * run with src/db/sql.ts `runSql`; a benchmark baseline can run the same text through
 * `toNumberedParams`. Every branch starts from an index declared on its entity: map_entity_territory_idx (entities,
 * and the media reached through them), post_map_pin_idx (posts placed at entities), event (territory_id,
 * starts_at_utc), alert_validated_territory_idx, territory_asset_active_idx; the HIDDEN posts a viewer still sees
 * come from post_hidden_idx. The status literals and `map_entity_id is not null` are written out so those partial
 * indexes apply. The published post pins of a page and the pin counts read what the map_pin_* triggers keep
 * (map_pin_owner, map_pin_counter; src/entities/map.entity.ts).
 */
import { isoColumn, type SqlQuery } from '../../db/sql.js';
import type { PinType } from './map.schemas.js';

/** Who is reading: residents also see RESIDENTS_ONLY content; nothing by a user they blocked is shown. */
export interface MapViewer {
  territoryId: string;
  residentsOnlyVisible: boolean;
  blockedUserIds: readonly string[];
  /**
   * HIDDEN posts (a moderation sanction) the viewer still sees (DESIGN 14): with `userId`, their own; with
   * `seesAllHiddenPosts` (the territory's curators and moderators, system admins), every one. Neither: none, and no
   * statement carries the hidden posts' branches. `userId` is given only to a viewer who has HIDDEN posts in the
   * territory (read with the access, `ownHiddenPosts`): with it, a reader who has none paid those branches on every
   * call, and the counts' generic plan looked for their posts among the territory's hidden ones (post_hidden_idx).
   */
  userId?: string;
  seesAllHiddenPosts?: boolean;
}

/** A PostgreSQL array literal of validated UUIDs (they come from the database), passed as one parameter. */
const uuidArray = (ids: readonly string[]) => `{${ids.join(',')}}`;

/** Conditions joined with `and`, each with its parameters, in text order. */
class Where {
  private readonly parts: string[] = [];
  readonly params: unknown[] = [];
  add(sql: string, ...params: unknown[]) {
    this.parts.push(sql);
    this.params.push(...params);
    return this;
  }
  notBlocked(column: string, viewer: MapViewer) {
    if (viewer.blockedUserIds.length > 0) this.add(`${column} <> all(?::uuid[])`, uuidArray(viewer.blockedUserIds));
    return this;
  }
  get sql() {
    return this.parts.join(' and ');
  }
}

/** An entity the viewer may see: listed status, visibility by role (blocks are the caller's to add). */
function visibleEntity(where: Where, alias: string, viewer: MapViewer) {
  where.add(`${alias}.territory_id = ?::uuid`, viewer.territoryId).add(`${alias}.status in ('SUGGESTED', 'VALIDATED')`);
  if (!viewer.residentsOnlyVisible) where.add(`${alias}.visibility = 'PUBLIC'`);
  return where;
}

// ---- Entities ----

export interface MapEntityRow {
  id: string;
  territory_id: string;
  name: string;
  category: string;
  latitude: number;
  longitude: number;
  visibility: string;
  status: string;
  confirmation_count: number;
  created_by_user_id: string;
  created_at_utc: string;
}

const ENTITY_COLUMNS = `e.id, e.territory_id, e.name, e.category, e.latitude, e.longitude, e.visibility, e.status,
  e.confirmation_count, e.created_by_user_id, ${isoColumn('e.created_at_utc')} as created_at_utc`;

function entityWhere(viewer: MapViewer) {
  return visibleEntity(new Where(), 'e', viewer).notBlocked('e.created_by_user_id', viewer);
}

/** The entities the viewer may see, newest first. */
export function entityListQuery(viewer: MapViewer, offset: number, limit: number): SqlQuery {
  const where = entityWhere(viewer);
  return {
    sql: `select ${ENTITY_COLUMNS} from map_entity e where ${where.sql} order by e.created_at_utc desc, e.id desc offset ?::int limit ?::int`,
    params: [...where.params, offset, limit],
  };
}

/**
 * How many entities `entityListQuery` pages through: the map's entity pins are exactly those entities (listed, in the
 * viewer's audiences, their blocked users' left out), so their stored counts answer (pinCountsQuery), not a count
 * of the territory's entities (4-7 ms of PostgreSQL CPU a page at 20k entities, against 0.06-0.08).
 */
export function entityCountQuery(viewer: MapViewer): SqlQuery {
  return pinsCountQuery(viewer, { types: ['entity'] })!;
}

/** One entity, any status; with `lock`, its row is locked (until the caller's transaction ends) for a change of it. */
export function entityByIdQuery(id: string, lock = false): SqlQuery {
  return { sql: `select ${ENTITY_COLUMNS} from map_entity e where e.id = ?::uuid${lock ? ' for no key update' : ''}`, params: [id] };
}

// ---- Pins ----

export interface PinFilter {
  types: readonly PinType[];
  assetId?: string | undefined;
  /** Lower-case; match the asset's type or subtype. */
  assetTypes?: string[] | undefined;
  /** Lower-case; match the asset's subtype. */
  assetSubtypes?: string[] | undefined;
}

export interface PinRow {
  type: PinType;
  id: string;
  latitude: number;
  longitude: number;
  title: string;
  asset_type: string | null;
  asset_subtype: string | null;
}

/**
 * One kind of pin: the select list (type, rank, id, latitude, longitude, title, asset_type, asset_subtype, sort_at,
 * ord), its from/where, and the order matching its index. `count`, when given, is what the pin count reads instead:
 * the same pins, joined the way that suits reading them all, or summed without producing them (`total`, default
 * `count(*)`).
 */
interface Branch {
  select: string;
  from: string;
  where: Where;
  order: string;
  count?: { total?: string; from: string; where: Where };
  /** Selects `pinKey` columns: its rows get their coordinates and title on the page (pinsQuery). */
  lazy?: boolean;
}

const RANK: Record<PinType, number> = { entity: 1, post: 2, event: 3, asset: 4, alert: 5, media: 6 };

/** Columns of a non-asset pin. */
const pin = (type: PinType, id: string, lat: string, lng: string, title: string, sortAt: string) =>
  `'${type}'::text as type, ${RANK[type]} as rank, ${id} as id, ${lat} as latitude, ${lng} as longitude, ${title} as title,
   null::text as asset_type, null::text as asset_subtype, ${sortAt} as sort_at, 0::bigint as ord`;

/**
 * Columns of a pin read by its key alone (`lazy` branches): the page fetches its coordinates and title once it
 * knows which pins it shows (see pinsQuery).
 */
const pinKey = (type: PinType, id: string, sortAt: string) =>
  `'${type}'::text as type, ${RANK[type]} as rank, ${id} as id, null::float8 as latitude, null::float8 as longitude, null::text as title,
   null::text as asset_type, null::text as asset_subtype, ${sortAt} as sort_at, 0::bigint as ord`;

/**
 * Published posts placed at an entity of the territory (post_map_pin_idx), by visibility and blocks; the entity's
 * own conditions are the caller's to join. HIDDEN: the hidden ones the viewer still sees (post_hidden_idx), null
 * when they see none.
 */
function placedPosts(viewer: MapViewer, status: 'PUBLISHED' | 'HIDDEN' = 'PUBLISHED'): Where | null {
  const where = new Where().add('p.territory_id = ?::uuid', viewer.territoryId);
  if (status === 'HIDDEN') {
    if (viewer.seesAllHiddenPosts) where.add(`p.status = 'HIDDEN'`);
    else if (viewer.userId) where.add(`p.status = 'HIDDEN'`).add('p.author_user_id = ?::uuid', viewer.userId);
    else return null;
  } else {
    where.add(`p.status = 'PUBLISHED'`);
  }
  where.add('p.map_entity_id is not null');
  if (!viewer.residentsOnlyVisible) where.add(`p.visibility = 'PUBLIC'`);
  return where.notBlocked('p.author_user_id', viewer);
}

/**
 * The placed posts the viewer sees, as a from-item `p` with `columns`: the published ones, plus (UNION ALL, each
 * branch on its own partial index) the hidden ones they still see. Its parameters come first in the text.
 */
function placedPostsFrom(viewer: MapViewer, columns: string) {
  const published = placedPosts(viewer)!;
  const hidden = placedPosts(viewer, 'HIDDEN');
  if (!hidden) return { sql: 'post p', where: published };
  const where = new Where();
  where.params.push(...published.params, ...hidden.params);
  return { sql: `(select ${columns} from post p where ${published.sql} union all select ${columns} from post p where ${hidden.sql}) p`, where };
}

/** Posts linked to an entity the viewer may see, placed at the entity: all of them, joined as a set. */
function entityPosts(viewer: MapViewer, columns = 'p.id, p.title, p.map_entity_id') {
  const posts = placedPostsFrom(viewer, columns);
  if (posts.sql === 'post p') {
    const where = visibleEntity(new Where(), 'e', viewer);
    where.add(posts.where.sql, ...posts.where.params);
    return { from: 'map_entity e join post p on p.map_entity_id = e.id', where };
  }
  // The posts' parameters come first in the text.
  const where = new Where();
  where.params.push(...posts.where.params);
  visibleEntity(where, 'e', viewer);
  return { from: `map_entity e join ${posts.sql} on p.map_entity_id = e.id`, where };
}

/**
 * The same posts' keys, newest first, for a page. The PUBLISHED ones are the territory's POST rows of map_pin_owner
 * (kept by the map_pin_* triggers: exactly the published posts placed at a listed entity of their territory, with
 * their audience, creation time and author), read index-only on map_pin_owner_post_idx in post_map_pin_idx order, so
 * a deep page skips the posts before it without a post or entity lookup for each. With the hidden posts the viewer
 * sees, those are read from post_hidden_idx, each looking up its entity (the fence, `offset 0`, keeps the lookup a
 * per-post primary-key probe), both reads limited to `upTo` rows (what the page can need at most), and the page is
 * cut from their union: a plain union would be appended and sorted whole.
 */
function newestEntityPosts(viewer: MapViewer, upTo?: number) {
  const published = new Where().add('o.territory_id = ?::uuid', viewer.territoryId).add(`o.owner_type = 'POST'`);
  if (!viewer.residentsOnlyVisible) published.add(`o.audience = 'PUBLIC'`);
  published.notBlocked('o.author_user_id', viewer);
  const hidden = placedPosts(viewer, 'HIDDEN');
  if (!hidden) {
    return { select: pinKey('post', 'o.owner_id', 'o.sort_at_utc'), from: 'map_pin_owner o', where: published, order: 'o.sort_at_utc desc, o.owner_id desc' };
  }
  const limit = upTo === undefined ? '' : ' limit ?::int';
  const limited = (where: Where) => (upTo === undefined ? where.params : [...where.params, upTo]);
  const entity = visibleEntity(new Where(), 'e', viewer);
  const branches = [
    {
      sql: `(select o.owner_id as id, o.sort_at_utc as created_at_utc from map_pin_owner o where ${published.sql} order by o.sort_at_utc desc, o.owner_id desc${limit})`,
      params: limited(published),
    },
    {
      sql: `(select p.id, p.created_at_utc from post p cross join lateral (select 1 from map_entity e where e.id = p.map_entity_id and ${entity.sql} offset 0) e
        where ${hidden.sql} order by p.created_at_utc desc, p.id desc${limit})`,
      // The entity's parameters come first in the text.
      params: [...entity.params, ...limited(hidden)],
    },
  ];
  const where = new Where().add('true');
  where.params.push(...branches.flatMap((b) => b.params));
  return {
    select: pinKey('post', 'p.id', 'p.created_at_utc'),
    from: `(${branches.map((b) => b.sql).join(' union all ')}) p`,
    where,
    order: 'p.created_at_utc desc, p.id desc',
  };
}

/** Scheduled events of the territory (events are public to every signed-in user). */
function scheduledEvents(viewer: MapViewer) {
  const where = new Where().add('ev.territory_id = ?::uuid', viewer.territoryId).add(`ev.status = 'SCHEDULED'`).notBlocked('ev.created_by_user_id', viewer);
  return { from: 'event ev', where };
}

/** `upTo`: at most how many rows of a branch a page can use (offset + limit); absent when counting. */
const BRANCHES: Record<PinType, (viewer: MapViewer, filter: PinFilter, upTo?: number) => Branch> = {
  // Read index-only on map_entity_territory_idx.
  entity: (viewer) => ({
    select: pinKey('entity', 'e.id', 'e.created_at_utc'),
    from: 'map_entity e',
    where: entityWhere(viewer),
    order: 'e.created_at_utc desc, e.id desc',
    lazy: true,
  }),
  post: (viewer, _filter, upTo) => ({
    ...newestEntityPosts(viewer, upTo),
    // The count reads only what post_map_pin_idx (and post_hidden_idx) include: index-only.
    count: entityPosts(viewer, 'p.map_entity_id'),
    lazy: true,
  }),
  event: (viewer) => ({
    select: pin('event', 'ev.id', 'ev.latitude', 'ev.longitude', 'ev.title', 'ev.starts_at_utc'),
    ...scheduledEvents(viewer),
    order: 'ev.starts_at_utc desc, ev.id desc',
  }),
  // One pin per geo anchor, in the order the anchors were given.
  asset: (viewer, filter) => {
    const where = new Where().add('a.territory_id = ?::uuid', viewer.territoryId).add(`a.status = 'Active'`);
    if (filter.assetId) where.add('a.id = ?::uuid', filter.assetId);
    if (filter.assetTypes) {
      const types = `{${filter.assetTypes.map(textArrayItem).join(',')}}`;
      where.add('(a.type = any(?::text[]) or a.subtype = any(?::text[]))', types, types);
    }
    if (filter.assetSubtypes) where.add('a.subtype = any(?::text[])', `{${filter.assetSubtypes.map(textArrayItem).join(',')}}`);
    where.notBlocked('a.created_by_user_id', viewer);
    return {
      select: `'asset'::text as type, ${RANK.asset} as rank, a.id, (g.anchor->>'latitude')::float8 as latitude,
        (g.anchor->>'longitude')::float8 as longitude, a.name as title, a.type as asset_type, a.subtype as asset_subtype,
        a.created_at_utc as sort_at, g.ord`,
      from: 'territory_asset a cross join lateral jsonb_array_elements(a.geo_anchors) with ordinality as g(anchor, ord)',
      where,
      order: 'a.created_at_utc desc, a.id desc, g.ord',
      // The conditions read the asset only: its pins are its anchors, counted without expanding them.
      count: { total: 'coalesce(sum(jsonb_array_length(a.geo_anchors)), 0)', from: 'territory_asset a', where },
    };
  },
  // Alerts without coordinates have no place on the map.
  alert: (viewer) => ({
    select: pin('alert', 'al.id', 'al.latitude', 'al.longitude', 'al.title', 'al.created_at_utc'),
    from: 'alert al',
    where: new Where()
      .add('al.territory_id = ?::uuid', viewer.territoryId)
      .add(`al.status = 'VALIDATED'`)
      .add('al.latitude is not null and al.longitude is not null')
      .notBlocked('al.reported_by_user_id', viewer),
    order: 'al.created_at_utc desc, al.id desc',
  }),
  // Media has no coordinates of its own: it is pinned where its post (through the post's entity) or event is.
  media: (viewer) => {
    const posts = entityPosts(viewer);
    const events = scheduledEvents(viewer);
    // The owner type is a literal in each join, so both columns of the attachment index are known.
    const attached = `(select ma.media_asset_id, e.latitude, e.longitude, p.title
        from ${posts.from} join media_attachment ma on ma.owner_type = 'POST' and ma.owner_id = p.id where ${posts.where.sql}
      union all
      select ma.media_asset_id, ev.latitude, ev.longitude, ev.title
        from ${events.from} join media_attachment ma on ma.owner_type = 'EVENT' and ma.owner_id = ev.id where ${events.where.sql}) o`;
    const where = new Where().add('m.deleted_at_utc is null');
    // The owners' parameters come first in the text.
    where.params.unshift(...posts.where.params, ...events.where.params);
    return {
      select: pin('media', 'm.id', 'o.latitude', 'o.longitude', 'coalesce(m.title, o.title)', 'm.created_at_utc'),
      from: `${attached} join media_asset m on m.id = o.media_asset_id`,
      where,
      order: 'm.created_at_utc desc, m.id desc',
    };
  },
};

/** Quotes one element of a text[] literal (filters are sanitized, but commas, quotes and braces must stay data). */
function textArrayItem(value: string) {
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

const PIN_ORDER = Object.keys(RANK) as PinType[];
const branchesOf = (viewer: MapViewer, filter: PinFilter, upTo?: number) =>
  PIN_ORDER.filter((t) => filter.types.includes(t)).map((type) => ({ ...BRANCHES[type](viewer, filter, upTo), type }));

/**
 * The pins the viewer may see, grouped by type in the spec's order, newest first within a type (events by start).
 * The types come one after the other, so a page needs from each type only what the types before it left of the
 * first `offset + limit` pins: each branch is a CTE reading in its index order at most that many rows, `b0` all of
 * them, every later one `offset + limit` minus the rows its predecessors gave (`n<i>`, their running total). A branch
 * left with nothing to give has LIMIT 0 and is never executed, so an early page does not touch the later types and a
 * page never sorts a whole territory. The final sort and OFFSET then see at most `offset + limit` rows. Entities and
 * posts, the largest types, are read by key alone (index-only, `lazy`): only the `limit` pins of the page look up
 * their coordinates and title. One statement, for a list without counts; a page that reads the counts anyway is cut
 * cheaper by `pinsPageQuery`.
 */
export function pinsQuery(viewer: MapViewer, filter: PinFilter, offset: number, limit: number): SqlQuery | null {
  const branches = branchesOf(viewer, filter, offset + limit);
  if (branches.length === 0) return null;
  const params: unknown[] = [];
  const ctes = branches.flatMap((b, i) => {
    params.push(...b.where.params, offset + limit);
    const wanted = i === 0 ? '?::int' : `greatest(?::int - (select n from n${i - 1}), 0)`;
    const rows = `b${i} as materialized (select ${b.select} from ${b.from} where ${b.where.sql} order by ${b.order} limit ${wanted})`;
    if (i === branches.length - 1) return [rows];
    return [rows, `n${i} as (select ${i === 0 ? '' : `(select n from n${i - 1}) + `}count(*)::int as n from b${i})`];
  });
  params.push(offset, limit);
  const lazy = new Set(branches.filter((b) => b.lazy).map((b) => b.type));
  return {
    sql: `with ${ctes.join(',\n')},
      page as (select u.* from (${branches.map((_, i) => `select * from b${i}`).join(' union all ')}) u
               order by u.rank, u.sort_at desc, u.id desc, u.ord offset ?::int limit ?::int)
      select ${pageColumns(lazy)}
      from page k ${pageJoins(lazy)}
      order by k.rank, k.sort_at desc, k.id desc, k.ord`,
    params,
  };
}

/**
 * How many pins `pinsQuery` pages through, counted from the rows: the reference the stored counts must equal, and
 * what answers when they cannot (see pinsCountQuery).
 */
export function livePinsCountQuery(viewer: MapViewer, filter: PinFilter): SqlQuery | null {
  const counts = PIN_ORDER.filter((t) => filter.types.includes(t)).map((t) => liveCount(viewer, filter, t));
  if (counts.length === 0) return null;
  return { sql: `select (${counts.map((c) => c.sql).join(' + ')})::int as total`, params: counts.flatMap((c) => c.params) };
}

/**
 * The audiences (map_pin_counter.audience) a viewer sees, written into the text: two texts in all. As a parameter
 * array, PostgreSQL costed the generic plan for an array of unknown length (177 against the custom plan's 46) and
 * planned the counts statement on every call (~0.9 ms with the hidden posts' subqueries, 0.2 to run it).
 */
const audiencesOf = (viewer: MapViewer) => (viewer.residentsOnlyVisible ? `('PUBLIC', 'RESIDENTS_ONLY')` : `('PUBLIC')`);

/** How many pins of each type asked for the viewer sees: a column per type (`pinCountsQuery`). */
export type PinCounts = Partial<Record<PinType, number>>;

/** A live count of one type's pins, as its branch reads them. */
function liveCount(viewer: MapViewer, filter: PinFilter, type: PinType): SqlQuery {
  const { count, from, where } = BRANCHES[type](viewer, filter);
  const c = { total: count?.total ?? 'count(*)', from: count?.from ?? from, where: count?.where ?? where };
  return { sql: `(select ${c.total} from ${c.from} where ${c.where.sql})`, params: c.where.params };
}

/**
 * How many pins of each type `pinsQuery` pages through, one column per type asked for, exact and without counting
 * the territory's pins (issue 14): the stored per-territory counters (MapPinCounter, kept by the map_pin_* triggers
 * in each write's transaction) in the audiences the viewer sees, plus what they leave out, counted live on small
 * sets: the HIDDEN posts the viewer still sees (post_hidden_idx) and their media; the asset pins when an asset filter
 * narrows them (territory_asset_active_idx). For a viewer who blocked someone, the pins of their blocked users are
 * taken off, read from the same counters by author (MapPinAuthorCounter, by key): counting the territory's pins
 * instead took 31-38 ms of PostgreSQL CPU a call at the bench's 20k-entity territory, against 0.6 ms.
 */
export function pinCountsQuery(viewer: MapViewer, filter: PinFilter): SqlQuery | null {
  const types = PIN_ORDER.filter((t) => filter.types.includes(t));
  if (types.length === 0) return null;
  const assetFiltered = Boolean(filter.assetId || filter.assetTypes || filter.assetSubtypes);
  const blocking = viewer.blockedUserIds.length > 0;
  const hidden = placedPosts(viewer, 'HIDDEN');
  // The entity's parameters come first in the text.
  const hiddenWhere = hidden && visibleEntity(new Where(), 'e', viewer).add(hidden.sql, ...hidden.params);
  const hiddenPosts = 'map_entity e join post p on p.map_entity_id = e.id';
  const columns = types.map((t): SqlQuery => {
    // The territory's stored pins, less their blocked users' (the live counts below leave those out themselves).
    const stored = { sql: blocking ? `s."${t}" - b."${t}"` : `s."${t}"`, params: [] as unknown[] };
    if (t === 'asset' && assetFiltered) return liveCount(viewer, filter, 'asset');
    if (t === 'post' && hiddenWhere)
      return { sql: `${stored.sql} + (select count(*) from ${hiddenPosts} where ${hiddenWhere.sql})`, params: hiddenWhere.params };
    if (t === 'media' && hiddenWhere) {
      return {
        sql: `${stored.sql} + (select count(*) from ${hiddenPosts} join media_attachment ma on ma.owner_type = 'POST' and ma.owner_id = p.id
                join media_asset m on m.id = ma.media_asset_id where ${hiddenWhere.sql} and m.deleted_at_utc is null)`,
        params: hiddenWhere.params,
      };
    }
    return stored;
  });
  const sums = types.map((t) => `coalesce(sum(c.pin_count) filter (where c.pin_type = '${t}'), 0) as "${t}"`).join(', ');
  const audiences = `c.audience in ${audiencesOf(viewer)}`;
  // The blocked users as an InitPlan value: with the array as a parameter, a custom plan costs the lookups for its
  // length and a generic plan for ten, so PostgreSQL planned the statement on every call (~0.9 ms against ~0.5).
  const blocked = blocking
    ? {
        sql: `, (select ${sums} from map_pin_author_counter c where c.territory_id = ?::uuid and c.author_user_id = any((select ?::uuid[])::uuid[]) and ${audiences}) b`,
        params: [viewer.territoryId, uuidArray(viewer.blockedUserIds)],
      }
    : { sql: '', params: [] };
  // The select list's parameters come first in the text, then the counters'.
  return {
    sql: `select ${columns.map((c, i) => `(${c.sql})::int as "${types[i]}"`).join(', ')}
      from (select ${sums} from map_pin_counter c where c.territory_id = ?::uuid and ${audiences}) s${blocked.sql}`,
    params: [...columns.flatMap((c) => c.params), viewer.territoryId, ...blocked.params],
  };
}

/** How many pins `pinsQuery` pages through: the sum of `pinCountsQuery`. */
export function pinsCountQuery(viewer: MapViewer, filter: PinFilter): SqlQuery | null {
  const counts = pinCountsQuery(viewer, filter);
  if (!counts) return null;
  const types = PIN_ORDER.filter((t) => filter.types.includes(t));
  return { sql: `select (${types.map((t) => `x."${t}"`).join(' + ')})::int as total from (${counts.sql}) x`, params: counts.params };
}

/**
 * The page of `pinsQuery` cut with the counts of `pinCountsQuery` (the API reads them first): the types come one
 * after the other, so the page is one slice of each type it reaches, whose bounds the counts give. Only those types
 * are read (a first page of everything reads entities alone), each in its index order from the slice's start: the
 * entities and posts index-only (`lazy`), the pins of the page then looking up their coordinates and title. Null
 * when the page is past the last pin.
 */
export function pinsPageQuery(viewer: MapViewer, filter: PinFilter, counts: PinCounts, offset: number, limit: number): SqlQuery | null {
  const slices: Array<{ type: PinType; branch: Branch; start: number; take: number }> = [];
  let before = 0;
  for (const type of PIN_ORDER.filter((t) => filter.types.includes(t))) {
    const start = Math.max(offset - before, 0);
    const end = Math.min(offset + limit - before, counts[type] ?? 0);
    if (end > start) slices.push({ type, branch: BRANCHES[type](viewer, filter, end), start, take: end - start });
    before += counts[type] ?? 0;
    if (before >= offset + limit) break;
  }
  if (slices.length === 0) return null;
  const lazy = new Set(slices.filter((s) => s.branch.lazy).map((s) => s.type));
  return {
    sql: `select ${pageColumns(lazy)}
      from (${slices.map(({ branch: b }) => `(select ${b.select} from ${b.from} where ${b.where.sql} order by ${b.order} offset ?::int limit ?::int)`).join(' union all ')}) k
      ${pageJoins(lazy)}
      order by k.rank, k.sort_at desc, k.id desc, k.ord`,
    params: slices.flatMap(({ branch, start, take }) => [...branch.where.params, start, take]),
  };
}

/** The page's columns: those of its rows, with the coordinates and title of the `lazy` types' rows looked up. */
function pageColumns(lazy: Set<PinType>) {
  const fill = (column: string, entity: string, post: string) =>
    lazy.size === 0 ? `k.${column}` : `coalesce(k.${column}${lazy.has('entity') ? `, ${entity}` : ''}${lazy.has('post') ? `, ${post}` : ''})`;
  return `k.type, k.id, ${fill('latitude', 'e.latitude', 'pe.latitude')} as latitude, ${fill('longitude', 'e.longitude', 'pe.longitude')} as longitude,
    ${fill('title', 'e.name', 'p.title')} as title, k.asset_type, k.asset_subtype`;
}

/** The lookups of `pageColumns`, by primary key, for the rows of the `lazy` types only. */
function pageJoins(lazy: Set<PinType>) {
  return [
    lazy.has('entity') ? `left join map_entity e on k.rank = ${RANK.entity} and e.id = k.id` : '',
    lazy.has('post') ? `left join post p on k.rank = ${RANK.post} and p.id = k.id left join map_entity pe on pe.id = p.map_entity_id` : '',
  ].join(' ');
}
