import type { CallerChange } from '../policy/caller.js';

/**
 * The subscriptions (live streams) open in this process, by user: a revocation announced for a user (sign-out,
 * logout, permission removal, account deletion: `announceCallerChange`) ends theirs, or only one session's, whatever
 * the transport. Over WebSocket the socket is closed too (src/http/websocket-guard.ts); over Server-Sent Events the
 * HTTP response is the stream, and ending it is the only way: it kept delivering after a sign-out everywhere.
 */
interface LiveStream {
  sessionId: string | null;
  end: () => void;
}

const byUser = new Map<string, Set<LiveStream>>();

/** Tracks a stream of `userId` until the returned function is called; `end` stops it on a revocation. */
export function trackLiveStream(userId: string, sessionId: string | null, end: () => void): () => void {
  const streams = byUser.get(userId) ?? new Set<LiveStream>();
  const entry: LiveStream = { sessionId, end };
  streams.add(entry);
  byUser.set(userId, streams);
  return () => {
    streams.delete(entry);
    if (streams.size === 0 && byUser.get(userId) === streams) byUser.delete(userId);
  };
}

/** Ends the streams a revocation ends: the user's, or only those of one session. */
export function endLiveStreams(change: Pick<CallerChange, 'userId' | 'sessionId'>) {
  for (const entry of byUser.get(change.userId) ?? []) {
    if (!change.sessionId || entry.sessionId === change.sessionId) entry.end();
  }
}
