import { type EntityManager, ForeignKeyConstraintViolationException } from '@mikro-orm/postgresql';
import { execSql, type HotReadSource, pgArray, runHotRead } from '../../db/sql.js';
import { audit } from '../../entities/audit.entity.js';
import { type PostStatus, type PostType, type PostVisibility, Post, PostComment } from '../../entities/post.entity.js';
import { newId } from '../../platform/ids.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { badRequest, conflict, forbidden, notFound, validationFailed } from '../../platform/problems.js';
import type { AuthUser, ServiceContext } from '../../platform/service-context.js';
import { refusePostingRestricted, requireTerritory, type TerritoryAccess } from '../../policy/territory-access.js';
import { assertAttachable, attachMedia, deleteMediaOf, mediaUrl } from '../media/media.service.js';
import { residentsQuery } from '../memberships/memberships.queries.js';
import { enforceModerationRules, enforceProhibitedWordsOn } from '../moderation-rules/moderation-rules.service.js';
import { enqueueNotificationTo } from '../notifications/outbox.js';
import {
  COUNT_COLUMNS,
  COUNTS_JOIN,
  type CommentRow,
  commentsCountQuery,
  commentsPageQuery,
  type FeedFilter,
  type FeedRow,
  type FeedViewer,
  feedCountQuery,
  feedPageQuery,
  myPostsCountQuery,
  myPostsQuery,
  type MyPostsFilter,
  postByIdQuery,
} from './feed.queries.js';
import type {
  CommentOutput,
  CreatePostInput,
  FeedFilterInput,
  FeedItemOutput,
  MyFeedFilterInput,
  PostCountsOutput,
  ShareOutput,
  UpdatePostInput,
} from './feed.schemas.js';

const postNotFound = () => notFound('Post');

// ---- Access ----

interface PostFacts {
  id: string;
  territory_id: string;
  author_user_id: string;
  status: string;
  visibility: string;
}

/** What the user is in the post's territory (whatever its status: the post's own state decides what is seen). */
const accessToPostTerritory = (ctx: Pick<ServiceContext, 'em' | 'user' | 'sessionId'>, post: PostFacts) =>
  requireTerritory(ctx, post.territory_id, { status: 'ANY' });

/** Who still sees HIDDEN posts of a territory besides their authors (DESIGN 14): its curators and moderators. */
export const seesAllHidden = (access: TerritoryAccess) => access.holds('CURATOR', 'MODERATOR');

/**
 * The HIDDEN posts a feed reader sees: all of them (curators, moderators), their own (when they have any: read with
 * the access, `ownHiddenPosts`), or none. None, the common case, runs the feed's plain statement: no hidden branch to
 * plan on every call, and a first page that keeps one generic plan (bench/PROFILE.md).
 */
const hiddenPostsSeenBy = (access: TerritoryAccess): FeedViewer['seesHidden'] => (seesAllHidden(access) ? 'ALL' : access.hasOwnHiddenPosts ? 'OWN' : undefined);

/**
 * Whether the caller may see the post: published, by someone they did not block, and in a visible layer (rule 4,
 * `TerritoryAccess.seesResidentsOnly`; the map applies the same rule), given their access to its territory (which
 * also names whom they blocked). `readsHidden`: a HIDDEN post (a moderation sanction) is still seen, read-only, by
 * its author and the territory's curators and moderators; interactions (like, comment, share, edit) never reach it.
 */
function seesPost(user: AuthUser, post: PostFacts, access: TerritoryAccess, readsHidden: boolean, despiteBlocks = false): boolean {
  const hidden = post.status === 'HIDDEN' && readsHidden;
  if (post.status !== 'PUBLISHED' && !hidden) return false;
  if (!despiteBlocks && access.blockedUserIds.includes(post.author_user_id)) return false;
  if (post.author_user_id === user.id) return true;
  if (!hidden && post.visibility === 'PUBLIC') return true;
  if (hidden && !seesAllHidden(access)) return false;
  return post.visibility === 'PUBLIC' || access.seesResidentsOnly;
}

/** `seesPost`, reading the caller's access to the post's territory unless given. */
async function canSee(
  em: EntityManager,
  user: AuthUser,
  post: PostFacts,
  access?: TerritoryAccess,
  readsHidden = false,
  despiteBlocks = false,
): Promise<boolean> {
  return seesPost(user, post, access ?? (await accessToPostTerritory({ em, user, sessionId: null }, post)), readsHidden, despiteBlocks);
}

