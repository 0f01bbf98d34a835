/**
 * Admission and lifetime of the /trpc WebSockets. An upgrade is counted against its client address from the moment
 * it arrives (the address Fastify resolved, trusted proxies included); it must authenticate within AUTH_TIMEOUT_MS
 * (the token of its connection params or upgrade header, checked when tRPC builds the connection's context) or it
 * is closed (meanwhile its calls answer 401); an authenticated socket counts against its user. A revocation
 * announced for a user (sign-out, logout, permission removal, account deletion: `announceCallerChange`) closes their
 * sockets in every process.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { CallerChange } from '../policy/caller.js';
import { AppError } from '../platform/problems.js';
import type { AuthUser } from '../platform/service-context.js';

export const WEBSOCKET_LIMITS = {
  /** Open sockets per client address, authenticated or not (a NAT may hide several people behind one). */
  perAddress: 50,
  /** Open sockets per user: a few devices and tabs. */
  perUser: 10,
  /** A client sends its connection params right after the upgrade; one that does not is not a client. */
  authTimeoutMs: 5000,
};

/** Close codes a client may show or log (4000-4999 are the application's own). */
export const SESSION_ENDED_CLOSE_CODE = 4401;
export const AUTH_TIMEOUT_CLOSE_CODE = 4408;

interface Closable {
  close(code?: number, reason?: string): void;
  once(event: 'close', listener: () => void): unknown;
}

interface Upgrade {
  address: string;
  timer: NodeJS.Timeout;
}

interface OpenSocket {
  sessionId: string | null;
  socket: Closable;
}

export class WebSocketGuard {
  private readonly upgrades = new WeakMap<IncomingMessage, Upgrade>();
  private readonly perAddress = new Map<string, number>();
  private readonly byUser = new Map<string, Set<OpenSocket>>();

  constructor(readonly limits = WEBSOCKET_LIMITS) {}

  /** Counts every upgrade request to `path` against its address and starts its authentication clock. */
  register(app: FastifyInstance, path: string) {
    app.addHook('onRequest', (request, _reply, done) => {
      if (!request.ws || request.url.split('?')[0] !== path) return done();
      const address = request.ip;
      const open = this.perAddress.get(address) ?? 0;
      if (open >= this.limits.perAddress) {
        return done(
          new AppError('TOO_MANY_REQUESTS', 'TOO_MANY_CONNECTIONS', `At most ${this.limits.perAddress} WebSockets may be open from one address.`, {
            headers: { 'Retry-After': '60' },
          }),
        );
      }
      this.perAddress.set(address, open + 1);
      const socket = request.raw.socket;
      const timer = setTimeout(() => socket.destroy(), this.limits.authTimeoutMs);
      timer.unref();
      this.upgrades.set(request.raw, { address, timer });
      socket.once('close', () => {
        clearTimeout(timer);
        const left = (this.perAddress.get(address) ?? 1) - 1;
        if (left > 0) this.perAddress.set(address, left);
        else this.perAddress.delete(address);
      });
      done();
    });
  }

  /**
   * Admits the connection of `req` for its authenticated caller, or throws 429 past the per-user limit (tRPC answers
   * the error and closes the socket). Without a valid token nothing is admitted: each call on the socket answers
   * its own 401 (a client sees the same error as over HTTP), and the authentication timeout closes the socket.
   */
  admit(req: IncomingMessage, socket: Closable, user: AuthUser | null, sessionId: string | null) {
    if (!user) return;
    const sockets = this.byUser.get(user.id) ?? new Set<OpenSocket>();
    if (sockets.size >= this.limits.perUser) {
      throw new AppError('TOO_MANY_REQUESTS', 'TOO_MANY_CONNECTIONS', `At most ${this.limits.perUser} WebSockets may be open per user.`);
    }
    const upgrade = this.upgrades.get(req);
    if (upgrade) clearTimeout(upgrade.timer);
    const entry: OpenSocket = { sessionId, socket };
    sockets.add(entry);
    this.byUser.set(user.id, sockets);
    socket.once('close', () => {
      sockets.delete(entry);
      if (sockets.size === 0 && this.byUser.get(user.id) === sockets) this.byUser.delete(user.id);
    });
  }

  /** Closes the sockets a revocation ends: the user's, or only those of one session. */
  close(change: CallerChange) {
    for (const entry of this.byUser.get(change.userId) ?? []) {
      if (!change.sessionId || entry.sessionId === change.sessionId) entry.socket.close(SESSION_ENDED_CLOSE_CODE, 'session ended');
    }
  }

  /** Open authenticated sockets of a user (operators, tests). */
  openFor(userId: string) {
    return this.byUser.get(userId)?.size ?? 0;
  }

  /** Open sockets from a client address, authenticated or not. */
  openFrom(address: string) {
    return this.perAddress.get(address) ?? 0;
  }
}
