import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { tracked, type TrackedEnvelope } from '@trpc/server';
import { EventEmitter, on } from 'node:events';
import { runSql } from '../../db/sql.js';
import type { ServiceContext } from '../../platform/service-context.js';
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
 * that one come first. Every read re-checks the caller's right to read (a participant removed from a group stops
 * receiving) and leaves out the senders the caller blocked.
 *
 * Resolves only once the stream's start is fixed (LISTEN in effect, right to read checked, position read): the
 * subscription is reported started after that, so a message sent right after "started" is always delivered, and a
 * refusal arrives as the subscription's error rather than after it started.
 */
export async function liveMessages(
  deps: { orm: MikroORM; realtime: Realtime },
  ctx: ServiceContext,
  input: { conversationId: string; lastEventId?: string | null },
  signal: AbortSignal | undefined,
): Promise<AsyncGenerator<TrackedEnvelope<ReturnType<typeof toMessage>>>> {
  const fresh = (): ServiceContext => ({ ...ctx, em: deps.orm.em.fork() as EntityManager });
  const inbox = new EventEmitter();
  // Listen before reading where the stream starts, so nothing falls between the two.
  const offAnnouncements = deps.realtime.on(CHAT_MESSAGE_CHANNEL, (payload) => {
    if (conversationOf(payload) === input.conversationId) inbox.emit('wake');
  });
  const offReconnect = deps.realtime.onReconnect(() => inbox.emit('wake'));
  // Buffers from now on: a wake-up during the reads below is not lost.
  const wakes = on(inbox, 'wake', { signal });
  const stop = async () => {
    await wakes.return?.();
    offAnnouncements();
    offReconnect();
  };
  // A stream aborted before its first read never runs its `finally`: the abort releases the listeners then.
  signal?.addEventListener('abort', () => void stop(), { once: true });
  let lastSeq: number;
  try {
    // The first subscriber of a process starts the LISTEN: the stream's start is read only once it is in effect.
    await deps.realtime.listeningOn(CHAT_MESSAGE_CHANNEL);
    lastSeq = (await openForReading(fresh(), input.conversationId)).lastSeq;
    if (input.lastEventId) {
      const resumed = await messageSeqOf(fresh().em, input.conversationId, input.lastEventId);
      if (resumed !== null) lastSeq = resumed;
    }
  } catch (error) {
    await stop();
    throw error;
  }
  async function* drain() {
    const { hidden } = await openForReading(fresh(), input.conversationId);
    for (;;) {
      const rows = await runSql<MessageRow>(fresh().em, messagesAfterQuery(input.conversationId, lastSeq, hidden, BATCH));
      for (const row of rows) {
        lastSeq = Number(row.seq);
        yield tracked(row.id, toMessage(row));
      }
      if (rows.length < BATCH) return;
    }
  }
  async function* stream() {
    try {
      if (input.lastEventId) yield* drain();
      for await (const _ of wakes) {
        void _;
        yield* drain();
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