const POST_FACTS = 'select id, territory_id, author_user_id, status, visibility from post where id = ?';
/** A post's facts by its key: prepared; on the transaction's connection inside one (src/db/sql.ts `runHotRead`). */
const postFacts = async (source: HotReadSource, postId: string): Promise<PostFacts | undefined> =>
  (await runHotRead<PostFacts>(source, { sql: POST_FACTS, params: [postId] }, { prepared: true }))[0];

/**
 * The caller's access to the territory of a post they may read (HIDDEN included, `seesPost`), else 404. Given the
 * request's context, its reads run on the pool without forking its manager; the access row names whom they blocked.
 */
async function readablePost(ctx: ServiceContext, postId: string): Promise<TerritoryAccess> {
  const post = await postFacts(ctx, postId);
  if (!post) throw postNotFound();
  const access = await accessToPostTerritory(ctx, post);
  if (!seesPost(ctx.user, post, access, true)) throw postNotFound();
  return access;
}

/**
 * Whether the viewer may see the post (the feed's rule 4 check, for any content that follows a post's visibility,
 * such as its media). A HIDDEN post counts as seen by its author and the territory's curators and moderators unless
 * `includeHidden` is false. `despiteBlocks`: a post of someone the viewer blocked counts too (it may be reported).
 */
export async function canSeePost(
  em: EntityManager,
  viewer: AuthUser,
  postId: string,
  opts: { includeHidden?: boolean; despiteBlocks?: boolean } = {},
): Promise<boolean> {
  const post = await postFacts(em, postId);
  return post !== undefined && (await canSee(em, viewer, post, undefined, opts.includeHidden ?? true, opts.despiteBlocks ?? false));
}

/**
 * The post when the caller may see it; a post they cannot see is indistinguishable from a missing one (404).
 * `readsHidden` for reads only (see `canSee`).
 */
async function visiblePost(em: EntityManager, user: AuthUser, postId: string, lock = false, readsHidden = false): Promise<PostFacts> {
  return (await visiblePostIn(em, user, postId, lock, readsHidden)).post;
}

/** `visiblePost` with the caller's access to its territory (for the checks that follow, without reading it again). */
async function visiblePostIn(em: EntityManager, user: AuthUser, postId: string, lock = false, readsHidden = false) {
  const [post] = lock ? await execSql<PostFacts>(em, `${POST_FACTS} for update`, [postId]) : [await postFacts(em, postId)];
  if (!post) throw postNotFound();
  const access = await accessToPostTerritory({ em, user, sessionId: null }, post);
  if (!seesPost(user, post, access, readsHidden)) throw postNotFound();
  return { post, access };
}

// ---- Output ----

/** A feed item of its row. */
export function feedItemOf(r: FeedRow): FeedItemOutput {
  return {
    id: r.id,
    territoryId: r.territory_id,
    title: r.title,
    content: r.content,
    type: r.type as PostType,
    visibility: r.visibility as PostVisibility,
    status: r.status as PostStatus,
    tags: r.tags,
    mapEntityId: r.map_entity_id,
    assetIds: r.asset_ids,
    likeCount: r.like_count,
    commentCount: r.comment_count,
    shareCount: r.share_count,
    likedByMe: r.liked_by_me,
    mediaUrls: r.media_ids.map(mediaUrl),
    event:
      r.event_id && r.event_title !== null && r.event_starts_at_utc !== null
        ? { id: r.event_id, title: r.event_title, startsAtUtc: r.event_starts_at_utc, status: r.event_status ?? '' }
        : null,
    author: { id: r.author_user_id, displayName: r.author_display_name },
    createdAtUtc: r.created_at_utc,
    updatedAtUtc: r.updated_at_utc,
  };
}

const toItems = (rows: FeedRow[]): FeedItemOutput[] => rows.map(feedItemOf);

/** A post as a feed item, by its key (prepared; after a write, on the pool: the write has committed). */
async function itemById(source: HotReadSource, viewerId: string, postId: string): Promise<FeedItemOutput> {
  const rows = await runHotRead<FeedRow>(source, postByIdQuery(viewerId, postId), { prepared: true });
  const [item] = toItems(rows);
  if (!item) throw postNotFound();
  return item;
}

