import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { setActingClient } from '../../entities/audit.entity.js';
import { POST_VISIBILITIES } from '../../entities/post.entity.js';
import { type PlainRoutes, publicServiceContextOf } from '../../http/plain-routes.js';
import { rateLimitRouteConfig } from '../../http/rate-limit.js';
import { refusalOfFile, withUploads } from '../../http/uploads.js';
import type { ClientScope } from '../../entities/client-application.entity.js';
import { zId } from '../../platform/ids.js';
import { AppError, badRequest, forbidden, unauthorized } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { zText } from '../../platform/text.js';
import type { Upload } from '../../platform/upload.js';
import { zodFieldErrors } from '../../trpc/init.js';
import { createPostInput, feedItemOutput, type FeedItemOutput } from '../feed/feed.schemas.js';
import { createPost } from '../feed/feed.service.js';
import { UPLOAD_SNIFFED_MIME_TYPES } from '../media/media.formats.js';
import { findLiveMedia, uploadLimitOf, uploadMedia } from '../media/media.service.js';
import { userWrote } from './answer-cache.js';
import { JOURNEY_TAGS, journeySuggestion, type JourneySuggestion, renamedFields } from './journey-common.js';

export const CREATE_POST_PATH = '/api/v2/journeys/feed/create-post';
/** The spec's limits of the journeys create-post call (Limits, "Journeys post title/content"). */
export const JOURNEY_POST_TITLE_MAX = 200;
export const JOURNEY_POST_CONTENT_MAX = 5000;
/** The files of one post: the posts' own media rules (count, types, sizes, durations) apply on top. */
export const JOURNEY_POST_MAX_FILES = 10;
const FILES_FIELD = 'mediaFiles';

const createPostQuery = z.object({ territoryId: zId });

const createPostFields = z.object({
  title: zText({ max: JOURNEY_POST_TITLE_MAX }),
  content: zText({ max: JOURNEY_POST_CONTENT_MAX }),
  // The feed's own spellings and defaults (POST, PUBLIC; lenient case).
  type: createPostInput.shape.type,
  visibility: createPostInput.shape.visibility,
});

export const createPostJourneyOutput = z
  .object({ post: feedItemOutput, mediaUrls: z.array(z.string()), suggestions: z.array(journeySuggestion) })
  .meta({ id: 'JourneyCreatePost' });
type CreatePostJourneyOutput = z.infer<typeof createPostJourneyOutput>;

const createPostForm = z
  .object({
    title: z.string().min(1).max(JOURNEY_POST_TITLE_MAX),
    content: z.string().min(1).max(JOURNEY_POST_CONTENT_MAX),
    type: z.enum(['POST', 'ALERT']).optional().meta({ description: 'Default POST; ALERT needs the ALERTPOSTS flag' }),
    visibility: z.enum(POST_VISIBILITIES).optional().meta({ description: 'Default PUBLIC' }),
    [FILES_FIELD]: z
      .array(z.string().meta({ format: 'binary' }))
      .max(JOURNEY_POST_MAX_FILES)
      .optional()
      .meta({ description: `0..${JOURNEY_POST_MAX_FILES} files, one part each, all named ${FILES_FIELD}` }),
  })
  .meta({ id: 'JourneyCreatePostForm' });

/**
 * The journeys caller of a plain route, as `journeyUserProcedure` checks it: a client token holding `scope` (401
 * without a valid one, 403 without the scope), then the user of `X-User-Token` (401).
 */
function requireJourneyUser(request: FastifyRequest, scope: ClientScope) {
  const { client, error } = request.client;
  if (!client) throw unauthorized(error);
  if (!client.scopes.includes(scope)) throw forbidden(`This operation requires the ${scope} scope.`);
  const user = request.auth.user;
  if (!user) throw unauthorized(request.auth.error ?? 'This journey acts for a user: send their access token in X-User-Token.');
  return { client, user };
}

/** The posts' media field (`mediaIds`) is the request's `mediaFiles` here: a refusal names what the client sent. */
const FILES_NAMES: ReadonlyMap<string, string> = new Map([['mediaIds', FILES_FIELD]]);

/**
 * Uploads the files as the user's media and creates the post with them through the feed service, all in one
 * transaction: any refusal (a file the media service refuses, the posts' media rules, the post's own rules) rolls
 * back every media row and the post, and the bytes already copied to storage are removed, so nothing is left behind.
 */
async function createPostWithFiles(
  ctx: ServiceContext,
  input: z.infer<typeof createPostFields> & { territoryId: string; files: Upload[] },
): Promise<FeedItemOutput> {
  const storedKeys: string[] = [];
  try {
    return await ctx.em.transactional(async (tx) => {
      const inTx: ServiceContext = { ...ctx, em: tx };
      const mediaIds: string[] = [];
      for (const [index, upload] of input.files.entries()) {
        // The media service's refusal (size, dimensions, duration, quota) names the file as the parser's refusals do.
        const media = await uploadMedia(inTx, { upload, fields: { title: null, description: null } }).catch((error: unknown) => {
          throw error instanceof AppError ? refusalOfFile(error, FILES_FIELD, index + 1) : error;
        });
        storedKeys.push((await findLiveMedia(tx, media.id)).storageKey);
        mediaIds.push(media.id);
      }
      return createPost(inTx, {
        territoryId: input.territoryId,
        title: input.title,
        content: input.content,
        type: input.type,
        visibility: input.visibility,
        mediaIds,
        tags: [],
        mapEntityId: null,
        assetIds: [],
      });
    });
  } catch (error) {
    await Promise.all(storedKeys.map((key) => ctx.storage.remove(key).catch(() => undefined)));
    throw renamedFields(error, FILES_NAMES);
  }
}

