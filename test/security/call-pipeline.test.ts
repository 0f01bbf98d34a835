import { createTRPCClient, createWSClient, type TRPCClientError, wsLink } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { signUserToken } from '../../src/platform/jwt.js';
import { forgetCachedUser } from '../../src/policy/caller.js';
import type { AppRouter } from '../../src/routers/index.js';
import { newAdmin, newUser, type TestUser, testSession } from '../factories/index.js';
import { newIdentity } from '../auth/login.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * The call pipeline (src/trpc/init.ts): what the REST routes get from Fastify, every tRPC call gets too, whether it
 * came alone, in an HTTP batch or over a WebSocket. The auth bucket is at its real size (5), the others raised.
 */
let t: TestApp;
let port: number;
const sockets: { close(): Promise<void> | void }[] = [];
beforeAll(async () => {
  t = await createTestApp({ RateLimiting__Auth__PermitLimit: '5' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(async () => {
  for (const socket of sockets) await socket.close();
  await t.close();
});

type BatchResult = { result?: unknown; error?: { data?: { code?: string; problemCode?: string } } };

/** One HTTP batch of calls to `path`, from the given client address. */
async function batch(path: string, inputs: unknown[], opts: { ip: string; headers?: Record<string, string> }) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/trpc/${inputs.map(() => path).join(',')}?batch=1`,
    remoteAddress: opts.ip,
    headers: { 'content-type': 'application/json', ...opts.headers },
    payload: Object.fromEntries(inputs.map((input, i) => [String(i), input])),
  });
  return res.json() as BatchResult[];
}

function connect(token: string, onClose?: (code: number | undefined) => void) {
  const client = createWSClient({
    url: `ws://127.0.0.1:${port}/trpc`,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: { token },
    retryDelayMs: () => 100,
    onClose: (cause) => onClose?.(cause?.code),
  });
  sockets.push(client);
  return createTRPCClient<AppRouter>({ links: [wsLink({ client })] });
}

const codeOf = async (call: Promise<unknown>) =>
  call.then(
    () => 'OK',
    (error: TRPCClientError<AppRouter>) => error.data?.code ?? 'UNKNOWN',
  );

describe('rate limits apply to every call on every transport (finding 2)', () => {
  it('after the REST auth bucket is spent, /trpc/auth.social is refused too', async () => {
    const ip = '10.1.0.1';
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/social', remoteAddress: ip, payload: newIdentity() });
      expect(res.statusCode).toBe(200);
    }
    const res = await t.app.inject({
      method: 'POST',
      url: '/trpc/auth.social',
      remoteAddress: ip,
      headers: { 'content-type': 'application/json' },
      payload: newIdentity(),
    });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ error: { data: { problemCode: 'RATE_LIMIT_EXCEEDED' } } });
    // The spec's 429 carries `Retry-After: 60` on every transport, as the REST answer does.
    expect(res.headers['retry-after']).toBe('60');
  });

  it('one HTTP batch of logins counts each call: at most the bucket succeeds', async () => {
    const results = await batch(
      'auth.social',
      Array.from({ length: 8 }, () => newIdentity()),
      { ip: '10.1.0.2' },
    );
    expect(results.filter((r) => r.result).length).toBe(5);
    expect(results.filter((r) => r.error?.data?.problemCode === 'RATE_LIMIT_EXCEEDED').length).toBe(3);
  });

  it('a batch larger than the cap is refused whole', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/trpc/${Array.from({ length: 11 }, () => 'territories.list').join(',')}?batch=1`,
      remoteAddress: '10.1.0.3',
      headers: { 'content-type': 'application/json' },
      payload: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [String(i), { skip: 0, take: 1 }])),
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('concurrent calls of one batch do not share a unit of work (finding 4)', () => {
  it('transactional mutations in one batch all succeed', async () => {
    const user = await newUser(t);
    const results = await batch(
      'interests.add',
      ['surf', 'chess', 'jazz', 'hiking', 'pottery'].map((interestTag) => ({ interestTag })),
      { ip: '10.1.0.4', headers: user.headers },
    );
    expect(results.map((r) => (r.result ? 'ok' : r.error?.data?.code))).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    const mine = await t.app.inject({ method: 'GET', url: '/api/v1/users/me/interests', headers: user.headers });
    expect((mine.json() as string[]).sort()).toEqual(['chess', 'hiking', 'jazz', 'pottery', 'surf']);
  });
});

describe('a WebSocket is re-checked on every message (finding 3)', () => {
  it('an admin revoked while connected loses admin calls on the same socket', async () => {
    const admin: TestUser = await newAdmin(t);
    const otherAdmin = await newAdmin(t);
    let closed!: (code: number | undefined) => void;
    const closedWith = new Promise<number | undefined>((resolve) => (closed = resolve));
    const client = connect(admin.token, (code) => closed(code));
    expect(await codeOf(client.systemConfig.list.query())).toBe('OK');
    const revoked = await t.app.inject({ method: 'DELETE', url: `/api/v1/admin/users/${admin.id}/permissions/SYSTEM_ADMIN`, headers: otherAdmin.headers });
    expect(revoked.statusCode).toBe(204);
    // The server closes the socket at once; the client reconnects, and the same token no longer opens admin calls.
    expect(await closedWith).toBe(4401);
    expect(await codeOf(client.systemConfig.list.query())).toBe('FORBIDDEN');
    // It cannot grant itself the permission back either.
    expect(await codeOf(client.access.grantPermission.mutate({ userId: admin.id, permission: 'SYSTEM_ADMIN' }))).toBe('FORBIDDEN');
  });

  it('a deleted user is refused on the socket they opened before', async () => {
    const user = await newUser(t);
    const client = connect(user.token);
    expect(await codeOf(client.interests.list.query())).toBe('OK');
    await t.sql('update app_user set deleted_at_utc = now() where id = $1', [user.id]);
    // Another process would see it within the cache's 2 s; this one is told at once, as on a deletion here.
    forgetCachedUser(user.id);
    expect(await codeOf(client.interests.list.query())).toBe('UNAUTHORIZED');
  });
});

describe('a WebSocket holds a bounded number of subscriptions (finding 5, in part)', () => {
  /** Subscribes and resolves when the server started it, or with the error code it refused it with. */
  function open(client: ReturnType<typeof connect>) {
    return new Promise<{ outcome: string; unsubscribe: () => void }>((resolve) => {
      const sub = client.notifications.onNew.subscribe(undefined, {
        onStarted: () => resolve({ outcome: 'STARTED', unsubscribe: () => sub.unsubscribe() }),
        onError: (error) => resolve({ outcome: error.data?.problemCode ?? error.data?.code ?? 'ERROR', unsubscribe: () => sub.unsubscribe() }),
      });
    });
  }

  it('the 21st subscription on one socket is refused; closing one makes room again', async () => {
    const user = await newUser(t);
    const client = connect(user.token);
    const opened = [];
    for (let i = 0; i < 20; i++) opened.push(await open(client));
    expect(opened.map((o) => o.outcome)).toEqual(Array(20).fill('STARTED'));
    expect((await open(client)).outcome).toBe('TOO_MANY_SUBSCRIPTIONS');
    opened[0]!.unsubscribe();
    // The server releases the slot when it sees the stop; the next subscription may race it, so retry briefly.
    let outcome = '';
    for (let attempt = 0; attempt < 20 && outcome !== 'STARTED'; attempt++) outcome = (await open(client)).outcome;
    expect(outcome).toBe('STARTED');
  });
});

describe('a subscription ends when the token it was opened with expires (finding 3)', () => {
  it('the stream completes at the expiry; the client re-subscribes with a fresh token', async () => {
    const user = await newUser(t);
    // A token that expires two seconds from now (the server's configured lifetime is longer).
    const { token } = await signUserToken({ ...t.deps.config.jwt, expiresInSeconds: 2 }, testSession(user.id));
    const client = connect(token);
    const ended = await new Promise<string>((resolve) => {
      const timeout = setTimeout(() => resolve('still open after 10 s'), 10_000);
      client.notifications.onNew.subscribe(undefined, {
        onComplete: () => {
          clearTimeout(timeout);
          resolve('completed');
        },
        onError: (error) => {
          clearTimeout(timeout);
          resolve(`error ${error.data?.code}`);
        },
      });
    });
    expect(ended).toBe('completed');
  });
});