// ---- Reading ----

/** The caller's interest tags; null when they have none (the interest filter then does not narrow the feed). */
async function interestTags(source: HotReadSource, userId: string): Promise<string[] | null> {
  const rows = await runHotRead<{ tag: string }>(source, { sql: 'select tag from user_interest where user_id = ?', params: [userId] }, { prepared: true });
  return rows.length > 0 ? rows.map((r) => r.tag) : null;
}

async function feedQueryParts(ctx: ServiceContext, input: Omit<FeedFilterInput, 'skip' | 'take'>) {
  const access = await requireTerritory(ctx, input.territoryId, { ownHiddenPosts: true });
  const { user } = ctx;
  const viewer: FeedViewer = {
    userId: user.id,
    seesResidentsOnly: access.seesResidentsOnly,
    blockedUserIds: access.blockedUserIds,
    seesHidden: hiddenPostsSeenBy(access),
  };
  const filter: FeedFilter = {
    territoryId: access.territoryId,
    anyTags: input.filterByInterests ? await interestTags(ctx, user.id) : null,
    mapEntityId: input.mapEntityId ?? null,
    assetId: input.assetId ?? null,
  };
  return { viewer, filter, access };
}

/**
 * The plain feed (no interest, map entity or asset filter) runs as named statements: parsed once per connection, its
 * count (stored counters), its first page of the default size (`pageSlice`: the limit in the text) and its later
 * pages (a span of rows and the page size in the text, the offset a parameter: see feedPageQuery) planned once
 * (bench/PROFILE.md). Filtered shapes stay one-off statements: how selective a tag or an asset is decides their plan.
 */
const isPlainFeed = (filter: FeedFilter) => !filter.anyTags && !filter.mapEntityId && !filter.assetId;

/** A territory's feed (territoryId, else the session's territory), newest first, through the visibility layers. */
export async function listFeed(ctx: ServiceContext, input: FeedFilterInput) {
  const { viewer, filter } = await feedQueryParts(ctx, input);
  const prepared = isPlainFeed(filter);
  // The plain feed runs the paged feed's statements (their count, a few index probes, unused here): one set of texts
  // for both, of the 64 statement names every connection holds (src/db/sql.ts).
  const page = feedPageQuery(viewer, filter, { offset: input.skip, limit: input.take }, { withTotal: prepared });
  return toItems(await runHotRead<FeedRow>(ctx, page, { prepared }));
}

type FeedPageInput = Omit<FeedFilterInput, 'skip' | 'take'> & { pageNumber: number; pageSize: number };

/**
 * The rows of a feed page and how many posts the feed holds: `pageFeed` answers them as items; the journeys feed builds
 * on them, with the viewer's shares and comments in the rows (`withInteractions`) and the access (who may delete).
 */
export async function feedPageRows(
  ctx: ServiceContext,
  input: FeedPageInput,
  withInteractions = false,
): Promise<{ rows: FeedRow[]; total: number; access: TerritoryAccess }> {
  const { viewer, filter, access } = await feedQueryParts(ctx, input);
  const page = pageOffset(input.pageNumber, input.pageSize);
  const plain = isPlainFeed(filter);
  const count = () => runHotRead<{ total: number }>(ctx, feedCountQuery(viewer, filter), { prepared: plain });
  if (!plain) {
    // A filtered count counts rows (feedCountQuery): in parallel with the page, on a second connection.
    const [rows, counted] = await Promise.all([runHotRead<FeedRow>(ctx, feedPageQuery(viewer, filter, page, { withInteractions })), count()]);
    return { rows, total: counted[0]?.total ?? 0, access };
  }
  // The plain feed's count (stored counters, a few index probes) is read with the page: one statement, not two.
  const rows = await runHotRead<FeedRow>(ctx, feedPageQuery(viewer, filter, page, { withInteractions, withTotal: true }), { prepared: true });
  return { rows, total: rows[0]?.total ?? (await count())[0]?.total ?? 0, access };
}

export async function pageFeed(ctx: ServiceContext, input: FeedPageInput) {
  const { rows, total } = await feedPageRows(ctx, input);
  return toPage(toItems(rows), total, input.pageNumber, input.pageSize);
}

