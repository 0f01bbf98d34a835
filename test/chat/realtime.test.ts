import { createTRPCClient, createWSClient, type TRPCClientError, wsLink } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { BuiltApp } from '../../src/app.js';
import { REALTIME_APPLICATION_NAME } from '../../src/realtime/realtime.js';
import type { AppRouter } from '../../src/routers/index.js';
import { newTerritory, newUser, newVisitor, type TestUser } from '../factories/index.js';
import { createSecondInstance, createTestApp, type TestApp } from '../setup/test-app.js';
import { CHAT_FLAGS, chatApi, verifiedResident } from './helpers.js';

/**
 * Two API processes on one database. Messages are sent through instance A's REST API; subscribers are connected
 * to instance B, so whatever they receive crossed from A to B through PostgreSQL LISTEN/NOTIFY.
 */
let a: TestApp;
let b: BuiltApp;
let bPort: number;
const clients: { close(): Promise<void> | void }[] = [];

beforeAll(async () => {
  a = await createTestApp();
  b = await createSecondInstance(a);
  await b.app.listen({ port: 0, host: '127.0.0.1' });
  const address = b.app.server.address();
  bPort = typeof address === 'object' && address ? address.port : 0;
  // B's LISTEN connection is up before anyone subscribes.
  for (let i = 0; i < 300 && !b.deps.realtime.isConnected(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await b?.close();
  await a?.close();
});

function connect(token: string | null) {
  const ws = createWSClient({
    url: `ws://127.0.0.1:${bPort}/trpc`,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: token ? { token } : {},
    retryDelayMs: () => 100,
  });
  clients.push(ws);
  return createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] });
}

interface Received {
  id: string;
  text: string;
  conversationId: string;
  senderUserId: string;
}

/** The SDK call of the issue: `client.chat.onMessage.subscribe({conversationId}, ...)`. */
async function subscribe(user: TestUser, input: { conversationId: string; lastEventId?: string | null }) {
  const received: Received[] = [];
  const errors: unknown[] = [];
  const trpc = connect(user.token);
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const sub = trpc.chat.onMessage.subscribe(input, {
    onStarted: () => started(),
    onData: (envelope) => received.push(envelope.data as Received),
    onError: (error) => errors.push(error),
  });
  await ready;
  return { received, errors, unsubscribe: () => sub.unsubscribe() };
}

async function send(conversationId: string, user: TestUser, text: string) {
  const res = await chatApi(a).send(conversationId, user, { text });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string };
}

