import { createTRPCClient, createWSClient, type TRPCClientError, wsLink } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { BuiltApp } from '../../src/app.js';
import { WEBSOCKET_LIMITS } from '../../src/http/websocket-guard.js';
import type { AppRouter } from '../../src/routers/index.js';
import { newAdmin, newUser } from '../factories/index.js';
import { bearer, newIdentity, socialLogin } from '../auth/login.js';
import { createSecondInstance, createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * Sessions (refresh-token families, `sid` in every access token) end one by one or all at once, and an ending
 * reaches what is already open: access tokens at their next request, WebSockets at once, in every process (B is a
 * second API process on the same database; revocations are made through A).
 */
let a: TestApp;
let b: BuiltApp;
let aPort: number;
let bPort: number;
const closers: (() => unknown)[] = [];

const portOf = (app: TestApp['app']) => {
  const address = app.server.address();
  return typeof address === 'object' && address ? address.port : 0;
};

beforeAll(async () => {
  a = await createTestApp();
  b = await createSecondInstance(a);
  await a.app.listen({ port: 0, host: '127.0.0.1' });
  await b.app.listen({ port: 0, host: '127.0.0.1' });
  aPort = portOf(a.app);
  bPort = portOf(b.app);
});
afterAll(async () => {
  for (const close of closers) await close();
  await b?.close();
  await a?.close();
});

const post = (url: string, payload?: Record<string, unknown>, headers: Record<string, string> = {}) =>
  a.app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) });
const me = async (token: string) => {
  const res = await a.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) });
  return { status: res.statusCode, detail: (res.json() as { detail?: string }).detail };
};

/** A tRPC client over one WebSocket to `port`; `closes` receives each close code the server sent. */
function connect(port: number, token: string | null) {
  const closes: (number | undefined)[] = [];
  let onClose = () => {};
  const ws = createWSClient({
    url: `ws://127.0.0.1:${port}/trpc`,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: token ? { token } : {},
    retryDelayMs: () => 60_000,
    onClose: (cause) => {
      closes.push(cause?.code);
      onClose();
    },
  });
  closers.push(() => ws.close());
  const closed = () => (closes.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => (onClose = resolve)));
  return { trpc: createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] }), closes, closed };
}

