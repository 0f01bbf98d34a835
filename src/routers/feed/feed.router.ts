import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import {
  addCommentInput,
  commentOutput,
  commentPage,
  commentsPagedInput,
  createPostInput,
  feedItemOutput,
  feedListInput,
  feedPage,
  feedPagedInput,
  myFeedListInput,
  myFeedPagedInput,
  postCountsOutput,
  postIdInput,
  shareOutput,
  updatePostInput,
} from './feed.schemas.js';
import * as feed from './feed.service.js';
import { sessionTerritoryHeader } from '../../platform/service-context.js';

const TAGS = ['Feed'];

export const feedRouter = router({
  list: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/feed',
        requestHeaders: sessionTerritoryHeader,
        tags: TAGS,
        summary: "A territory's feed, newest first (territoryId or X-Session-Id)",
      },
      rateLimit: 'feedRead',
    })
    .input(feedListInput)
    .output(z.array(feedItemOutput))
    .query(({ ctx, input }) => feed.listFeed(ctx, input)),

  paged: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/feed/paged', requestHeaders: sessionTerritoryHeader, tags: TAGS, summary: "A territory's feed (paged)" },
      rateLimit: 'feedRead',
    })
    .input(feedPagedInput)
    .output(feedPage)
    .query(({ ctx, input }) => feed.pageFeed(ctx, input)),

  mine: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/feed/me', tags: TAGS, summary: 'My published posts, newest first' },
      rateLimit: 'feedRead',
    })
    .input(myFeedListInput)
    .output(z.array(feedItemOutput))
    .query(({ ctx, input }) => feed.listMine(ctx, input)),

  minePaged: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/feed/me/paged', tags: TAGS, summary: 'My published posts (paged)' },
      rateLimit: 'feedRead',
    })
    .input(myFeedPagedInput)
    .output(feedPage)
    .query(({ ctx, input }) => feed.pageMine(ctx, input)),

  byId: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/feed/{id}', tags: TAGS, summary: 'A post I can see' },
      rateLimit: 'feedRead',
    })
    .input(postIdInput)
    .output(feedItemOutput)
    .query(({ ctx, input }) => feed.getPost(ctx, input)),

  create: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/feed',
        requestHeaders: sessionTerritoryHeader,
        tags: TAGS,
        summary: 'Create a post (RESIDENT of the territory)',
      },
      successStatus: 201,
    })
    .input(createPostInput)
    .output(feedItemOutput)
    .mutation(async ({ ctx, input }) => {
      const created = await feed.createPost(ctx, input);
      ctx.resp.headers.Location = `/api/v1/feed/${created.id}`;
      return created;
    }),

  update: authedProcedure
    .meta({ openapi: { method: 'PATCH', path: '/api/v1/feed/{id}', tags: TAGS, summary: 'Edit my post (title, content, visibility, tags)' } })
    .input(updatePostInput)
    .output(feedItemOutput)
    .mutation(({ ctx, input }) => feed.updatePost(ctx, input)),

  remove: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/feed/{id}', tags: TAGS, summary: 'Delete a post and its media (author or curator)' },
      successStatus: 204,
    })
    .input(postIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => feed.deletePost(ctx, input)),

  like: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/feed/{id}/likes', tags: TAGS, summary: 'Like a post (idempotent); answers the counts' } })
    .input(postIdInput)
    .output(postCountsOutput)
    .mutation(({ ctx, input }) => feed.likePost(ctx, input)),

  unlike: authedProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/feed/{id}/likes', tags: TAGS, summary: 'Remove my like (204 even when absent)' },
      successStatus: 204,
    })
    .input(postIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => feed.unlikePost(ctx, input)),

  addComment: authedProcedure
    .meta({ openapi: { method: 'POST', path: '/api/v1/feed/{id}/comments', tags: TAGS, summary: 'Comment on a post' }, successStatus: 201 })
    .input(addCommentInput)
    .output(commentOutput)
    .mutation(({ ctx, input }) => feed.addComment(ctx, input)),

  comments: authedProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/feed/{id}/comments', tags: TAGS, summary: "A post's comments, oldest first (paged)" },
      rateLimit: 'feedRead',
    })
    .input(commentsPagedInput)
    .output(commentPage)
    .query(({ ctx, input }) => feed.pageComments(ctx, input)),

  share: authedProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/feed/{id}/shares', tags: TAGS, summary: 'Share a post (201; 200 with my existing share)' },
      successStatus: 201,
      idempotentRepeat: true,
    })
    .input(postIdInput)
    .output(shareOutput)
    .mutation(async ({ ctx, input }) => {
      const { created, share } = await feed.sharePost(ctx, input);
      if (!created) ctx.resp.status = 200;
      return share;
    }),
});