async function myPostsFilter(source: HotReadSource, userId: string, input: MyFeedFilterInput): Promise<MyPostsFilter> {
  return {
    territoryId: input.territoryId ?? null,
    anyTags: input.filterByInterests ? await interestTags(source, userId) : null,
    mapEntityId: input.mapEntityId ?? null,
    assetId: input.assetId ?? null,
  };
}

/** The caller's own published (and hidden) posts, newest first: every territory, or the given one, with the feed's filters. */
export async function listMine(ctx: ServiceContext, input: MyFeedFilterInput & { skip: number; take: number }) {
  const filter = await myPostsFilter(ctx, ctx.user.id, input);
  return toItems(await runHotRead<FeedRow>(ctx, myPostsQuery(ctx.user.id, filter, { offset: input.skip, limit: input.take })));
}

export async function pageMine(ctx: ServiceContext, input: MyFeedFilterInput & { pageNumber: number; pageSize: number }) {
  const filter = await myPostsFilter(ctx, ctx.user.id, input);
  const [rows, count] = await Promise.all([
    runHotRead<FeedRow>(ctx, myPostsQuery(ctx.user.id, filter, pageOffset(input.pageNumber, input.pageSize))),
    runHotRead<{ total: number }>(ctx, myPostsCountQuery(ctx.user.id, filter)),
  ]);
  return toPage(toItems(rows), count[0]?.total ?? 0, input.pageNumber, input.pageSize);
}

export async function getPost(ctx: ServiceContext, input: { id: string }) {
  await readablePost(ctx, input.id);
  return itemById(ctx, ctx.user.id, input.id);
}

// ---- Writing ----

/**
 * The map entity and the assets a post references must be of its territory; rejected ones cannot be referenced.
 * An unknown reference is a 404 naming it, like any unknown id.
 */
async function assertReferences(em: EntityManager, territoryId: string, mapEntityId: string | null, assetIds: string[]) {
  if (mapEntityId) {
    const rows = await execSql(em, `select 1 from map_entity where id = ? and territory_id = ? and status <> 'REJECTED'`, [mapEntityId, territoryId]);
    if (rows.length === 0) throw notFound('Map entity');
  }
  if (assetIds.length > 0) {
    const rows = await execSql<{ id: string }>(em, `select id from territory_asset where id = any(?::uuid[]) and territory_id = ? and status <> 'Rejected'`, [
      pgArray(assetIds),
      territoryId,
    ]);
    const found = new Set(rows.map((r) => r.id));
    const missing = assetIds.find((id) => !found.has(id));
    if (missing) throw notFound(`Asset ${missing}`);
  }
}

/**
 * A validated resident (RESIDENT of the territory) posts. Clients create POST and ALERT posts (ALERT needs the
 * territory's ALERTPOSTS flag); EVENT posts come only from creating an event. The active moderation rules and the
 * media rules apply; the post, its media and the POST_CREATED outbox row for the residents commit together.
 */
export async function createPost(ctx: ServiceContext, input: CreatePostInput): Promise<FeedItemOutput> {
  const access = await requireTerritory(ctx, input.territoryId, {
    as: 'resident',
    creates: true,
    denied: { message: 'Only a RESIDENT of this territory can post in its feed.', code: 'NOT_RESIDENT' },
  });
  const { em, user } = ctx;
  const { territoryId } = access;
  if (input.type === 'EVENT') throw validationFailed('type', 'EVENT posts are created by creating an event (POST /api/v1/events)');
  if (input.type === 'ALERT' && !access.hasFlag('ALERTPOSTS')) {
    throw badRequest('Alert posts are not enabled in this territory (feature flag ALERTPOSTS).', 'ALERT_POSTS_DISABLED');
  }
  await enforceModerationRules(em, territoryId, { title: input.title, content: input.content, type: input.type });
  await assertReferences(em, territoryId, input.mapEntityId ?? null, input.assetIds);

  const postId = await em.transactional(async (tx) => {
    if (input.mediaIds.length > 0) {
      await assertAttachable(tx, { userId: user.id, territoryId, target: 'posts', mediaIds: input.mediaIds });
    }
    const post = tx.create(Post, {
      territoryId,
      authorUserId: user.id,
      title: input.title,
      content: input.content,
      type: input.type,
      visibility: input.visibility,
      status: 'PUBLISHED',
      tags: input.tags,
      mapEntityId: input.mapEntityId ?? null,
      assetIds: input.assetIds,
      eventId: null,
      alertId: null,
    });
    if (input.mediaIds.length > 0) await attachMedia(tx, { ownerType: 'POST', ownerId: post.id, mediaIds: input.mediaIds });
    await enqueueNotificationTo(tx, residentsQuery(territoryId, user.id), {
      type: 'POST_CREATED',
      title: `New post in ${access.territory.name}`,
      body: `${user.displayName}: ${input.title}`,
      data: { territoryId, postId: post.id, authorUserId: user.id },
      sourceKey: `post:${post.id}:created`,
    });
    await tx.flush();
    return post.id;
  });
  return itemById(em, user.id, postId);
}

