import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, ROOT, type ServerProcess, spawnServer, until, waitReady } from './server-process.js';

/**
 * SIGTERM under load (point 4 of the production-readiness issue): requests in flight when the signal arrives are
 * completed (no 5xx, no reset), new connections are refused, and the process exits 0 within the drain bound.
 *
 * The requests are made slow by their client: each sends its headers and half of its body, the server has begun
 * it (Fastify logged "incoming request"), then SIGTERM, then the rest of the bodies.
 */

const IN_FLIGHT = 50;
/** src/server.ts DRAIN_TIMEOUT_MS (not imported: importing the entry point would start a server). */
const DRAIN_TIMEOUT_MS = 10_000;
const body = (who: string) => JSON.stringify({ authProvider: 'demo', externalId: who, displayName: `Demo ${who}` });

let home: string | undefined;
let server: ServerProcess | undefined;
afterAll(async () => {
  await server?.kill();
  if (home) rmSync(home, { recursive: true, force: true });
});

interface Exchange {
  socket: Socket;
  rest: string;
  response: Promise<string>;
}

/** Opens a connection, sends the headers and the first half of a login's body; `response` is all it receives. */
function begin(port: number, who: string): Promise<Exchange> {
  const payload = body(who);
  const head = `POST /api/v1/auth/social HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n`;
  const half = Math.floor(payload.length / 2);
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head + payload.slice(0, half));
      done({ socket, rest: payload.slice(half), response });
    });
    let received = '';
    const response = new Promise<string>((answered, broken) => {
      socket.on('data', (chunk) => {
        received += chunk.toString('utf8');
        // One response per connection here: complete once its body (Content-Length) is in.
        const [headers, ...rest] = received.split('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(headers ?? '')?.[1];
        if (length !== undefined && Buffer.byteLength(rest.join('\r\n\r\n')) >= Number(length)) {
          socket.end();
          answered(received);
        }
      });
      socket.on('error', broken);
      socket.on('close', () => broken(new Error(`connection closed before a full response: ${JSON.stringify(received.slice(0, 200))}`)));
    });
    response.catch(() => {});
    socket.once('error', fail);
  });
}

/** Whether a new TCP connection to the port is refused. */
const refused = (port: number) =>
  new Promise<boolean>((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
  });

const startedRequests = (stdout: string) =>
  stdout.split('\n').filter((line) => line.includes('"incoming request"') && line.includes('/api/v1/auth/social')).length;

describe('SIGTERM under load', () => {
  it(`completes the ${IN_FLIGHT} requests in flight, refuses new connections and exits 0`, async () => {
    home = mkdtempSync(join(tmpdir(), 'territory-drain-'));
    // Reachable by the postgres user when run as root (staging has its own test: start-anywhere.test.ts).
    chmodSync(home, 0o755);
    const port = await freePort();
    server = spawnServer(ROOT, {
      DATA_DIR: join(home, 'data'),
      PORT: String(port),
      EMBEDDED_PG_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      RateLimiting__Auth__PermitLimit: '10000',
      RateLimiting__PermitLimit: '10000',
    });
    const running = server;
    await waitReady(running, port);

    const who = ['admin', 'resident', 'visitor'];
    const exchanges = await Promise.all(Array.from({ length: IN_FLIGHT }, (_, i) => begin(port, who[i % who.length]!)));
    await until(`the server to have begun all ${IN_FLIGHT} requests`, async () => startedRequests(running.stdout()) >= IN_FLIGHT, running, 30_000);

    running.child.kill('SIGTERM');
    const signalledAt = Date.now();
    await until('the drain to begin', async () => running.stdout().includes('SIGTERM: draining'), running, 10_000);
    // New connections are refused once the listener is closed, while the requests above are still open.
    await until('new connections to be refused', () => refused(port), running, 10_000);

    for (const exchange of exchanges) exchange.socket.write(exchange.rest);
    const responses = await Promise.all(exchanges.map((e) => e.response));
    const statuses = responses.map((r) => Number(/^HTTP\/1\.1 (\d{3})/.exec(r)?.[1]));
    expect(statuses.filter((s) => !(s >= 200 && s < 500))).toEqual([]);
    expect(statuses.filter((s) => s === 200 || s === 201)).toHaveLength(IN_FLIGHT);

    const exit = await running.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    // Within the drain bound, the job workers' and the database's stop included.
    expect(Date.now() - signalledAt).toBeLessThan(DRAIN_TIMEOUT_MS);
    expect(await refused(port)).toBe(true);
  });
});