function suggestionsFor(post: FeedItemOutput): JourneySuggestion[] {
  const out: JourneySuggestion[] = [{ action: 'VIEW_FEED', title: 'See your post in the territory feed', priority: 1 }];
  if (post.visibility === 'PUBLIC') out.push({ action: 'SHARE_POST', title: 'Share your post with your neighbours', priority: 2 });
  return out;
}

/**
 * `POST /api/v2/journeys/feed/create-post`: a post and its files in one multipart request (DESIGN section 15). A
 * plain route because the REST bridge reads JSON only. Every refusal has the v2 error body (the error handler answers
 * /api/v2 paths so).
 */
export const createPostJourneyRoutes: PlainRoutes = {
  register(app, deps) {
    app.post(CREATE_POST_PATH, { config: { rateLimit: rateLimitRouteConfig(deps.config, 'write') } }, async (request, reply) => {
      const { client, user } = requireJourneyUser(request, 'journeys:write');
      const query = createPostQuery.safeParse(request.query);
      if (!query.success) throw badRequest('Validation failed', 'VALIDATION_FAILED', zodFieldErrors(query.error));
      const ctx: ServiceContext = { ...publicServiceContextOf(request, deps), user };
      setActingClient(ctx.em, client.id);
      // The author sees the post at once in their feed journeys: their cached answers go, before and after.
      userWrote(user.id);
      let created: CreatePostJourneyOutput;
      try {
        created = await withUploads(
          request,
          {
            field: FILES_FIELD,
            maxFiles: JOURNEY_POST_MAX_FILES,
            maxBytes: uploadLimitOf,
            allowedMimeTypes: UPLOAD_SNIFFED_MIME_TYPES,
            // UTF-8 takes at most 3 bytes for each UTF-16 unit the content's limit counts: a value within the limit is
            // never cut (the default 10,000 bytes cut 3,334 CJK characters), and a longer one is refused as too long.
            maxFieldBytes: 4 * JOURNEY_POST_CONTENT_MAX,
          },
          async (files, rawFields) => {
            const fields = createPostFields.safeParse(rawFields);
            if (!fields.success) throw badRequest('Validation failed', 'VALIDATION_FAILED', zodFieldErrors(fields.error));
            const post = await createPostWithFiles(ctx, { ...fields.data, territoryId: query.data.territoryId, files });
            return { post, mediaUrls: post.mediaUrls, suggestions: suggestionsFor(post) };
          },
        );
      } finally {
        userWrote(user.id);
      }
      return reply.status(201).header('Location', `/api/v1/feed/${created.post.id}`).type('application/json').send(createPostJourneyOutput.parse(created));
    });
  },
  openapi: {
    [CREATE_POST_PATH]: {
      post: {
        tags: JOURNEY_TAGS,
        summary: 'Create a post with its files in one multipart request (RESIDENT of the territory)',
        description:
          `Fields title (1..${JOURNEY_POST_TITLE_MAX}), content (1..${JOURNEY_POST_CONTENT_MAX}), type (POST or ALERT), visibility ` +
          `(PUBLIC or RESIDENTS_ONLY) and 0..${JOURNEY_POST_MAX_FILES} files in ${FILES_FIELD}. Each file is uploaded as by ` +
          'POST /api/v1/media/upload (type sniffed from the bytes, size limits, storage quota) and the post follows the rules of ' +
          "POST /api/v1/feed, media rules of posts included (the territory's media flags and configuration, one video or one audio). " +
          'A refusal leaves no post and no uploaded file behind; 400 details name the field. Needs journeys:write and X-User-Token; ' +
          "the author's cached journey answers are dropped.",
        security: [{ ClientCredentials: ['journeys:write'] }],
        requestParams: {
          query: createPostQuery,
          header: z.object({ 'X-User-Token': z.string().meta({ description: "The user's access token (POST /api/v1/auth/social)" }) }),
        },
        requestBody: { required: true, content: { 'multipart/form-data': { schema: createPostForm } } },
        responses: {
          '201': {
            description: 'Created',
            headers: z.object({ Location: z.string().meta({ description: '/api/v1/feed/{id}' }) }),
            content: { 'application/json': { schema: createPostJourneyOutput } },
          },
          '400': { description: 'Invalid field, a refused file (type, size, dimensions, duration) or the media rules of posts' },
          '401': { description: 'Missing or invalid client token, or no X-User-Token' },
          '403': { description: 'No journeys:write scope, not a RESIDENT of the territory, or posting restricted' },
          '404': { description: 'Unknown territory' },
          '413': { description: "The user's storage quota would be exceeded (STORAGE_QUOTA_EXCEEDED)" },
        },
      },
    },
  },
};
