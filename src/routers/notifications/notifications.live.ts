import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { tracked, type TrackedEnvelope } from '@trpc/server';
import { EventEmitter, on } from 'node:events';
import type { Realtime } from '../../realtime/realtime.js';
import type { NotificationOutput } from './notifications.schemas.js';
import { findMine, listMineAfter, listMineSince } from './notifications.service.js';

/** PostgreSQL channel on which the dispatcher announces each new notification: `{"userId","notificationId"}`. */
export const NOTIFICATION_CHANNEL = 'notification_created';

const CATCH_UP_LIMIT = 100;
const SEEN_LIMIT = 1000;
const CATCH_UP = Symbol('catch-up');

interface Announcement {
  userId: string;
  notificationId: string;
}

function parseAnnouncement(payload: string): Announcement | null {
  try {
    const value = JSON.parse(payload) as Partial<Announcement>;
    return typeof value.userId === 'string' && typeof value.notificationId === 'string' ? { userId: value.userId, notificationId: value.notificationId } : null;
  } catch {
    return null;
  }
}

type Delivery = (notificationId: string) => void;
const streamsByUserOf = new WeakMap<Realtime, Map<string, Set<Delivery>>>();

/**
 * Routes the announcements of the user to `deliver` until the returned function is called. One listener per process
 * parses each announcement once and hands it to that user's streams only: with a listener per stream, 500 open
 * streams parsed every one of 5,000 announcements (2.5 million parses for one post in a large territory).
 */
function announcementsFor(realtime: Realtime, userId: string, deliver: Delivery): () => void {
  let streamsByUser = streamsByUserOf.get(realtime);
  if (!streamsByUser) {
    const byUser = new Map<string, Set<Delivery>>();
    realtime.on(NOTIFICATION_CHANNEL, (payload) => {
      const announcement = parseAnnouncement(payload);
      const streams = announcement && byUser.get(announcement.userId);
      if (streams) for (const stream of streams) stream(announcement.notificationId);
    });
    streamsByUserOf.set(realtime, (streamsByUser = byUser));
  }
  let streams = streamsByUser.get(userId);
  if (!streams) streamsByUser.set(userId, (streams = new Set()));
  streams.add(deliver);
  const byUser = streamsByUser;
  const mine = streams;
  return () => {
    mine.delete(deliver);
    if (mine.size === 0 && byUser.get(userId) === mine) byUser.delete(userId);
  };
}

/**
 * The user's new notifications as they are delivered, from any process (LISTEN/NOTIFY), each as a tracked
 * envelope whose id is the notification id. With `lastEventId` (a reconnecting client) the ones created after it
 * come first. When this process's LISTEN connection had to reconnect, what was created meanwhile is read from the
 * database, so nothing is lost; ids already sent are not sent twice.
 *
 * Resolves once the stream listens (LISTEN in effect, announcements buffered): the subscription is reported started
 * only then, so a notification delivered right after "started" is never missed.
 */
export async function liveNotifications(
  deps: { orm: MikroORM; realtime: Realtime },
  userId: string,
  lastEventId: string | null,
  signal: AbortSignal | undefined,
): Promise<AsyncGenerator<TrackedEnvelope<NotificationOutput>>> {
  const startedAt = new Date();
  const inbox = new EventEmitter();
  // Listen before reading the backlog, so nothing falls between the two.
  const offAnnouncements = announcementsFor(deps.realtime, userId, (notificationId) => inbox.emit('item', notificationId));
  const offReconnect = deps.realtime.onReconnect(() => inbox.emit('item', CATCH_UP));
  // Buffers from now on, before the stream is started.
  const items = on(inbox, 'item', { signal });
  const stop = async () => {
    await items.return?.();
    offAnnouncements();
    offReconnect();
  };
  // A stream aborted before its first read never runs its `finally`: the abort releases the listeners then.
  signal?.addEventListener('abort', () => void stop(), { once: true });
  try {
    await deps.realtime.listeningOn(NOTIFICATION_CHANNEL);
  } catch (error) {
    await stop();
    throw error;
  }
  const em = () => deps.orm.em.fork() as EntityManager;

  const seen = new Set<string>();
  let lastId = lastEventId;
  const deliver = (n: NotificationOutput) => {
    seen.add(n.id);
    if (seen.size > SEEN_LIMIT) seen.delete(seen.values().next().value as string);
    if (!lastId || n.id > lastId) lastId = n.id;
    return tracked(n.id, n);
  };
  /**
   * Everything created after the last id sent (or since the stream started), page after page until a short one: one
   * page of 100 and then the live ones lost the rest for good (the next live id moved the resume point past them).
   */
  async function* missed() {
    for (;;) {
      const page = lastId ? await listMineAfter(em(), userId, lastId, CATCH_UP_LIMIT) : await listMineSince(em(), userId, startedAt, CATCH_UP_LIMIT);
      for (const n of page) if (!seen.has(n.id)) yield deliver(n);
      if (page.length < CATCH_UP_LIMIT) return;
    }
  }

  async function* stream() {
    try {
      if (lastEventId) yield* missed();
      for await (const [item] of items) {
        if (item === CATCH_UP) {
          yield* missed();
          continue;
        }
        const id = item as string;
        if (seen.has(id)) continue;
        const n = await findMine(em(), userId, id);
        if (n) yield deliver(n);
      }
    } catch (error) {
      // The client unsubscribed or disconnected: a normal end of the stream.
      if (!(signal?.aborted && (error as Error).name === 'AbortError')) throw error;
    } finally {
      await stop();
    }
  }
  return stream();
}
