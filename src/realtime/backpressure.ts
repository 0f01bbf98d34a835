/**
 * What keeps one slow real-time client from costing the server without bound.
 *
 * Over a WebSocket, tRPC writes each item of a subscription as soon as the stream yields it, whether or not the
 * client reads: what the client does not read waits in the socket's outgoing queue (`bufferedAmount`), one queue per
 * connection shared by its subscriptions. A live stream therefore checks that queue before it yields; past
 * `LIVE_STREAM_LIMITS.maxBufferedBytes` the connection is closed with SLOW_CONSUMER_CLOSE_CODE and a reason, and the
 * stream ends. The client reads what was queued, then the close; it reconnects and subscribes again with the id of
 * the last event it received (the SDK's WebSocket link does so by itself), and the stream, which reads from the
 * database after that id, continues without a gap. Other subscribers never wait for it: each stream reads and writes
 * on its own.
 *
 * Over SSE the HTTP response applies back-pressure (tRPC pulls the next item only once the previous one was written),
 * so a client that stops reading stops its stream, and what waits for it is the one pending `Wakeup` below.
 */

/** The part of a WebSocket (`ws`) a live stream watches and closes. */
export interface SendBuffer {
  /** Bytes queued for the client and not yet handed to the operating system. */
  readonly bufferedAmount: number;
  readonly readyState: number;
  close(code?: number, reason?: string): void;
}

export const LIVE_STREAM_LIMITS = {
  /** Bytes a connection may have queued for its client before it is dropped (a few hundred chat messages). */
  maxBufferedBytes: 1024 * 1024,
};

/** Close code of a connection dropped because its client did not keep up (4000-4999 are the application's own). */
export const SLOW_CONSUMER_CLOSE_CODE = 4429;
export const SLOW_CONSUMER_CLOSE_REASON = 'slow consumer: reconnect and resume from the last event id';

const OPEN = 1;

/**
 * Whether the stream writing to `outlet` must end: the connection is not open any more, or its queue is past the
 * limit (then it is closed here, with the code and reason the client sees). Without an outlet (SSE, in-process
 * callers) nothing is queued unread, so never.
 */
export function mustStop(outlet: SendBuffer | undefined): boolean {
  if (!outlet) return false;
  if (outlet.readyState !== OPEN) return true;
  if (outlet.bufferedAmount <= LIVE_STREAM_LIMITS.maxBufferedBytes) return false;
  outlet.close(SLOW_CONSUMER_CLOSE_CODE, SLOW_CONSUMER_CLOSE_REASON);
  return true;
}

/**
 * A coalescing wake-up: any number of `ring()`s before the next `wait()` count as one, so a stream that is not being
 * read (or is busy reading the database) holds one flag, never a queue of announcements.
 */
export class Wakeup {
  private pending = false;
  private closed = false;
  private waiter: (() => void) | null = null;

  ring() {
    this.pending = true;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }

  /** Ends every present and future `wait()` with false. */
  close() {
    this.closed = true;
    this.ring();
  }

  /** True once rung since the previous wait (at once if it already was); false once closed. */
  async wait(): Promise<boolean> {
    while (!this.pending && !this.closed) await new Promise<void>((resolve) => (this.waiter = resolve));
    this.pending = false;
    return !this.closed;
  }
}