/** The author edits title, content, visibility or tags; the moderation rules apply to the new text. */
/**
 * Whether `updatePost` would take the caller's edit of a post they can see (the journeys' `canEdit`): their own
 * published post, of a type edited on its own, with no posting restriction on them in its territory.
 */
export function mayEditPost(userId: string, post: Pick<FeedItemOutput, 'author' | 'status' | 'type'>, access: TerritoryAccess): boolean {
  return post.author.id === userId && post.status === 'PUBLISHED' && !NOT_EDITABLE[post.type] && !access.postingRestrictedUntil;
}

/**
 * Posts that show something else, and why they are not edited on their own: an event's post shows its event; an
 * alert's, the alert as curators validated it.
 */
const NOT_EDITABLE: Partial<Record<PostType, string>> = {
  EVENT: 'This post shows its event: edit the event instead.',
  ALERT: 'An alert post shows the alert as it was reported and validated; it cannot be edited.',
};

export async function updatePost(ctx: ServiceContext, input: UpdatePostInput): Promise<FeedItemOutput> {
  const { em, user } = ctx;
  await em.transactional(async (tx) => {
    const { post: facts, access } = await visiblePostIn(tx, user, input.id, true);
    if (facts.author_user_id !== user.id) throw forbidden('Only the author can edit this post.', 'NOT_AUTHOR');
    // A posting restriction keeps its author from rewriting posts too, not only from writing new ones.
    refusePostingRestricted(access);
    const post = await tx.findOneOrFail(Post, { id: input.id });
    const notEditable = NOT_EDITABLE[post.type];
    if (notEditable) throw conflict(notEditable, 'POST_NOT_EDITABLE');
    const title = input.title ?? post.title;
    const content = input.content ?? post.content;
    if (input.title !== undefined || input.content !== undefined) {
      await enforceModerationRules(tx, post.territoryId, { title, content, type: post.type });
    }
    post.title = title;
    post.content = content;
    if (input.visibility) post.visibility = input.visibility;
    if (input.tags) post.tags = input.tags;
    await tx.flush();
  });
  return itemById(em, user.id, input.id);
}

/**
 * The author, or a curator of the post's territory (or a system admin), deletes a post; its likes, comments and
 * shares go with it (foreign keys) and its media through the media service. Audited.
 */
export async function deletePost(ctx: ServiceContext, input: { id: string }): Promise<void> {
  const { em, user } = ctx;
  const postId = input.id;
  // The post row is read, locked and deleted with SQL only (no entity of it in this unit of work).
  await em.transactional(async (tx) => {
    const [post] = await execSql<PostFacts>(tx, `${POST_FACTS} for update`, [postId]);
    if (!post) throw postNotFound();
    const access = await accessToPostTerritory({ em: tx, user, sessionId: null }, post);
    const curator = access.holds('CURATOR');
    const author = post.author_user_id === user.id;
    if (!curator) {
      // A hidden post is read-only, but its author may still take it down.
      if (!(await canSee(tx, user, post, access, true))) throw postNotFound();
      if (!author) throw forbidden('Only the author or a curator of the territory can delete this post.', 'NOT_AUTHOR');
    }
    await deleteMediaOf(tx, 'POST', postId);
    await execSql(tx, 'delete from post where id = ?', [postId]);
    audit(tx, {
      actorUserId: user.id,
      action: 'post.deleted',
      subjectType: 'Post',
      subjectId: postId,
      territoryId: post.territory_id,
      data: { authorUserId: post.author_user_id, byCurator: !author },
    });
    await tx.flush();
  });
}

