/**
 * SQL of the feed hot read paths, with explicit columns and `?` placeholders (`runSql(em, query)`; the
 * `pg` driver takes the same text through src/db/sql.ts `toNumberedParams`). Array parameters are passed as
 * PostgreSQL array literals (`pgArray`) so the text works with both. Every list filters and orders on
 * an index declared on the Post entity (`post_feed_idx`, `post_author_idx`), and the feed count reads
 * `post_feed_idx_count` alone: keep the two in step, the status literal 'PUBLISHED' included, so the partial
 * indexes apply. HIDDEN posts (a moderation sanction) are a second branch on their own partial index
 * (`post_hidden_idx`), read only for the viewers who still see them.
 */
import { isoColumn, pageSlice, pgArray, type SqlQuery, statementText } from '../../db/sql.js';
import type { MediaType } from '../../entities/media.entity.js';
import { DEFAULT_PAGE_SIZE } from '../../platform/pagination.js';

/** A row of the queries below; timestamps are already ISO 8601 UTC strings. */
export interface FeedRow {
  id: string;
  territory_id: string;
  title: string;
  content: string;
  type: string;
  visibility: string;
  status: string;
  tags: string[];
  map_entity_id: string | null;
  asset_ids: string[];
  like_count: number;
  comment_count: number;
  share_count: number;
  liked_by_me: boolean;
  /** With `withInteractions` (the journeys feed): whether the viewer shared it, commented on it. */
  shared_by_me?: boolean;
  commented_by_me?: boolean;
  /** With `withTotal`: `feedCountQuery`'s total, the same on every row. */
  total?: number;
  event_id: string | null;
  event_title: string | null;
  event_starts_at_utc: string | null;
  event_status: string | null;
  author_user_id: string;
  author_display_name: string;
  created_at_utc: string;
  updated_at_utc: string;
  /** The post's live media, in display order, and their types (same order). */
  media_ids: string[];
  media_types: MediaType[];
}

const POST_COLUMNS = `p.id, p.territory_id, p.title, p.content, p.type, p.visibility, p.status, p.tags, p.map_entity_id,
    p.asset_ids, p.event_id, p.author_user_id, p.created_at_utc, p.updated_at_utc`;

/**
 * Whether the viewer (the next two parameters) shared and commented on post `p`: probes per row, as the likes (an
 * EXISTS may become a hash of everything the viewer ever shared or wrote). A post_share row is unique per post and
 * user; a user may comment on a post many times.
 */
const INTERACTION_COLUMNS = `coalesce((select true from post_share s where s.post_id = p.id and s.user_id = ?::uuid), false) as shared_by_me,
    coalesce((select true from post_comment c where c.post_id = p.id and c.author_user_id = ?::uuid limit 1), false) as commented_by_me`;

/** A row of `interactionsQuery`. */
export interface InteractionRow {
  shared_by_me: boolean;
  commented_by_me: boolean;
}

/** Whether the viewer shared and commented on the post (the journeys' interact answer). */
export function interactionsQuery(viewerId: string, postId: string): SqlQuery {
  return { sql: `select ${INTERACTION_COLUMNS} from post p where p.id = ?::uuid`, params: [viewerId, viewerId, postId] };
}

const viewerParams = (viewerId: string, withInteractions: boolean) => (withInteractions ? [viewerId, viewerId, viewerId] : [viewerId]);

/** Joins a post `p` to its counts (`ic`: no row until the post's first interaction), which COUNT_COLUMNS read. */
export const COUNTS_JOIN = 'left join post_interaction_count ic on ic.post_id = p.id';

/** A post's counts, 0 without a row (from COUNTS_JOIN's `ic`). */
export const COUNT_COLUMNS =
  'coalesce(ic.like_count, 0) as like_count, coalesce(ic.comment_count, 0) as comment_count, coalesce(ic.share_count, 0) as share_count';

/**
 * A feed item for each row of `rows` (an aliased from-item `p` with POST_COLUMNS). The viewer is the first parameter
 * (likedByMe). Pages pass their already limited rows: joins and the like lookup then run for those rows only, and
 * the like lookup stays a primary-key probe per row instead of a hash of every like the viewer ever gave: a scalar
 * subquery, because PostgreSQL may plan an EXISTS as that hash, and did whenever the statistics undercounted the
 * viewer's likes (4 of the 5 ms of a bench page). Its media come the same way (an index probe of media_attachment
 * per row), not in a round trip of their own. `withInteractions` (the journeys feed) adds whether the viewer shared
 * and commented, probes per row the same way, the viewer then being the first three parameters (`viewerParams`).
 * `total` (a one-value select, evaluated once) is a column of every row; its parameters follow the viewer's.
 */