describe('chat.onMessage over the tRPC WebSocket', () => {
  it('delivers messages sent through instance A to subscribers of instance B, in order, to that conversation only', async () => {
    const territory = await newTerritory(a, { flags: CHAT_FLAGS });
    const writer = await verifiedResident(a, territory);
    const reader = await newVisitor(a, territory);
    const api = chatApi(a);
    const publicId = await api.channelId(territory.id, writer, 'TERRITORY_PUBLIC');
    const residentsId = await api.channelId(territory.id, writer, 'TERRITORY_RESIDENTS');
    const sub = await subscribe(reader, { conversationId: publicId });
    await send(publicId, writer, 'one');
    await send(residentsId, writer, 'elsewhere');
    await send(publicId, writer, 'two');
    await expect.poll(() => sub.received.map((m) => m.text), { timeout: 15_000 }).toEqual(['one', 'two']);
    expect(sub.received[0]).toMatchObject({ conversationId: publicId, senderUserId: writer.id });
    const stored = await a.sql<{ id: string }>('select id from chat_message where conversation_id = $1 order by seq', [publicId]);
    expect(sub.received.map((m) => m.id)).toEqual(stored.map((s) => s.id));
    expect(sub.errors).toEqual([]);
    sub.unsubscribe();
  });

  it('leaves out messages of senders the reader blocked, as reading does', async () => {
    const territory = await newTerritory(a, { flags: CHAT_FLAGS });
    const [kept, blocked] = [await verifiedResident(a, territory), await verifiedResident(a, territory)];
    const reader = await newVisitor(a, territory);
    const blocking = await a.app.inject({ method: 'POST', url: `/api/v1/users/${blocked.id}/block`, headers: reader.headers });
    expect(blocking.statusCode).toBeLessThan(300);
    const channel = await chatApi(a).channelId(territory.id, kept, 'TERRITORY_PUBLIC');
    const sub = await subscribe(reader, { conversationId: channel });
    await send(channel, blocked, 'hidden');
    await send(channel, kept, 'shown');
    await expect.poll(() => sub.received.map((m) => m.text), { timeout: 15_000 }).toEqual(['shown']);
    expect(sub.errors).toEqual([]);
    sub.unsubscribe();
  });

  it('resumes after lastEventId without gaps or repeats', async () => {
    const territory = await newTerritory(a, { flags: CHAT_FLAGS });
    const [me, them] = [await verifiedResident(a, territory), await verifiedResident(a, territory)];
    const dm = (await chatApi(a).direct(me, { territoryId: territory.id, userId: them.id })).json().id as string;
    const first = await subscribe(them, { conversationId: dm });
    await send(dm, me, 'A');
    await expect.poll(() => first.received.length, { timeout: 15_000 }).toBe(1);
    first.unsubscribe();
    // Sent while the client was away.
    await send(dm, me, 'B');
    await send(dm, me, 'C');
    const resumed = await subscribe(them, { conversationId: dm, lastEventId: first.received[0]!.id });
    await expect.poll(() => resumed.received.map((m) => m.text), { timeout: 15_000 }).toEqual(['B', 'C']);
    await send(dm, me, 'D');
    await expect.poll(() => resumed.received.map((m) => m.text), { timeout: 15_000 }).toEqual(['B', 'C', 'D']);
    resumed.unsubscribe();
  });

  it('keeps delivering after the LISTEN connections are cut (what was sent meanwhile is read back)', async () => {
    const territory = await newTerritory(a, { flags: CHAT_FLAGS });
    const writer = await verifiedResident(a, territory);
    const channel = await chatApi(a).channelId(territory.id, writer, 'TERRITORY_PUBLIC');
    const sub = await subscribe(writer, { conversationId: channel });
    const killed = await a.sql('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()', [
      REALTIME_APPLICATION_NAME,
    ]);
    expect(killed.length).toBeGreaterThanOrEqual(2);
    await send(channel, writer, 'during the cut');
    await expect.poll(() => b.deps.realtime.isConnected(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => sub.received.map((m) => m.text), { timeout: 20_000 }).toEqual(['during the cut']);
    await send(channel, writer, 'after');
    await expect.poll(() => sub.received.map((m) => m.text), { timeout: 15_000 }).toEqual(['during the cut', 'after']);
    sub.unsubscribe();
  });

  it('is authorised like reading: a non-participant is refused (FORBIDDEN), no token is UNAUTHORIZED', async () => {
    const territory = await newTerritory(a, { flags: CHAT_FLAGS });
    const [me, them] = [await verifiedResident(a, territory), await verifiedResident(a, territory)];
    const dm = (await chatApi(a).direct(me, { territoryId: territory.id, userId: them.id })).json().id as string;
    const stranger = await newUser(a);
    const refused = await new Promise<TRPCClientError<AppRouter>>((resolve) => {
      connect(stranger.token).chat.onMessage.subscribe({ conversationId: dm }, { onError: (e) => resolve(e as TRPCClientError<AppRouter>), onData: () => {} });
    });
    expect(refused.data?.code).toBe('FORBIDDEN');
    const anonymous = await new Promise<TRPCClientError<AppRouter>>((resolve) => {
      connect(null).chat.onMessage.subscribe({ conversationId: dm }, { onError: (e) => resolve(e as TRPCClientError<AppRouter>), onData: () => {} });
    });
    // The server refuses the call, or closes the unauthenticated socket before the call is answered.
    expect(anonymous.data?.code === 'UNAUTHORIZED' || /connection is not open/i.test(anonymous.message), anonymous.message).toBe(true);
  });
});