/** Runs an interaction; a post deleted in between (foreign key violation) is a 404 like any missing post. */
async function onExistingPost<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ForeignKeyConstraintViolationException) throw postNotFound();
    throw error;
  }
}

async function countsOf(em: EntityManager, userId: string, postId: string): Promise<PostCountsOutput> {
  const [row] = await execSql<{ like_count: number; comment_count: number; share_count: number; liked_by_me: boolean }>(
    em,
    `select ${COUNT_COLUMNS},
            exists (select 1 from post_like l where l.post_id = p.id and l.user_id = ?) as liked_by_me
       from post p ${COUNTS_JOIN} where p.id = ?`,
    [userId, postId],
  );
  if (!row) throw postNotFound();
  return { postId, likeCount: row.like_count, commentCount: row.comment_count, shareCount: row.share_count, likedByMe: row.liked_by_me };
}

/**
 * One more like, comment or share of the post, in the interaction's transaction: its post_interaction_count row,
 * created by the first (the post's own row is never rewritten, see the entity).
 */
async function countOneMore(tx: EntityManager, postId: string, count: 'like_count' | 'comment_count' | 'share_count') {
  await execSql(tx, `insert into post_interaction_count as c (post_id, ${count}) values (?, 1) on conflict (post_id) do update set ${count} = c.${count} + 1`, [
    postId,
  ]);
}

/** Idempotent: a second like changes nothing. The count moves in the same transaction as the like row. */
export async function likePost(ctx: ServiceContext, input: { id: string }): Promise<PostCountsOutput> {
  const { em, user } = ctx;
  const postId = input.id;
  return onExistingPost(() =>
    em.transactional(async (tx) => {
      await visiblePost(tx, user, postId);
      const inserted = await execSql<{ post_id: string }>(
        tx,
        'insert into post_like (post_id, user_id, created_at_utc) values (?, ?, now()) on conflict do nothing returning post_id',
        [postId, user.id],
      );
      if (inserted.length > 0) await countOneMore(tx, postId, 'like_count');
      return countsOf(tx, user.id, postId);
    }),
  );
}

/** Idempotent unlike (204 whether or not a like existed). */
export async function unlikePost(ctx: ServiceContext, input: { id: string }): Promise<void> {
  const { em, user } = ctx;
  const postId = input.id;
  await em.transactional(async (tx) => {
    await visiblePost(tx, user, postId);
    const deleted = await execSql<{ post_id: string }>(tx, 'delete from post_like where post_id = ? and user_id = ? returning post_id', [postId, user.id]);
    if (deleted.length > 0) await execSql(tx, 'update post_interaction_count set like_count = greatest(like_count - 1, 0) where post_id = ?', [postId]);
  });
}

export async function addComment(ctx: ServiceContext, input: { id: string; content: string }): Promise<CommentOutput> {
  const { em, user } = ctx;
  const { id: postId, content } = input;
  return onExistingPost(() =>
    em.transactional(async (tx) => {
      const { post, access } = await visiblePostIn(tx, user, postId);
      // A comment is content of the post's territory: its sanction and its prohibited words apply.
      refusePostingRestricted(access);
      await enforceProhibitedWordsOn(tx, post.territory_id, content, 'content');
      const comment = tx.create(PostComment, { postId, authorUserId: user.id, content });
      await tx.flush();
      await countOneMore(tx, postId, 'comment_count');
      return {
        id: comment.id,
        postId,
        content,
        author: { id: user.id, displayName: user.displayName },
        createdAtUtc: comment.createdAtUtc.toISOString(),
      };
    }),
  );
}

/** A visible post's comments, oldest first; comments by users the caller blocked are hidden. */
export async function pageComments(ctx: ServiceContext, input: { id: string; pageNumber: number; pageSize: number }) {
  const { id: postId, pageNumber, pageSize } = input;
  const blocked = (await readablePost(ctx, postId)).blockedUserIds;
  const [rows, count] = await Promise.all([
    runHotRead<CommentRow>(ctx, commentsPageQuery(postId, blocked, pageOffset(pageNumber, pageSize))),
    runHotRead<{ total: number }>(ctx, commentsCountQuery(postId, blocked)),
  ]);
  const items: CommentOutput[] = rows.map((r) => ({
    id: r.id,
    postId: r.post_id,
    content: r.content,
    author: { id: r.author_user_id, displayName: r.author_display_name },
    createdAtUtc: r.created_at_utc,
  }));
  return toPage(items, count[0]?.total ?? 0, pageNumber, pageSize);
}

