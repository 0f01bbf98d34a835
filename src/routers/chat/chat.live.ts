import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { tracked, type TrackedEnvelope } from '@trpc/server';
import { runHotRead } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { mustStop, type SendBuffer, Wakeup } from '../../realtime/backpressure.js';
import type { Realtime } from '../../realtime/realtime.js';
import { messagesAfterQuery, type MessageRow } from './chat.queries.js';
import { CHAT_MESSAGE_CHANNEL, messageSeqOf, openForReading, toMessage } from './chat.service.js';

const BATCH = 100;

function conversationOf(payload: string): string | null {
  try {
    const value = JSON.parse(payload) as { c?: unknown };
    return typeof value.c === 'string' ? value.c : null;
  } catch {
    return null;
  }
}

/**
 * The new messages of a conversation as they are committed, from any API process (LISTEN/NOTIFY), each as a tracked
 * envelope whose id is the message id. Messages are read by sequence number (`seq > last delivered`), so an
 * announcement that was missed (a LISTEN reconnect) or arrives twice changes nothing: the next read delivers every
 * message after the last one sent, in order, once. With `lastEventId` (a reconnecting client) the messages after
 * that one come first. Every read re-checks the caller's right to read, so a participant removed from a group gets
 * the 403 and a disabled group's stream ends with a 409 (both are announced on the channel, so this happens at
 * once, not at the next message); it leaves out the senders the caller blocked.
 *
 * `outlet` is the WebSocket the stream is written to: a client that lets its queue grow past the limit is dropped and
 * resumes with its last event id (src/realtime/backpressure.ts).
 *
 * Resolves only once the stream's start is fixed (LISTEN in effect, right to read checked, position read): the
 * subscription is reported started after that, so a message sent right after "started" is always delivered, and a
 * refusal arrives as the subscription's error rather than after it started.
 */
export async function liveMessages(
  deps: { orm: MikroORM; realtime: Realtime },
  ctx: ServiceContext,
  input: { conversationId: string; lastEventId?: string | null },
  opts: { signal: AbortSignal | undefined; outlet?: SendBuffer | undefined },
): Promise<AsyncGenerator<TrackedEnvelope<ReturnType<typeof toMessage>>>> {
  const { signal, outlet } = opts;
  const fresh = (): ServiceContext => ({ ...ctx, em: deps.orm.em.fork() as EntityManager });
  // Rung by announcements from now on: one that comes during the reads below is not lost, and many count as one.
  const wakeup = new Wakeup();
  // Listen before reading where the stream starts, so nothing falls between the two.
  const offAnnouncements = deps.realtime.on(CHAT_MESSAGE_CHANNEL, (payload) => {
    if (conversationOf(payload) === input.conversationId) wakeup.ring();
  });
  const offReconnect = deps.realtime.onReconnect(() => wakeup.ring());
  const stop = () => {
    wakeup.close();
    offAnnouncements();
    offReconnect();
  };
  // A stream aborted before its first read never runs its `finally`: the abort releases the listeners then.
  signal?.addEventListener('abort', stop, { once: true });
  let lastSeq: number;
  try {
    // The first subscriber of a process starts the LISTEN: the stream's start is read only once it is in effect.
    await deps.realtime.listeningOn(CHAT_MESSAGE_CHANNEL);
    lastSeq = (await openForReading(fresh(), input.conversationId)).lastSeq;
    if (input.lastEventId) {
      const resumed = await messageSeqOf(fresh(), input.conversationId, input.lastEventId);
      if (resumed !== null) lastSeq = resumed;
    }
  } catch (error) {
    stop();
    throw error;
  }
  /** Everything after `lastSeq`; false when the client was dropped (or is gone) and the stream must end. */
  async function* drain(): AsyncGenerator<TrackedEnvelope<ReturnType<typeof toMessage>>, boolean> {
    if (mustStop(outlet)) return false;
    const { hidden } = await openForReading(fresh(), input.conversationId);
    for (;;) {
      const rows = await runHotRead<MessageRow>(fresh(), messagesAfterQuery(input.conversationId, lastSeq, hidden, BATCH));
      for (const row of rows) {
        // Checked before every message: what the client has not read stays bounded however many arrive.
        if (mustStop(outlet)) return false;
        lastSeq = Number(row.seq);
        yield tracked(row.id, toMessage(row));
      }
      if (rows.length < BATCH) return true;
    }
  }
  async function* stream() {
    try {
      if (input.lastEventId && !(yield* drain())) return;
      while (await wakeup.wait()) {
        if (!(yield* drain())) return;
      }
    } finally {
      stop();
    }
  }
  return stream();
}