const itemsOf = (
  rows: string,
  withInteractions = false,
  total: SqlQuery | null = null,
) => `select p.id, p.territory_id, p.title, p.content, p.type, p.visibility, p.status, p.tags, p.map_entity_id,
    p.asset_ids, ${COUNT_COLUMNS},
    coalesce((select true from post_like l where l.post_id = p.id and l.user_id = ?::uuid), false) as liked_by_me,${withInteractions ? `\n    ${INTERACTION_COLUMNS},` : ''}${total ? `\n    (${total.sql}) as total,` : ''}
    p.event_id, e.title as event_title, ${isoColumn('e.starts_at_utc')} as event_starts_at_utc, e.status as event_status,
    p.author_user_id, u.display_name as author_display_name,
    ${isoColumn('p.created_at_utc')} as created_at_utc, ${isoColumn('p.updated_at_utc')} as updated_at_utc,
    coalesce(md.ids, '{}') as media_ids, coalesce(md.types, '{}') as media_types
  from ${rows}
  join app_user u on u.id = p.author_user_id
  ${COUNTS_JOIN}
  left join event e on e.id = p.event_id
  cross join lateral (select array_agg(m.id order by a.display_order) as ids, array_agg(m.media_type order by a.display_order) as types
                        from media_attachment a join media_asset m on m.id = a.media_asset_id and m.deleted_at_utc is null
                       where a.owner_type = 'POST' and a.owner_id = p.id) md`;

const NEWEST_FIRST = 'order by p.created_at_utc desc, p.id desc';

/** Who reads, and what they may see of the territory. */
export interface FeedViewer {
  userId: string;
  /** RESIDENT, a capability holder of the territory or a system admin: RESIDENTS_ONLY posts are visible too. */
  seesResidentsOnly: boolean;
  /** Authors whose posts are hidden from the viewer (the users they blocked). */
  blockedUserIds: readonly string[];
  /**
   * HIDDEN posts the viewer still sees (DESIGN 14: a hidden post is gone for everyone but its author and the
   * territory's curators and moderators): OWN, their own; ALL, every one of the territory (a curator, a moderator,
   * a system admin). Absent: none.
   */
  seesHidden?: 'OWN' | 'ALL';
}

export interface FeedFilter {
  territoryId: string;
  /** Only posts sharing at least one of these tags (the viewer's interests); null: no tag filter. */
  anyTags: readonly string[] | null;
  mapEntityId: string | null;
  assetId: string | null;
}

/**
 * The visibility layers (rule 4) plus the optional filters: on the rows of `post_feed_idx` (PUBLISHED), or of
 * `post_hidden_idx` (HIDDEN: the viewer's own only, unless they see all of them). `value` writes the territory and a
 * visitor's own id: a parameter, or an InitPlan value (`(select ?::uuid)`, see feedPageQuery).
 */
function feedWhere(viewer: FeedViewer, filter: FeedFilter, status: 'PUBLISHED' | 'HIDDEN' = 'PUBLISHED', value = '?::uuid'): SqlQuery {
  const parts = [`p.territory_id = ${value}`, status === 'PUBLISHED' ? `p.status = 'PUBLISHED'` : `p.status = 'HIDDEN'`];
  const params: unknown[] = [filter.territoryId];
  if (status === 'HIDDEN' && viewer.seesHidden !== 'ALL') {
    parts.push(`p.author_user_id = ?::uuid`);
    params.push(viewer.userId);
  }
  if (!viewer.seesResidentsOnly) {
    // An author keeps seeing their own RESIDENTS_ONLY posts after moving out.
    parts.push(`(p.visibility = 'PUBLIC' or p.author_user_id = ${value})`);
    params.push(viewer.userId);
  }
  if (viewer.blockedUserIds.length > 0) {
    parts.push(`not (p.author_user_id = any(?::uuid[]))`);
    params.push(pgArray(viewer.blockedUserIds));
  }
  const optional = optionalFilters(filter);
  return { sql: [...parts, ...optional.parts].join(' and '), params: [...params, ...optional.params] };
}

