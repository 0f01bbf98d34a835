import { z } from 'zod';
import { rateLimitRouteConfig } from '../../http/rate-limit.js';
import { withUpload } from '../../http/uploads.js';
import { zId } from '../../platform/ids.js';
import { badRequest, validationFailed } from '../../platform/problems.js';
import { zodFieldErrors } from '../../trpc/init.js';
import { type PlainRoutes, serviceContextOf } from '../../http/plain-routes.js';
import { sendStoredFile } from '../../http/stored-file.js';
import { UPLOAD_SNIFFED_MIME_TYPES } from './media.formats.js';
import { mediaAssetOutput, mediaUploadForm, uploadFields } from './media.schemas.js';
import { openMediaFor } from './media-access.js';
import { mediaUrl, purgeDeletedMedia, UPLOAD_LARGEST_LIMIT_BYTES, uploadMedia, uploadStreamLimitOf } from './media.service.js';

const UPLOAD_PATH = '/api/v1/media/upload';
const MEDIA_PATH = '/api/v1/media/{id}';
const mediaParams = z.object({ id: zId });
const MEDIA_CONTENT = {
  'image/*': { schema: z.string().meta({ format: 'binary' }) },
  'video/*': { schema: z.string().meta({ format: 'binary' }) },
  'audio/*': { schema: z.string().meta({ format: 'binary' }) },
};

/** Media upload (multipart) and streaming: plain routes beside the tRPC procedures (delete is one of those). */
export const mediaRoutes: PlainRoutes = {
  register(app, deps) {
    app.post(UPLOAD_PATH, { config: { rateLimit: rateLimitRouteConfig(deps.config, 'write') } }, async (request, reply) => {
      const ctx = serviceContextOf(request, deps);
      // Streamed to a temporary file under the sniffed type's limit (the declared purpose's when it came before the
      // file, else the largest a purpose may still give); the exact limit applies once every field is in. The file
      // is removed when the request is done.
      const options = {
        field: 'file',
        maxBytes: uploadStreamLimitOf,
        largestLimitBytes: UPLOAD_LARGEST_LIMIT_BYTES,
        allowedMimeTypes: UPLOAD_SNIFFED_MIME_TYPES,
      };
      const created = await withUpload(request, options, (upload) => {
        const fields = uploadFields.safeParse(upload.fields);
        if (!fields.success) throw badRequest('Validation failed', 'VALIDATION_FAILED', zodFieldErrors(fields.error));
        return uploadMedia(ctx, { upload, fields: fields.data });
      });
      // Content deletions only mark their media; requests that hold the storage purge what is marked.
      await purgeDeletedMedia(ctx.em, ctx.storage, 20);
      return reply.status(201).header('Location', mediaUrl(created.id)).type('application/json').send(mediaAssetOutput.parse(created));
    });

    // Media are read as part of feed, event and item pages: the feed-read bucket, not the global one.
    app.get(MEDIA_PATH.replace('{id}', ':id'), { config: { rateLimit: rateLimitRouteConfig(deps.config, 'feedRead') } }, async (request, reply) => {
      const ctx = serviceContextOf(request, deps);
      const params = mediaParams.safeParse(request.params);
      if (!params.success) throw validationFailed('id', 'must be a UUID');
      const { asset, file } = await openMediaFor(ctx, params.data);
      const ext = /\.([a-z0-9]{1,10})$/i.exec(asset.storageKey)?.[1];
      return sendStoredFile(request, reply, file, {
        contentType: asset.mimeType,
        disposition: `inline; filename="${ext ? `${asset.id}.${ext}` : asset.id}"`,
        // The bytes behind an id never change (a strong validator), but who may read them does (blocks,
        // memberships, visibility edits): only the reader's own cache keeps them, and briefly.
        etag: `"${asset.id}"`,
        cacheControl: 'private, max-age=300',
      });
    });
  },
  openapi: {
    [UPLOAD_PATH]: {
      post: {
        tags: ['Media'],
        summary: 'Upload an image, video or audio; answers the MediaAsset (201, Location)',
        description:
          'Images JPEG, PNG or WebP up to 10 MB; videos MP4, WebM or MOV up to 50 MB; audio MP3, WAV or OGG up to 20 MB. ' +
          'Limits vary by content: the optional field `purpose` (posts, events, marketplace or chat, before or after ' +
          "`file`) applies that section's global limits instead (events: video up to 100 MB and 10 minutes; chat: no " +
          'video, MEDIA_TYPE_NOT_ALLOWED; longer than the section allows: MEDIA_TOO_LONG); any other value is a 400 ' +
          'naming `purpose`. ' +
          "The type is sniffed from the bytes (the client's Content-Type and file name are ignored); video and audio " +
          'whose duration cannot be read (or cannot be read within 5 seconds: MEDIA_ANALYSIS_TIMEOUT) are refused. ' +
          "Each user's stored bytes (media and documents) are limited by the system setting Media:UserQuotaBytes " +
          "(413 STORAGE_QUOTA_EXCEEDED). Attaching media to content applies the territory's limits.",
        security: [{ BearerAuth: [] }],
        requestBody: { required: true, content: { 'multipart/form-data': { schema: mediaUploadForm } } },
        responses: {
          '201': {
            description: 'Stored',
            headers: z.object({ Location: z.string().meta({ description: '/api/v1/media/{id}' }) }),
            content: { 'application/json': { schema: mediaAssetOutput } },
          },
          '400': {
            description:
              'Missing file, unsupported type, too large (FILE_TOO_LARGE), unreadable duration, invalid title/description/purpose, ' +
              'or with `purpose` a type (MEDIA_TYPE_NOT_ALLOWED) or duration (MEDIA_TOO_LONG) that content type refuses',
          },
          '401': { description: 'Unauthorized' },
          '413': { description: 'The storage quota of the caller would be exceeded (STORAGE_QUOTA_EXCEEDED)' },
        },
      },
    },
    [MEDIA_PATH]: {
      get: {
        tags: ['Media'],
        summary: 'Stream a media file (to whoever may see the content showing it)',
        description:
          'The uploader always; media of a post to whoever sees the post in the feed (membership layer, ' +
          'RESIDENTS_ONLY, published, author not blocked); media of an event to every signed-in user who did not block ' +
          'its creator; media not attached yet to its uploader only. Anyone else gets the 404 of unknown media.',
        security: [{ BearerAuth: [] }],
        requestParams: { path: mediaParams },
        responses: {
          '200': {
            description: 'The bytes, with their sniffed content type',
            headers: z.object({ 'Content-Type': z.string(), 'Content-Length': z.string(), ETag: z.string(), 'Accept-Ranges': z.literal('bytes') }),
            content: MEDIA_CONTENT,
          },
          '206': {
            description: 'One byte range of the file (`Range: bytes=start-end`, `bytes=start-` or `bytes=-suffix`)',
            headers: z.object({ 'Content-Range': z.string(), 'Content-Length': z.string(), ETag: z.string() }),
            content: MEDIA_CONTENT,
          },
          '304': { description: 'Not modified (`If-None-Match` names the current ETag)' },
          '400': { description: 'Malformed id' },
          '401': { description: 'Unauthorized' },
          '404': { description: 'Unknown or deleted media, or media the caller may not see' },
          '416': { description: 'The range is outside the file (`Content-Range: bytes */size`)' },
        },
      },
    },
  },
};
