import { EventEmitter } from 'node:events';
import pg from 'pg';

export type RealtimeLogger = (message: string, error?: unknown) => void;

const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;
const HEARTBEAT_MS = 15_000;

/** The name the LISTEN connection shows in pg_stat_activity (operators and tests find it by it). */
export const REALTIME_APPLICATION_NAME = 'territory-realtime';

/**
 * Cross-process fan-out over PostgreSQL LISTEN/NOTIFY. Each process holds ONE dedicated connection that LISTENs
 * on the channels its subscribers use; whoever commits a `pg_notify(channel, payload)` (the outbox dispatcher in
 * any process) reaches the subscribers of every process sharing the database. A broken connection is replaced
 * with back-off; `onReconnect` handlers run after that so subscribers can catch up on what they may have missed.
 */
export class Realtime {
  private client: pg.Client | null = null;
  private readonly events = new EventEmitter();
  private readonly channels = new Set<string>();
  private stopped = true;
  private attempt = 0;
  private everConnected = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private connecting: Promise<void> | null = null;

  constructor(
    private readonly connectionString: string,
    private readonly log: RealtimeLogger = () => {},
  ) {
    // Every open subscription adds a listener; there is no meaningful cap.
    this.events.setMaxListeners(0);
  }

  /** Connects (or keeps retrying in the background when the database is unreachable). */
  async start() {
    if (!this.stopped) return;
    this.stopped = false;
    await this.connect();
  }

  async stop() {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    await this.connecting?.catch(() => {});
    await this.teardown();
    this.events.removeAllListeners();
  }

  isConnected() {
    return this.client !== null;
  }

  /** Calls `handler` with the payload of every NOTIFY on the channel; returns the unsubscribe function. */
  on(channel: string, handler: (payload: string) => void): () => void {
    this.ensureChannel(channel);
    this.events.on(`n:${channel}`, handler);
    return () => this.events.off(`n:${channel}`, handler);
  }

  /** Runs after the LISTEN connection was re-established: notifications sent meanwhile were not received. */
  onReconnect(handler: () => void): () => void {
    this.events.on('reconnect', handler);
    return () => this.events.off('reconnect', handler);
  }

  /**
   * Resolves once this process LISTENs on the channel, so a reader that subscribed with `on` and then reads where its
   * stream starts cannot miss a notification committed in between. When the connection is down it resolves at once:
   * `onReconnect` handlers catch up after it is back.
   */
  async listeningOn(channel: string): Promise<void> {
    await this.listens.get(channel);
  }

  private readonly listens = new Map<string, Promise<void>>();

  private ensureChannel(channel: string) {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`Invalid channel name ${channel}`);
    if (this.channels.has(channel)) return;
    this.channels.add(channel);
    const client = this.client;
    // A failure here breaks the connection; the reconnect LISTENs on every channel again.
    if (client) {
      this.listens.set(
        channel,
        client.query(`listen ${channel}`).then(
          () => undefined,
          (error: unknown) => this.fail(client, error),
        ),
      );
    }
  }

  private connect(): Promise<void> {
    this.connecting ??= this.openConnection().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async openConnection() {
    const client = new pg.Client({ connectionString: this.connectionString, keepAlive: true, application_name: REALTIME_APPLICATION_NAME });
    client.on('error', (error) => this.fail(client, error));
    client.on('end', () => this.fail(client, new Error('connection ended')));
    client.on('notification', (message) => {
      this.events.emit(`n:${message.channel}`, message.payload ?? '');
    });
    try {
      await client.connect();
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      this.log('realtime: cannot connect the LISTEN client; retrying', error);
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    // Channels added from now on LISTEN through ensureChannel; a repeated LISTEN is a no-op for PostgreSQL.
    try {
      for (const channel of [...this.channels]) await client.query(`listen ${channel}`);
    } catch (error) {
      this.fail(client, error);
      return;
    }
    this.attempt = 0;
    // A silently dropped TCP connection raises no error; a periodic round trip finds it.
    this.heartbeatTimer = setInterval(() => {
      client.query('select 1').catch((error: unknown) => this.fail(client, error));
    }, HEARTBEAT_MS);
    this.heartbeatTimer.unref();
    if (this.everConnected) this.events.emit('reconnect');
    this.everConnected = true;
  }

  private fail(client: pg.Client, error: unknown) {
    if (this.client !== client) return;
    this.log('realtime: LISTEN connection lost; reconnecting', error);
    void this.teardown().then(() => this.scheduleReconnect());
  }

  private async teardown() {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
    const client = this.client;
    this.client = null;
    if (!client) return;
    client.removeAllListeners('end');
    // Errors on a connection being dropped are expected; keep one listener so they are not unhandled.
    client.removeAllListeners('error');
    client.on('error', () => {});
    await client.end().catch(() => {});
  }

  private scheduleReconnect() {
    if (this.stopped || this.reconnectTimer) return;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** this.attempt++);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }
}