/** The listing filters shared by the territory feed and my posts: interests, map entity, asset. */
function optionalFilters(filter: Omit<FeedFilter, 'territoryId'>) {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (filter.anyTags) {
    parts.push(`p.tags && ?::text[]`);
    params.push(pgArray(filter.anyTags));
  }
  if (filter.mapEntityId) {
    parts.push(`p.map_entity_id = ?::uuid`);
    params.push(filter.mapEntityId);
  }
  if (filter.assetId) {
    parts.push(`p.asset_ids @> ?::text[]`);
    params.push(pgArray([filter.assetId]));
  }
  return { parts, params };
}

/**
 * A later page's posts as an aliased from-item `p` (itemsOf's): the first `upTo` rows' keys in index order, the page
 * cut from them (`cut`), and only then the page's rows read. The rows skipped are keys read from post_feed_idx (and
 * the visibility check), not whole rows copied and dropped: pages 2-50 at 200k posts ~7% faster, the same rows.
 */
const pageCutFrom = (where: string, upTo: string, cut: string) =>
  `(select ${POST_COLUMNS} from (select * from (select p.id, p.created_at_utc from post p where ${where} ${NEWEST_FIRST} limit ${upTo}) k
     order by k.created_at_utc desc, k.id desc ${cut}) k join post p on p.id = k.id) p`;

/** The rows a later page of the plain feed is cut from: the first span at least as long as the rows up to its end. */
const LATER_PAGE_SPANS = [64, 512, 4096];

export interface FeedPageOptions {
  /** Each row also says whether the viewer shared and commented on it (the journeys feed). */
  withInteractions?: boolean;
  /**
   * Each row also carries `feedCountQuery`'s total (`total`): the envelope's count read in the page's statement, not
   * in a second one. An empty page has no row to carry it: read the count then.
   */
  withTotal?: boolean;
}

/**
 * A page of a territory's feed, newest first. With the HIDDEN posts the viewer sees, each branch reads at most
 * `offset + limit` rows in its index order and the page is cut from their union (a few more rows to sort, never a
 * scan of the territory).
 */
export function feedPageQuery(viewer: FeedViewer, filter: FeedFilter, page: { offset: number; limit: number }, options: FeedPageOptions = {}): SqlQuery {
  const { withInteractions = false } = options;
  const slice = pageSlice(page, DEFAULT_PAGE_SIZE);
  const firstPage = !viewer.seesHidden && slice.params.length === 0;
  // A later page: the rows up to a span's end (`limit 512`), then the page cut from them (`offset ? limit 20`). The
  // same rows as one `offset ? limit ?`, which PostgreSQL planned on every call in a large territory: its generic
  // plan was costed for a tenth of the territory's rows. With the span in the text the estimate is a tenth of the
  // span, below the custom plans of the offsets the span serves (each span is eight times the one before), so one
  // generic plan is kept per span (200k posts, pages 2-50: 1.1 -> 0.7 ms a page, bench/PROFILE.md). Three spans, for
  // the default page size only: each text is a statement name of the 64 (src/db/sql.ts) on every connection, and
  // each size would be three more per viewer shape. Another size, or a page beyond the last span (reading over 4,096
  // rows, where planning is a small part), keeps both limits as parameters, cut from the rows up to its end.
  const span =
    !viewer.seesHidden && !firstPage && page.limit === DEFAULT_PAGE_SIZE ? LATER_PAGE_SPANS.find((rows) => rows >= page.offset + page.limit) : undefined;
  // In the texts that keep one generic plan (the first page, a span's pages), the territory and a visitor's own id are
  // InitPlan values, estimated as an average territory and author with or without their values. With the values, a
  // custom plan costs a large territory's rows as a small fraction of its index, and a visitor's `visibility = 'PUBLIC'
  // or author` for the author they are: cheaper than the generic plan, so PostgreSQL planned those pages on every call
  // (every first page; every later page of a visitor: 2.3-3.0 ms of PostgreSQL CPU against 0.7-1.1 at 200k posts).
  const where = feedWhere(viewer, filter, 'PUBLISHED', firstPage || span !== undefined ? '(select ?::uuid)' : '?::uuid');
  const total = options.withTotal ? feedCountQuery(viewer, filter) : null;
  // The where clauses (the viewer's and the filter's) decide the count's text too: they are in every shape's key.
  const shape = `${withInteractions ? 'with interactions\u0000' : ''}${total ? 'with total\u0000' : ''}`;
  const selectParams = [...viewerParams(viewer.userId, withInteractions), ...(total?.params ?? [])];
  if (!viewer.seesHidden) {
    if (firstPage) {
      return {
        sql: statementText(`${shape}feed page\u0000${where.sql}\u0000${slice.sql}`, function () {
          return `${itemsOf(`(select ${POST_COLUMNS} from post p where ${where.sql} ${NEWEST_FIRST} ${slice.sql}) p`, withInteractions, total)} ${NEWEST_FIRST}`;
        }),
        params: [...selectParams, ...where.params],
      };
    }
    if (span !== undefined) {
      return {
        sql: statementText(`${shape}feed later page\u0000${where.sql}\u0000${span}`, function () {
          return `${itemsOf(pageCutFrom(where.sql, `${span}`, `offset ?::int limit ${DEFAULT_PAGE_SIZE}`), withInteractions, total)} ${NEWEST_FIRST}`;
        }),
        params: [...selectParams, ...where.params, page.offset],
      };
    }
    return {
      sql: statementText(`${shape}feed deep page\u0000${where.sql}`, function () {
        return `${itemsOf(pageCutFrom(where.sql, '?::int', 'offset ?::int limit ?::int'), withInteractions, total)} ${NEWEST_FIRST}`;
      }),
      params: [...selectParams, ...where.params, page.offset + page.limit, page.offset, page.limit],
    };
  }
  // Limits stay parameters here: the generic plan of the union (a curator's first page, measured) took 3.8 ms where
  // its custom plans take 1.1.
  const hidden = feedWhere(viewer, filter, 'HIDDEN');
  const upTo = page.offset + page.limit;
  return {
    sql: statementText(`${shape}feed page with hidden\u0000${where.sql}\u0000${hidden.sql}`, function () {
      const branch = (sql: string) => `(select ${POST_COLUMNS} from post p where ${sql} ${NEWEST_FIRST} limit ?::int)`;
      return `${itemsOf(`(select * from (${branch(where.sql)} union all ${branch(hidden.sql)}) p ${NEWEST_FIRST} offset ?::int limit ?::int) p`, withInteractions, total)} ${NEWEST_FIRST}`;
    }),
    params: [...selectParams, ...where.params, upTo, ...hidden.params, upTo, page.offset, page.limit],
  };
}

