import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, statementCounterTriggers, textArray } from './base.entity.js';
import { mapPinTriggers } from './map.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

export const POST_TYPES = ['POST', 'ALERT', 'EVENT'] as const;
export type PostType = (typeof POST_TYPES)[number];
export const POST_VISIBILITIES = ['PUBLIC', 'RESIDENTS_ONLY'] as const;
export type PostVisibility = (typeof POST_VISIBILITIES)[number];
/** Only PUBLISHED posts are ever shown; PENDING (an alert awaiting validation), REJECTED and HIDDEN never are. */
export const POST_STATUSES = ['PUBLISHED', 'PENDING', 'REJECTED', 'HIDDEN'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

/**
 * A feed post. Its like, comment and share counts live in PostInteractionCount, not on this row, so that
 * interactions never rewrite posts (see there). `eventId`, `alertId`, `mapEntityId` and `assetIds` reference
 * tables of other domains by id only: those rows are managed (and removed) by their own services.
 */
export const Post = defineEntity({
  name: 'Post',
  tableName: 'post',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    authorUserId: () => p.manyToOne(User).mapToPk().fieldName('author_user_id').deleteRule('cascade'),
    title: p.string().length(200),
    content: p.text(),
    type: p.string().length(20).$type<PostType>(),
    visibility: p.string().length(20).$type<PostVisibility>(),
    status: p.string().length(20).$type<PostStatus>().default('PUBLISHED'),
    /** Normalized (trimmed, lower-case) like interest tags, so `filterByInterests` compares like with like. */
    tags: textArray().$type<string[]>().default([]),
    mapEntityId: p.uuid().nullable(),
    assetIds: textArray().$type<string[]>().default([]),
    eventId: p.uuid().nullable(),
    alertId: p.uuid().nullable(),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  indexes: [
    // The feed page: a territory's published posts, newest first (visibility and blocks are filters on it). Its
    // `territory_id` statistics say territories are large (Migration20261126150000): generic plans read it in order.
    {
      name: 'post_feed_idx',
      expression: `create index "post_feed_idx" on "post" ("territory_id", "created_at_utc" desc, "id" desc) where status = 'PUBLISHED'`,
    },
    // The feed's exact totalCount: the rows of post_feed_idx (hence the name) by visibility and author, which is all
    // the visibility layers and blocks read, so the count is an index-only scan. Few distinct keys: deduplicated
    // posting lists keep it a fraction of post_feed_idx's size, which the planner needs to prefer it over a
    // (parallel) sequential scan of a territory holding most posts.
    {
      name: 'post_feed_idx_count',
      expression: `create index "post_feed_idx_count" on "post" ("territory_id", "visibility", "author_user_id") where status = 'PUBLISHED'`,
    },
    // Map pins: a territory's published posts placed at an entity, newest first; the included columns let the pin
    // count read it alone (index-only) before joining the entities.
    {
      name: 'post_map_pin_idx',
      expression: `create index "post_map_pin_idx" on "post" ("territory_id", "created_at_utc" desc, "id" desc) include ("map_entity_id", "visibility", "author_user_id") where status = 'PUBLISHED' and map_entity_id is not null`,
    },
    // HIDDEN posts (a moderation sanction) of a territory, newest first: the second branch of the feed page, its
    // count and the map pins for those who still see them (the author, the territory's curators and moderators).
    // Few rows, so the published indexes above stay exactly as they were for everyone else.
    {
      name: 'post_hidden_idx',
      expression: `create index "post_hidden_idx" on "post" ("territory_id", "created_at_utc" desc, "id" desc) include ("map_entity_id", "visibility", "author_user_id") where status = 'HIDDEN'`,
    },
    // Whether an author has HIDDEN posts in a territory (a key probe with the caller's territory access): the feed
    // reads the hidden branch only for those who do, and for everyone else runs its plain statement. The map's
    // hidden branch for an author's own posts reads it too.
    {
      name: 'post_hidden_author_idx',
      expression: `create index "post_hidden_author_idx" on "post" ("author_user_id", "territory_id") where status = 'HIDDEN'`,
    },
    // "My posts" newest first; also serves the author foreign key's cascade.
    { name: 'post_author_idx', expression: `create index "post_author_idx" on "post" ("author_user_id", "created_at_utc" desc, "id" desc)` },
    { name: 'post_map_entity_idx', expression: `create index "post_map_entity_idx" on "post" ("map_entity_id") where map_entity_id is not null` },
    { name: 'post_event_idx', expression: `create index "post_event_idx" on "post" ("event_id") where event_id is not null` },
    { name: 'post_alert_idx', expression: `create index "post_alert_idx" on "post" ("alert_id") where alert_id is not null` },
    { name: 'post_asset_ids_idx', expression: `create index "post_asset_ids_idx" on "post" using gin ("asset_ids")` },
    // A feed filtered by the reader's interests (`tags && ...`): its count, and its pages when the tags are rare, read
    // the published posts carrying them instead of every post of the territory (Migration20261127190000). No pending
    // list (`fastupdate`), as the search trigram indexes: reads never scan entries waiting for a vacuum.
    {
      name: 'post_feed_tags_idx',
      expression: `create index "post_feed_tags_idx" on "post" using gin ("tags") with (fastupdate = off) where status = 'PUBLISHED'`,
    },
  ],
  // Keep TerritoryPostCounter in step with every statement writing posts, whoever writes them (function in its
  // migration).
  triggers: [
    ...statementCounterTriggers('post', 'post_feed_counter', 'posts'),
    ...statementCounterTriggers('post', 'post_author_counter', 'posts'),
    ...mapPinTriggers('post', 'posts'),
  ],
});

/**
 * How many PUBLISHED posts a territory has, per visibility: the feed's `totalCount` without counting a territory's
 * posts on every page (DESIGN "Performance": exact and cheap). Written only by the `post_feed_counter` trigger, in
 * the transaction of the post's own write, so it is exact at every commit.
 */
export const TerritoryPostCounter = defineEntity({
  name: 'TerritoryPostCounter',
  tableName: 'territory_post_counter',
  properties: {
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade').primary(),
    visibility: p.string().length(20).$type<PostVisibility>().primary(),
    publishedCount: p.integer().default(0),
  },
});

/**
 * TerritoryPostCounter by author as well: what a reader who blocked someone does not see of the feed, and a visitor's
 * own RESIDENTS_ONLY posts, read by key instead of counting their posts on every page. Written only by the
 * `post_author_counter` trigger (Migration20261127160000), in the transaction of the post's own write.
 */
export const TerritoryAuthorPostCounter = defineEntity({
  name: 'TerritoryAuthorPostCounter',
  tableName: 'territory_author_post_counter',
  properties: {
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade').primary(),
    authorUserId: p.uuid().primary(),
    visibility: p.string().length(20).$type<PostVisibility>().primary(),
    publishedCount: p.integer().default(0),
  },
});

/**
 * A post's like, comment and share counts, changed in the transaction of the interaction (a like, an unlike, a
 * comment, a share); no row until the first one (counts 0). Kept apart from the post so an interaction writes this
 * small row, not the post's: the post's statement triggers (feed counters, map pins) no longer run for a like, and a
 * vacuumed post's heap page stays all-visible, so a later feed page skips the rows before it in post_feed_idx alone
 * (index-only, no heap fetch). Measured at the bench's data: buffers read per feed page halved (bench/PROFILE.md).
 */
export const PostInteractionCount = defineEntity({
  name: 'PostInteractionCount',
  tableName: 'post_interaction_count',
  properties: {
    postId: () => p.manyToOne(Post).mapToPk().fieldName('post_id').deleteRule('cascade').primary(),
    likeCount: p.integer().default(0),
    commentCount: p.integer().default(0),
    shareCount: p.integer().default(0),
  },
});

/** One like per user and post; the composite key makes a repeated like a no-op. */
export const PostLike = defineEntity({
  name: 'PostLike',
  tableName: 'post_like',
  properties: {
    postId: () => p.manyToOne(Post).mapToPk().fieldName('post_id').deleteRule('cascade').primary(),
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').primary(),
    createdAtUtc: p.datetime().onCreate(() => new Date()),
  },
  indexes: [{ properties: ['userId'] }],
});

export const PostComment = defineEntity({
  name: 'PostComment',
  tableName: 'post_comment',
  properties: {
    ...baseProperties,
    postId: () => p.manyToOne(Post).mapToPk().fieldName('post_id').deleteRule('cascade'),
    authorUserId: () => p.manyToOne(User).mapToPk().fieldName('author_user_id').deleteRule('cascade'),
    content: p.text(),
  },
  indexes: [
    // A post's comments, oldest first.
    { name: 'post_comment_post_idx', properties: ['postId', 'createdAtUtc', 'id'] },
    // "Did the viewer comment on this post" (a feed page's `commented_by_me`, one probe per row) and an author's
    // comments (its foreign key): one index for both.
    { name: 'post_comment_author_post_idx', properties: ['authorUserId', 'postId'] },
  ],
});

/** One share per user and post: sharing again answers the existing share. */
export const PostShare = defineEntity({
  name: 'PostShare',
  tableName: 'post_share',
  properties: {
    ...baseProperties,
    postId: () => p.manyToOne(Post).mapToPk().fieldName('post_id').deleteRule('cascade'),
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade').index(),
  },
  uniques: [{ name: 'post_share_post_user_uniq', properties: ['postId', 'userId'] }],
});
