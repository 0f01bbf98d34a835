import { z } from 'zod';
import { runHotRead } from '../../db/sql.js';
import { zId } from '../../platform/ids.js';
import { pageInput, toPage } from '../../platform/pagination.js';
import { badRequest } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { zText } from '../../platform/text.js';
import { type InteractionRow, interactionsQuery } from '../feed/feed.queries.js';
import { feedAuthorOutput, feedEventSummaryOutput, feedItemOutput, type FeedItemOutput } from '../feed/feed.schemas.js';
import { addComment, feedItemOf, feedPageRows, getPost, likePost, mayEditPost, sharePost, unlikePost } from '../feed/feed.service.js';
import { mediaUrl } from '../media/media.service.js';
import { journeyMedia, journeyPagination, paginationOf, withJourneyFieldNames } from './journey-common.js';
import { lenientEnum } from '../../platform/enums.js';

// ---- Schemas ----

export const territoryFeedInput = z.object({ territoryId: zId, ...pageInput });

const counts = z.object({ likes: z.number().int(), comments: z.number().int(), shares: z.number().int() }).meta({ id: 'JourneyPostCounts' });
const userInteractions = z.object({ liked: z.boolean(), shared: z.boolean(), commented: z.boolean() }).meta({ id: 'JourneyPostInteractions' });

const feedItemJourney = z
  .object({
    post: feedItemOutput,
    counts,
    media: z.array(journeyMedia),
    event: feedEventSummaryOutput.nullable(),
    author: feedAuthorOutput,
    userInteractions,
    metadata: z.object({ canEdit: z.boolean(), canDelete: z.boolean() }),
  })
  .meta({ id: 'FeedItemJourney' });

export const territoryFeedOutput = z
  .object({
    items: z.array(feedItemJourney),
    pagination: journeyPagination,
    filters: z.object({ territoryId: z.uuid() }),
  })
  .meta({ id: 'JourneyTerritoryFeed' });

export const INTERACT_ACTIONS = ['LIKE', 'UNLIKE', 'COMMENT', 'SHARE'] as const;

export const interactInput = z
  .object({
    postId: zId,
    action: lenientEnum(INTERACT_ACTIONS),
    comment: zText({ max: 2000 }).nullish(),
  })
  .superRefine((v, ctx) => {
    if (v.action === 'COMMENT' && !v.comment) ctx.addIssue({ code: 'custom', path: ['comment'], message: 'required when action is COMMENT' });
  });

export const interactOutput = z.object({ post: feedItemOutput, counts, userInteractions }).meta({ id: 'JourneyPostInteraction' });

// ---- Services ----

type Interactions = z.infer<typeof userInteractions>;

/** What the user did with one post: the like from the post itself, the share and comment read by `interactionsQuery`. */
async function interactionsWith(ctx: ServiceContext, post: FeedItemOutput): Promise<Interactions> {
  // A named statement: one shape whatever the post, key probes whatever the values.
  const [row] = await runHotRead<InteractionRow>(ctx, interactionsQuery(ctx.user.id, post.id), { prepared: true });
  return { liked: post.likedByMe, shared: row?.shared_by_me === true, commented: row?.commented_by_me === true };
}

const countsOf = (post: FeedItemOutput) => ({ likes: post.likeCount, comments: post.commentCount, shares: post.shareCount });

/**
 * One screen of a territory's feed: each post with its counts, media, event, author and what the user did with it
 * (likes, shares and comments read with the page's rows), and whether they may edit it (as updatePost decides) and
 * delete it (as deletePost decides: its author, or who holds CURATOR here).
 */
export async function territoryFeed(ctx: ServiceContext, input: z.infer<typeof territoryFeedInput>): Promise<z.infer<typeof territoryFeedOutput>> {
  const { rows, total, access } = await feedPageRows(
    ctx,
    { territoryId: input.territoryId, filterByInterests: false, pageNumber: input.pageNumber, pageSize: input.pageSize },
    true,
  );
  const page = toPage(rows.map(feedItemOf), total, input.pageNumber, input.pageSize);
  const curates = access.holds('CURATOR');
  return {
    items: page.items.map((post, i) => {
      const own = post.author.id === ctx.user.id;
      const row = rows[i]!;
      return {
        post,
        counts: countsOf(post),
        media: row.media_ids.map((id, k) => ({ id, url: mediaUrl(id), mediaType: row.media_types[k]! })),
        event: post.event,
        author: post.author,
        userInteractions: { liked: post.likedByMe, shared: row.shared_by_me === true, commented: row.commented_by_me === true },
        metadata: { canEdit: mayEditPost(ctx.user.id, post, access), canDelete: own || curates },
      };
    }),
    pagination: paginationOf(page),
    filters: { territoryId: input.territoryId },
  };
}

/** The v1 post services' names of the interaction's fields: the post is `id`, a comment's text `content`. */
const INTERACTION_NAMES = { id: 'postId', content: 'comment' };

/** Like, unlike, comment on or share a post, answering the post as it now stands. */
export function interact(ctx: ServiceContext, input: z.infer<typeof interactInput>): Promise<z.infer<typeof interactOutput>> {
  return withJourneyFieldNames(INTERACTION_NAMES, () => interactAs(ctx, input));
}

async function interactAs(ctx: ServiceContext, input: z.infer<typeof interactInput>): Promise<z.infer<typeof interactOutput>> {
  const id = input.postId;
  switch (input.action) {
    case 'LIKE':
      await likePost(ctx, { id });
      break;
    case 'UNLIKE':
      await unlikePost(ctx, { id });
      break;
    case 'COMMENT':
      if (!input.comment) throw badRequest('A comment is required.', 'VALIDATION_FAILED', [{ field: 'comment', message: 'required' }]);
      await addComment(ctx, { id, content: input.comment });
      break;
    case 'SHARE':
      await sharePost(ctx, { id });
      break;
  }
  const post = await getPost(ctx, { id });
  return { post, counts: countsOf(post), userInteractions: await interactionsWith(ctx, post) };
}