/**
 * How many posts `feedPageQuery` pages through (the `/paged` envelope's totalCount). Without an optional filter it is
 * read from the territory's stored counters (TerritoryPostCounter, kept by a trigger in each post write's transaction)
 * and corrected for this viewer from the same counters by author (TerritoryAuthorPostCounter): a visitor's own
 * RESIDENTS_ONLY posts, the posts of the users they blocked, each a key lookup. Exact, and the same cost for a
 * territory of a thousand posts or of a million, and for a blocked author of one post or of thousands. A filtered
 * count (interests, map entity, asset) counts the matching rows (`post_feed_idx_count`).
 */
export function feedCountQuery(viewer: FeedViewer, filter: FeedFilter): SqlQuery {
  const filtered = Boolean(filter.anyTags || filter.mapEntityId || filter.assetId);
  const published = filtered ? filteredCount(viewer, filter) : storedCount(viewer, filter.territoryId);
  if (!viewer.seesHidden) return { sql: `select (${published.sql})::int as total`, params: published.params };
  const hidden = feedWhere(viewer, filter, 'HIDDEN');
  return {
    sql: `select ((${published.sql}) + (select count(*) from post p where ${hidden.sql}))::int as total`,
    params: [...published.params, ...hidden.params],
  };
}

function filteredCount(viewer: FeedViewer, filter: FeedFilter): SqlQuery {
  const where = feedWhere(viewer, filter);
  return { sql: `select count(*) from post p where ${where.sql}`, params: where.params };
}

