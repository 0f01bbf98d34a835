import { createTRPCClient, createWSClient, wsLink } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { LIVE_STREAM_LIMITS, SLOW_CONSUMER_CLOSE_CODE, SLOW_CONSUMER_CLOSE_REASON } from '../../src/realtime/backpressure.js';
import type { AppRouter } from '../../src/routers/index.js';
import { newTerritory, newVisitor, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { CHAT_FLAGS, chatApi, verifiedResident } from './helpers.js';

/**
 * A slow subscriber (one whose socket stops reading) next to a fast one on the same conversation: the fast one gets
 * every message while the slow one is stuck; the slow one's queue on the server stays bounded, its connection is
 * closed with the slow-consumer code, and the SDK's WebSocket link reconnects and resumes from its last event id, so
 * in the end it has every message once, in order.
 */
let t: TestApp;
let port: number;
const clients: { close(): Promise<void> | void }[] = [];

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await t?.close();
});

interface Received {
  id: string;
  text: string;
}

/** A tRPC WebSocket client whose sockets the test can reach (to stop one reading), with the close events it saw. */
function connect(token: string) {
  const sockets: WebSocket[] = [];
  class TrackedWebSocket extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      sockets.push(this);
    }
  }
  const closes: { code?: number; reason?: string }[] = [];
  const ws = createWSClient({
    url: `ws://127.0.0.1:${port}/trpc`,
    WebSocket: TrackedWebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: { token },
    retryDelayMs: () => 50,
    onClose: (cause) => closes.push({ code: cause?.code, reason: (cause as { reason?: string } | undefined)?.reason }),
  });
  clients.push(ws);
  return { trpc: createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] }), sockets, closes };
}

async function subscribe(user: TestUser, conversationId: string) {
  const client = connect(user.token);
  const received: Received[] = [];
  const errors: unknown[] = [];
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const sub = client.trpc.chat.onMessage.subscribe(
    { conversationId },
    { onStarted: () => started(), onData: (envelope) => received.push(envelope.data as Received), onError: (error) => errors.push(error) },
  );
  await ready;
  return { ...client, received, errors, unsubscribe: () => sub.unsubscribe() };
}

/** The server's end of a client socket (same TCP connection), with a count of what the server handed to `send`. */
function serverEndOf(client: WebSocket) {
  const localPort = (client as unknown as { _socket: { localPort: number } })._socket.localPort;
  const server = [...t.app.websocketServer.clients].find((s) => (s as unknown as { _socket: { remotePort: number } })._socket.remotePort === localPort);
  if (!server) throw new Error('no server socket for the client');
  const counted = { sends: 0 };
  const send = server.send.bind(server);
  server.send = ((...args: Parameters<typeof send>) => {
    counted.sends += 1;
    return send(...args);
  }) as typeof server.send;
  return { socket: server, counted };
}

const TEXT_LENGTH = 4000;

/** `count` long messages committed straight into the conversation (as a busy channel would have them). */
async function insertMessages(conversationId: string, sender: TestUser, count: number) {
  await t.sql(
    `with c as (update chat_conversation set last_seq = last_seq + $3, last_message_at_utc = now() where id = $1 returning last_seq)
     insert into chat_message (id, created_at_utc, conversation_id, seq, sender_user_id, text, media_id)
     select gen_random_uuid(), now(), $1, c.last_seq - $3 + g, $2, repeat('x', ${TEXT_LENGTH}), null from c, generate_series(1, $3) g`,
    [conversationId, sender.id, count],
  );
}

const storedIds = async (conversationId: string) =>
  (await t.sql<{ id: string }>('select id from chat_message where conversation_id = $1 order by seq', [conversationId])).map((r) => r.id);

describe('a slow subscriber', () => {
  it('cannot stall the others: its queue is bounded, it is dropped with a reason, and it resumes without a gap', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const writer = await verifiedResident(t, territory);
    const api = chatApi(t);
    const channel = await api.channelId(territory.id, writer, 'TERRITORY_PUBLIC');

    const slow = await subscribe(await newVisitor(t, territory), channel);
    const fast = await subscribe(await newVisitor(t, territory), channel);
    const slowClient = slow.sockets[0]!;
    const slowServer = serverEndOf(slowClient);
    // The slow client stops reading its socket: what the server sends it piles up in the kernel, then in its queue.
    slowClient.pause();

    let total = 0;
    for (let round = 0; round < 15 && slowServer.socket.readyState === WebSocket.OPEN; round++) {
      await insertMessages(channel, writer, 400);
      // A message sent through the API announces the new messages to the live streams.
      expect((await api.send(channel, writer, { text: `round ${round}` })).statusCode).toBe(201);
      total = (await storedIds(channel)).length;
      // The fast subscriber has everything while the slow one reads nothing.
      await expect.poll(() => fast.received.length, { timeout: 30_000 }).toBe(total);
      expect(slow.received).toEqual([]);
      // The slow stream ends its round too: dropped, or everything handed to its socket.
      await expect.poll(() => slowServer.socket.readyState !== WebSocket.OPEN || slowServer.counted.sends === total, { timeout: 30_000 }).toBe(true);
    }
    expect(slowServer.socket.readyState).toBe(WebSocket.CLOSING);
    // Bounded: past the limit by at most the one message that crossed it (and the close frame).
    expect(slowServer.socket.bufferedAmount).toBeLessThanOrEqual(LIVE_STREAM_LIMITS.maxBufferedBytes + 2 * (TEXT_LENGTH + 500));
    expect(slowServer.counted.sends).toBeLessThan(total);
    expect(fast.received.map((m) => m.id)).toEqual(await storedIds(channel));

    // The slow client reads again: what was queued, then the close with its reason; the link reconnects and
    // subscribes again after the last message it received.
    slowClient.resume();
    await expect.poll(() => slow.closes.some((c) => c.code === SLOW_CONSUMER_CLOSE_CODE), { timeout: 30_000 }).toBe(true);
    expect(slow.closes.find((c) => c.code === SLOW_CONSUMER_CLOSE_CODE)?.reason).toBe(SLOW_CONSUMER_CLOSE_REASON);
    await expect.poll(() => slow.received.length, { timeout: 30_000 }).toBe(total);
    expect(slow.received.map((m) => m.id)).toEqual(await storedIds(channel));
    expect(slow.sockets.length).toBeGreaterThanOrEqual(2);

    // Both go on receiving live.
    await api.send(channel, writer, { text: 'after' });
    await expect.poll(() => [fast.received.at(-1)?.text, slow.received.at(-1)?.text], { timeout: 15_000 }).toEqual(['after', 'after']);
    expect([...slow.errors, ...fast.errors]).toEqual([]);
    slow.unsubscribe();
    fast.unsubscribe();
  });
});
