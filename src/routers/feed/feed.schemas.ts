import { z } from 'zod';
import { POST_STATUSES, POST_TYPES, POST_VISIBILITIES } from '../../entities/post.entity.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { withOutputLimits, zText } from '../../platform/text.js';
import { lenientEnum } from '../../platform/enums.js';

// ---- Outputs ----

export const feedAuthorOutput = z.object({ id: z.uuid(), displayName: z.string() }).meta({ id: 'FeedAuthor' });

export const feedEventSummaryOutput = z
  .object({ id: z.uuid(), title: z.string(), startsAtUtc: z.iso.datetime(), status: z.string() })
  .meta({ id: 'FeedEventSummary' });

export const feedItemOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    title: z.string(),
    content: z.string(),
    type: z.enum(POST_TYPES),
    visibility: z.enum(POST_VISIBILITIES),
    status: z.enum(POST_STATUSES),
    tags: z.array(z.string()),
    mapEntityId: z.uuid().nullable(),
    assetIds: z.array(z.uuid()),
    likeCount: z.number().int(),
    commentCount: z.number().int(),
    shareCount: z.number().int(),
    likedByMe: z.boolean(),
    mediaUrls: z.array(z.string()),
    /** The event a post of type EVENT announces. */
    event: feedEventSummaryOutput.nullable(),
    author: feedAuthorOutput,
    createdAtUtc: z.iso.datetime(),
    updatedAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'FeedItem' });
export type FeedItemOutput = z.infer<typeof feedItemOutput>;

export const feedPage = pagedOutput(feedItemOutput).meta({ id: 'FeedItemPage' });

export const postCountsOutput = z
  .object({
    postId: z.uuid(),
    likeCount: z.number().int(),
    commentCount: z.number().int(),
    shareCount: z.number().int(),
    likedByMe: z.boolean(),
  })
  .meta({ id: 'PostCounts' });
export type PostCountsOutput = z.infer<typeof postCountsOutput>;

export const commentOutput = z
  .object({ id: z.uuid(), postId: z.uuid(), content: z.string(), author: feedAuthorOutput, createdAtUtc: z.iso.datetime() })
  .meta({ id: 'PostComment' });
export type CommentOutput = z.infer<typeof commentOutput>;
export const commentPage = pagedOutput(commentOutput).meta({ id: 'PostCommentPage' });

export const shareOutput = z
  .object({ id: z.uuid(), postId: z.uuid(), userId: z.uuid(), createdAtUtc: z.iso.datetime(), shareCount: z.number().int() })
  .meta({ id: 'PostShare' });
export type ShareOutput = z.infer<typeof shareOutput>;

// ---- Inputs ----

/** Enum input that also takes other letter cases (`post`, `Residents_Only`); outputs use the canonical spelling. */

/** Tags compare with interest tags, so they are normalized the same way (trimmed, lower-case, 1..50 chars). */
const tag = withOutputLimits(
  z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .pipe(
      z
        .string()
        .min(1, 'must not be empty')
        .max(50)
        .regex(/^[\p{L}\p{N} -]+$/u, 'letters, digits, spaces and hyphens only'),
    ),
);
const tags = z
  .array(tag)
  .max(20)
  .transform((list) => [...new Set(list)]);

export const createPostInput = z.object({
  /** Else the territory selected for the `X-Session-Id` session. */
  territoryId: zId.nullish(),
  title: zText({ max: 200 }),
  content: zText({ max: 5000 }),
  type: lenientEnum(POST_TYPES).default('POST'),
  visibility: lenientEnum(POST_VISIBILITIES).default('PUBLIC'),
  mediaIds: z.array(zId).max(50).default([]),
  tags: tags.default([]),
  /** A map entity of the territory the post is about. */
  mapEntityId: zId.nullish(),
  /** Territory assets the post refers to, as context. */
  assetIds: z
    .array(zId)
    .max(20)
    .default([])
    .transform((list) => [...new Set(list)]),
});
export type CreatePostInput = z.infer<typeof createPostInput>;

export const updatePostInput = z.object({
  id: zId,
  title: zText({ max: 200 }).optional(),
  content: zText({ max: 5000 }).optional(),
  visibility: lenientEnum(POST_VISIBILITIES).optional(),
  tags: tags.optional(),
});
export type UpdatePostInput = z.infer<typeof updatePostInput>;

/** A query flag: `true`/`false` (also 1/0, yes/no, on/off), as URLs carry it (tRPC callers send the same strings). */
const queryFlag = z.stringbool().meta({ description: '`true` or `false` (also 1/0, yes/no, on/off)' }).default(false);

const feedFilters = {
  territoryId: zId.optional(),
  filterByInterests: queryFlag,
  mapEntityId: zId.optional(),
  assetId: zId.optional(),
};
export const feedListInput = z.object({ ...feedFilters, ...skipTakeInput() });
export const feedPagedInput = z.object({ ...feedFilters, ...pageInput });
export type FeedFilterInput = z.infer<typeof feedListInput>;

/** My posts: every territory, or one when `territoryId` is given; the same filters as the territory feed. */
export const myFeedListInput = z.object({ ...feedFilters, ...skipTakeInput() });
export const myFeedPagedInput = z.object({ ...feedFilters, ...pageInput });
export type MyFeedFilterInput = Omit<z.infer<typeof myFeedListInput>, 'skip' | 'take'>;

export const postIdInput = z.object({ id: zId });
export const addCommentInput = z.object({ id: zId, content: zText({ max: 2000 }) });
export const commentsPagedInput = z.object({ id: zId, ...pageInput });
