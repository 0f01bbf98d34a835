import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { liveNotifications } from './notifications.live.js';
import { byIdInput, listInput, notificationOutput, notificationPage, onNewInput, pagedInput, zTrackedAsyncIterable } from './notifications.schemas.js';
import * as notifications from './notifications.service.js';

const TAGS = ['Notifications'];

export const notificationsRouter = router({
  list: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/notifications', tags: TAGS, summary: 'My notifications, newest first' } })
    .input(listInput)
    .output(z.array(notificationOutput))
    .query(({ ctx, input }) => notifications.listMine(ctx, input)),

  paged: authedProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/notifications/paged', tags: TAGS, summary: 'My notifications, newest first (paged)' } })
    .input(pagedInput)
    .output(notificationPage)
    .query(({ ctx, input }) => notifications.pageMine(ctx, input)),

  read: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/notifications/{id}/read',
        tags: TAGS,
        summary: 'Mark one of my notifications read (idempotent; answers the notification)',
      },
    })
    .input(byIdInput)
    .output(notificationOutput)
    .mutation(({ ctx, input }) => notifications.markRead(ctx, input)),

  /** Real time over the tRPC WebSocket (or SSE): each new notification of the caller, from any API process. */
  onNew: authedProcedure
    .input(onNewInput)
    .output(zTrackedAsyncIterable(notificationOutput))
    .subscription(({ ctx, input, signal }) => liveNotifications(ctx.deps, ctx.user.id, input?.lastEventId ?? null, signal)),
});