/**
 * One share per user and post: the first share is created (`created: true`, 201), sharing again answers the
 * existing share (200) without counting twice.
 */
export async function sharePost(ctx: ServiceContext, input: { id: string }): Promise<{ created: boolean; share: ShareOutput }> {
  const { em, user } = ctx;
  const postId = input.id;
  return onExistingPost(() =>
    em.transactional(async (tx) => {
      await visiblePost(tx, user, postId);
      const inserted = await execSql<{ id: string }>(
        tx,
        `insert into post_share (id, created_at_utc, post_id, user_id) values (?, now(), ?, ?)
         on conflict (post_id, user_id) do nothing returning id`,
        [newId(), postId, user.id],
      );
      if (inserted.length > 0) await countOneMore(tx, postId, 'share_count');
      const [row] = await execSql<{ id: string; created_at_utc: Date; share_count: number }>(
        tx,
        `select s.id, s.created_at_utc, coalesce(ic.share_count, 0) as share_count
           from post_share s left join post_interaction_count ic on ic.post_id = s.post_id
          where s.post_id = ? and s.user_id = ?`,
        [postId, user.id],
      );
      if (!row) throw postNotFound();
      return {
        created: inserted.length > 0,
        share: { id: row.id, postId, userId: user.id, createdAtUtc: new Date(row.created_at_utc).toISOString(), shareCount: row.share_count },
      };
    }),
  );
}

// ---- Contract for events and alerts ----

export interface SystemPostInput {
  territoryId: string;
  authorUserId: string;
  title: string;
  content: string;
  type: 'EVENT' | 'ALERT';
  visibility: PostVisibility;
  status: 'PUBLISHED' | 'PENDING';
  eventId?: string | null;
  alertId?: string | null;
}

/**
 * The post an event or an alert brings with it, written inside the caller's transaction (flushed with the
 * caller's pending changes). No moderation rules, media or notification here: the caller owns those for its
 * content (events notify EVENT_CREATED, alerts ALERT_VALIDATED).
 */
export async function createSystemPost(em: EntityManager, input: SystemPostInput): Promise<{ id: string }> {
  const post = em.create(Post, {
    territoryId: input.territoryId,
    authorUserId: input.authorUserId,
    title: input.title.slice(0, 200),
    content: input.content,
    type: input.type,
    visibility: input.visibility,
    status: input.status,
    tags: [],
    mapEntityId: null,
    assetIds: [],
    eventId: input.eventId ?? null,
    alertId: input.alertId ?? null,
  });
  await em.flush();
  return { id: post.id };
}

/**
 * Publishes or rejects a system post (alert validation); 404 when the post does not exist. A HIDDEN post (a
 * moderation sanction) stays hidden: validating its alert again never undoes the sanction.
 */
export async function setPostStatus(em: EntityManager, postId: string, status: 'PUBLISHED' | 'REJECTED'): Promise<void> {
  const updated = await execSql<{ id: string }>(em, `update post set status = ?, updated_at_utc = now() where id = ? and status <> 'HIDDEN' returning id`, [
    status,
    postId,
  ]);
  if (updated.length === 0 && (await execSql(em, 'select 1 from post where id = ?', [postId])).length === 0) throw postNotFound();
}

/**
 * Hides a published post (a moderation sanction): it leaves the feed, the map and the counts for everyone but its
 * author and the territory's curators and moderators (the reads above). Inside the caller's
 * transaction; answers whether this call hid it (false: unknown, or not PUBLISHED any more).
 */
export async function hidePost(em: EntityManager, postId: string): Promise<boolean> {
  const hidden = await execSql<{ id: string }>(
    em,
    `update post set status = 'HIDDEN', updated_at_utc = now() where id = ? and status = 'PUBLISHED' returning id`,
    [postId],
  );
  return hidden.length > 0;
}