/** The PUBLISHED posts the viewer sees in the territory, from its stored counters (see feedCountQuery). */
function storedCount(viewer: FeedViewer, territoryId: string): SqlQuery {
  // Written in, not a parameter: PostgreSQL costs `= any($n)` for an array of unknown length (ten lookups), which made
  // the generic plan of a page with its count dearer than its custom ones.
  const visibilities = viewer.seesResidentsOnly ? `('PUBLIC', 'RESIDENTS_ONLY')` : `('PUBLIC')`;
  const byAuthor = (authors: string, visibility: string) =>
    `coalesce((select sum(a.published_count) from territory_author_post_counter a where a.territory_id = (select ?::uuid) and a.author_user_id ${authors} and a.visibility ${visibility}), 0)`;
  let sql = `coalesce((select sum(c.published_count) from territory_post_counter c where c.territory_id = ?::uuid and c.visibility in ${visibilities}), 0)`;
  const params: unknown[] = [territoryId];
  // The territory, the visitor and the blocked users are InitPlan values: with them, a custom plan costs the lookups
  // for this reader (a visitor who wrote nothing there, one blocked user), cheaper than the generic plan's average
  // author or ten array elements, and the named page holding the count was planned on every call (feedPageQuery).
  if (!viewer.seesResidentsOnly) {
    // An author keeps seeing their own RESIDENTS_ONLY posts (as feedWhere says).
    sql += ` + ${byAuthor('= (select ?::uuid)', "<> 'PUBLIC'")}`;
    params.push(territoryId, viewer.userId);
  }
  if (viewer.blockedUserIds.length > 0) {
    sql += ` - ${byAuthor('= any((select ?::uuid[])::uuid[])', `in ${visibilities}`)}`;
    params.push(territoryId, pgArray(viewer.blockedUserIds));
  }
  return { sql: `select ${sql}`, params };
}

/** My posts: every territory (territoryId null) or one, with the same optional filters as the territory feed. */
export type MyPostsFilter = Omit<FeedFilter, 'territoryId'> & { territoryId: string | null };

function myWhere(userId: string, filter: MyPostsFilter): SqlQuery {
  // The author keeps seeing their posts hidden by a moderation sanction (the item's status says HIDDEN).
  const parts = [`p.author_user_id = ?::uuid`, `p.status in ('PUBLISHED', 'HIDDEN')`];
  const params: unknown[] = [userId];
  if (filter.territoryId) {
    parts.push(`p.territory_id = ?::uuid`);
    params.push(filter.territoryId);
  }
  const optional = optionalFilters(filter);
  return { sql: [...parts, ...optional.parts].join(' and '), params: [...params, ...optional.params] };
}

/** The caller's own published (and hidden) posts (every territory, or one), newest first, through `post_author_idx`. */
export function myPostsQuery(userId: string, filter: MyPostsFilter, page: { offset: number; limit: number }): SqlQuery {
  const where = myWhere(userId, filter);
  return {
    sql: `${itemsOf(`(select ${POST_COLUMNS} from post p where ${where.sql} ${NEWEST_FIRST} offset ?::int limit ?::int) p`)} ${NEWEST_FIRST}`,
    params: [userId, ...where.params, page.offset, page.limit],
  };
}

export function myPostsCountQuery(userId: string, filter: MyPostsFilter): SqlQuery {
  const where = myWhere(userId, filter);
  return { sql: `select count(*)::int as total from post p where ${where.sql}`, params: where.params };
}

/** One post with everything a feed item shows, whatever its status (the service applies the visibility rules). */
export function postByIdQuery(viewerId: string, postId: string): SqlQuery {
  return { sql: `${itemsOf('post p')} where p.id = ?::uuid`, params: [viewerId, postId] };
}

export interface CommentRow {
  id: string;
  post_id: string;
  content: string;
  author_user_id: string;
  author_display_name: string;
  created_at_utc: string;
}

function commentsWhere(postId: string, blockedUserIds: readonly string[]): SqlQuery {
  const parts = [`c.post_id = ?::uuid`];
  const params: unknown[] = [postId];
  if (blockedUserIds.length > 0) {
    parts.push(`not (c.author_user_id = any(?::uuid[]))`);
    params.push(pgArray(blockedUserIds));
  }
  return { sql: parts.join(' and '), params };
}

/** A post's comments, oldest first (`post_comment_post_idx`); comments by users the reader blocked are left out. */
export function commentsPageQuery(postId: string, blockedUserIds: readonly string[], page: { offset: number; limit: number }): SqlQuery {
  const where = commentsWhere(postId, blockedUserIds);
  return {
    sql: `select c.id, c.post_id, c.content, c.author_user_id, u.display_name as author_display_name,
        ${isoColumn('c.created_at_utc')} as created_at_utc
      from post_comment c join app_user u on u.id = c.author_user_id
      where ${where.sql} order by c.created_at_utc, c.id offset ?::int limit ?::int`,
    params: [...where.params, page.offset, page.limit],
  };
}

export function commentsCountQuery(postId: string, blockedUserIds: readonly string[]): SqlQuery {
  const where = commentsWhere(postId, blockedUserIds);
  return { sql: `select count(*)::int as total from post_comment c where ${where.sql}`, params: where.params };
}