/** A raw socket: resolves with how the server ended it (close code) and the messages it sent before. */
function rawSocket(port: number, opts: { connectionParams?: boolean } = {}) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/trpc${opts.connectionParams ? '?connectionParams=1' : ''}`);
  closers.push(() => socket.terminate());
  const messages: string[] = [];
  socket.on('message', (data) => messages.push(String(data)));
  const ended = new Promise<{ code: number; messages: string[]; status?: number }>((resolve) => {
    socket.on('close', (code) => resolve({ code, messages }));
    socket.on('unexpected-response', (_req, res) => resolve({ code: 0, messages, status: res.statusCode }));
    socket.on('error', () => undefined);
  });
  const opened = new Promise<void>((resolve) => socket.on('open', () => resolve()));
  return { socket, ended, opened };
}

const codeOf = async (call: Promise<unknown>) =>
  call.then(
    () => 'OK',
    (error: TRPCClientError<AppRouter>) => error.data?.code ?? 'UNKNOWN',
  );

describe('access tokens belong to a session that can end (finding 7)', () => {
  it('logout ends that session’s access tokens too; the other session goes on', async () => {
    const identity = newIdentity();
    const first = (await socialLogin(a, identity)).json();
    const second = (await socialLogin(a, identity)).json();
    expect((await me(first.token)).status).toBe(200);
    expect((await post('/api/v1/auth/logout', { refreshToken: first.refreshToken })).statusCode).toBe(204);
    expect(await me(first.token)).toEqual({ status: 401, detail: 'The session was signed out.' });
    expect((await me(second.token)).status).toBe(200);
  });

  it('a refreshed token keeps the session and the time of its login', async () => {
    const login = (await socialLogin(a, newIdentity())).json();
    const refreshed = (await post('/api/v1/auth/refresh', { refreshToken: login.refreshToken })).json();
    const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    expect(claims(refreshed.token).sid).toBe(claims(login.token).sid);
    expect(claims(refreshed.token).auth_time).toBe(claims(login.token).auth_time);
  });

  it('reuse of a consumed refresh token ends the session, access tokens included', async () => {
    const login = (await socialLogin(a, newIdentity())).json();
    const next = (await post('/api/v1/auth/refresh', { refreshToken: login.refreshToken })).json();
    expect((await me(next.token)).status).toBe(200);
    expect((await post('/api/v1/auth/refresh', { refreshToken: login.refreshToken })).statusCode).toBe(401);
    expect(await me(next.token)).toEqual({ status: 401, detail: 'The session was signed out.' });
  });
});

describe('an ending reaches open WebSockets at once, in every process (finding 3)', () => {
  it('sign-out everywhere on A closes the user’s sockets on B', async () => {
    const login = (await socialLogin(a, newIdentity())).json();
    const socket = connect(bPort, login.token);
    expect(await codeOf(socket.trpc.interests.list.query())).toBe('OK');
    expect(b.deps.websockets.openFor(login.user.id)).toBe(1);
    expect((await post('/api/v1/auth/sign-out-everywhere', undefined, bearer(login.token))).statusCode).toBe(204);
    await socket.closed();
    expect(socket.closes[0]).toBe(4401);
  });

  it('logout of one session closes that session’s sockets only', async () => {
    const identity = newIdentity();
    const first = (await socialLogin(a, identity)).json();
    const second = (await socialLogin(a, identity)).json();
    const ofFirst = connect(bPort, first.token);
    const ofSecond = connect(bPort, second.token);
    expect(await codeOf(ofFirst.trpc.interests.list.query())).toBe('OK');
    expect(await codeOf(ofSecond.trpc.interests.list.query())).toBe('OK');
    expect((await post('/api/v1/auth/logout', { refreshToken: first.refreshToken })).statusCode).toBe(204);
    await ofFirst.closed();
    expect(ofFirst.closes).toEqual([4401]);
    expect(await codeOf(ofSecond.trpc.interests.list.query())).toBe('OK');
    expect(ofSecond.closes).toEqual([]);
  });

  it('a permission revoked on A closes the holder’s sockets on B', async () => {
    const admin = await newAdmin(a);
    const other = await newAdmin(a);
    const socket = connect(bPort, admin.token);
    expect(await codeOf(socket.trpc.systemConfig.list.query())).toBe('OK');
    const revoked = await a.app.inject({ method: 'DELETE', url: `/api/v1/admin/users/${admin.id}/permissions/SYSTEM_ADMIN`, headers: other.headers });
    expect(revoked.statusCode).toBe(204);
    await socket.closed();
    expect(socket.closes).toEqual([4401]);
  });
});

describe('account deletion reaches open WebSockets too (mechanism 4)', () => {
  it('deleting the account on A closes its sockets on B', async () => {
    const login = (await socialLogin(a, newIdentity())).json();
    const socket = connect(bPort, login.token);
    expect(await codeOf(socket.trpc.interests.list.query())).toBe('OK');
    expect((await a.app.inject({ method: 'DELETE', url: '/api/v1/users/me', headers: bearer(login.token) })).statusCode).toBe(204);
    await socket.closed();
    expect(socket.closes).toEqual([4401]);
  });
});

describe('only authenticated WebSockets are kept, in bounded numbers (finding 5)', () => {
  it('a socket without a valid token gets a 401 for each call and is closed at the authentication timeout', async () => {
    const anonymous = rawSocket(aPort, { connectionParams: true });
    await anonymous.opened;
    anonymous.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: 'not-a-token' } }));
    anonymous.socket.send(JSON.stringify({ id: 1, method: 'subscription', params: { path: 'notifications.onNew', input: undefined } }));
    const { code, messages } = await anonymous.ended;
    expect(JSON.parse(messages[0]!)).toMatchObject({ id: 1, error: { data: { code: 'UNAUTHORIZED' } } });
    expect(code).not.toBe(1000);
  });

  it('a socket that never sends its connection params is closed after the authentication timeout', async () => {
    const silent = rawSocket(aPort, { connectionParams: true });
    await silent.opened;
    const started = Date.now();
    const { code } = await silent.ended;
    expect(code).not.toBe(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(WEBSOCKET_LIMITS.authTimeoutMs - 500);
  });

  it(`a user holds at most ${WEBSOCKET_LIMITS.perUser} sockets`, async () => {
    const user = await newUser(a);
    const open = [];
    for (let i = 0; i < WEBSOCKET_LIMITS.perUser; i++) {
      const socket = connect(aPort, user.token);
      expect(await codeOf(socket.trpc.interests.list.query())).toBe('OK');
      open.push(socket);
    }
    const extra = rawSocket(aPort, { connectionParams: true });
    await extra.opened;
    extra.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: user.token } }));
    const { messages } = await extra.ended;
    expect(JSON.parse(messages[0]!)).toMatchObject({ id: null, error: { data: { problemCode: 'TOO_MANY_CONNECTIONS' } } });
  });

  it(`one address holds at most ${WEBSOCKET_LIMITS.perAddress} sockets, authenticated or not`, async () => {
    const already = b.deps.websockets.openFrom('127.0.0.1');
    const sockets = Array.from({ length: WEBSOCKET_LIMITS.perAddress - already }, () => rawSocket(bPort, { connectionParams: true }));
    await Promise.all(sockets.map((s) => s.opened));
    const extra = rawSocket(bPort, { connectionParams: true });
    expect((await extra.ended).status).toBe(429);
    for (const s of sockets) s.socket.terminate();
  });
});
