import type { EntityManager } from '@mikro-orm/postgresql';
import { createTRPCClient, createWSClient, wsLink, type TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { BuiltApp } from '../../src/app.js';
import { newId } from '../../src/platform/ids.js';
import { REALTIME_APPLICATION_NAME } from '../../src/realtime/realtime.js';
import type { AppRouter } from '../../src/routers/index.js';
import { enqueueNotification } from '../../src/routers/notifications/outbox.js';
import { newUser, type TestUser } from '../factories/index.js';
import { createSecondInstance, createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * Two API processes on one database: A runs the job workers (it dispatches), B runs none. Clients connect to B,
 * so whatever they receive crossed from A's dispatcher through PostgreSQL LISTEN/NOTIFY.
 */
let a: TestApp;
let b: BuiltApp;
let bPort: number;
const clients: { close(): Promise<void> | void }[] = [];

beforeAll(async () => {
  a = await createTestApp();
  b = await createSecondInstance(a);
  await a.app.listen({ port: 0, host: '127.0.0.1' });
  await b.app.listen({ port: 0, host: '127.0.0.1' });
  const address = b.app.server.address();
  bPort = typeof address === 'object' && address ? address.port : 0;
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
  title: string;
  type: string;
  data: Record<string, unknown>;
  readAtUtc: string | null;
}

/** Subscribes to notifications.onNew; resolves once the server has started the subscription. */
async function subscribe(user: TestUser, input?: { lastEventId?: string | null }) {
  const received: Received[] = [];
  const errors: unknown[] = [];
  const trpc = connect(user.token);
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const sub = trpc.notifications.onNew.subscribe(input, {
    onStarted: () => started(),
    onData: (envelope) => received.push(envelope.data as Received),
    onError: (error) => errors.push(error),
  });
  await ready;
  return { received, errors, unsubscribe: () => sub.unsubscribe() };
}

/** Enqueues through instance A's ORM, as a service of A would in its transaction. */
async function notifyFromA(recipients: TestUser[], title: string) {
  const em = a.deps.orm.em.fork() as EntityManager;
  const postId = newId();
  await em.transactional(async (tx) => {
    enqueueNotification(tx, {
      type: 'POST_CREATED',
      recipientUserIds: recipients.map((r) => r.id),
      title,
      body: `${title} body`,
      data: { postId },
      sourceKey: `post:${postId}:created`,
    });
  });
}

describe('notifications.onNew over the tRPC WebSocket', () => {
  it('delivers a notification dispatched by instance A to a client connected to instance B, only to its owner', async () => {
    const [alice, bob] = [await newUser(a), await newUser(a)];
    const aliceSub = await subscribe(alice);
    const bobSub = await subscribe(bob);

    await notifyFromA([alice], 'For Alice');
    await expect.poll(() => aliceSub.received.map((n) => n.title), { timeout: 15_000 }).toEqual(['For Alice']);
    expect(aliceSub.received[0]).toMatchObject({ type: 'POST_CREATED', readAtUtc: null });
    expect(aliceSub.received[0]!.data).toHaveProperty('postId');

    await notifyFromA([bob, alice], 'For both');
    await expect.poll(() => bobSub.received.map((n) => n.title), { timeout: 15_000 }).toEqual(['For both']);
    await expect.poll(() => aliceSub.received.map((n) => n.title), { timeout: 15_000 }).toEqual(['For Alice', 'For both']);
    // What arrived is what is stored for that user.
    const stored = await a.sql<{ id: string }>('select id from notification where user_id = $1 order by created_at_utc', [alice.id]);
    expect(aliceSub.received.map((n) => n.id)).toEqual(stored.map((s) => s.id));
    expect(aliceSub.errors).toEqual([]);
    aliceSub.unsubscribe();
    bobSub.unsubscribe();
  });

  it('replays what came after lastEventId when a client resumes', async () => {
    const carol = await newUser(a);
    const first = await subscribe(carol);
    await notifyFromA([carol], 'One');
    await expect.poll(() => first.received.length, { timeout: 15_000 }).toBe(1);
    first.unsubscribe();
    await notifyFromA([carol], 'Two');
    await notifyFromA([carol], 'Three');
    await expect.poll(async () => (await a.sql('select 1 from notification where user_id = $1', [carol.id])).length, { timeout: 15_000 }).toBe(3);

    const resumed = await subscribe(carol, { lastEventId: first.received[0]!.id });
    await expect.poll(() => resumed.received.map((n) => n.title), { timeout: 15_000 }).toEqual(['Two', 'Three']);
    resumed.unsubscribe();
  });

  it('keeps delivering after the LISTEN connections are cut (reconnect)', async () => {
    const dave = await newUser(a);
    const sub = await subscribe(dave);
    // Both instances' LISTEN connections (this database only: other test files share the server).
    const killed = await a.sql<{ ok: boolean }>(
      'select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = $1 and datname = current_database()',
      [REALTIME_APPLICATION_NAME],
    );
    expect(killed.length).toBeGreaterThanOrEqual(2);
    await notifyFromA([dave], 'After the cut');
    await expect.poll(() => sub.received.map((n) => n.title), { timeout: 20_000 }).toEqual(['After the cut']);
    await expect.poll(() => b.deps.realtime.isConnected(), { timeout: 10_000 }).toBe(true);
    await notifyFromA([dave], 'After the reconnect');
    await expect.poll(() => sub.received.map((n) => n.title), { timeout: 15_000 }).toEqual(['After the cut', 'After the reconnect']);
    sub.unsubscribe();
  });

  it('refuses a connection without a valid token (UNAUTHORIZED)', async () => {
    const trpc = connect(null);
    const error = await new Promise<TRPCClientError<AppRouter>>((resolve) => {
      trpc.notifications.onNew.subscribe(undefined, { onError: (e) => resolve(e as TRPCClientError<AppRouter>), onData: () => {} });
    });
    expect(error.data?.code).toBe('UNAUTHORIZED');
  });
});
