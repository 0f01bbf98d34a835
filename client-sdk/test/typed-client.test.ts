import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { newAdmin, newTerritory, newUser } from '../../test/factories/index.js';
import { createTestApp, type TestApp } from '../../test/setup/test-app.js';
import { createTerritoryClient, trpcWebSocketUrl, TRPCClientError } from '../src/index.js';
import { createRestClient } from '../src/rest.js';

let t: TestApp;
let baseUrl: string;

/** Counts the HTTP requests a client really sends (batching is what is asserted). */
function countingFetch() {
  const urls: string[] = [];
  const fetchImpl: typeof fetch = (input, init) => {
    urls.push(input instanceof Request ? input.url : String(input));
    return fetch(input, init);
  };
  return { urls, fetch: fetchImpl };
}

beforeAll(async () => {
  t = await createTestApp();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => t.close());

describe('typed tRPC client', () => {
  it('sends two queries made together as one batched HTTP request', async () => {
    const user = await newUser(t);
    const territory = await newTerritory(t, { name: 'Batch Town' });
    const counter = countingFetch();
    const client = createTerritoryClient({ url: baseUrl, token: user.token, fetch: counter.fetch });

    const [list, one] = await Promise.all([client.territories.list.query({ take: 100 }), client.territories.byId.query({ id: territory.id })]);

    expect(counter.urls).toHaveLength(1);
    expect(counter.urls[0]).toContain('/trpc/territories.list,territories.byId?batch=1');
    expect(list.map((x) => x.id)).toContain(territory.id);
    expect(one).toMatchObject({ id: territory.id, name: 'Batch Town', status: 'ACTIVE', description: null });
  });

  it('asks getToken for every batch and runs mutations', async () => {
    const admin = await newAdmin(t);
    let asked = 0;
    const client = createTerritoryClient({
      url: `${baseUrl}/`,
      getToken: async () => {
        asked += 1;
        return admin.token;
      },
    });
    const created = await client.territories.adminCreate.mutate({
      name: 'Centro SDK',
      description: null,
      city: 'Curitiba',
      state: 'PR',
      latitude: -25.43,
      longitude: -49.27,
    });
    expect(created).toMatchObject({ name: 'Centro SDK', status: 'ACTIVE', radiusKm: 5, tags: [] });
    const fetched = await client.territories.byId.query({ id: created.id });
    expect(fetched.id).toBe(created.id);
    expect(asked).toBe(2);
  });

  it('surfaces errors as TRPCClientError with the HTTP status and problem code', async () => {
    const territory = await newTerritory(t);
    const anonymous = createTerritoryClient({ url: baseUrl });
    const error = await anonymous.territories.byId.query({ id: territory.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<never>).data).toMatchObject({ httpStatus: 401 });

    const user = await newUser(t);
    const client = createTerritoryClient({ url: baseUrl, token: user.token });
    const missing = await client.territories.byId.query({ id: '0190a4f6-0000-7000-8000-000000000000' }).catch((e: unknown) => e);
    expect((missing as TRPCClientError<never>).data).toMatchObject({ httpStatus: 404, problemCode: 'NOT_FOUND' });
    const malformed = await client.territories.byId.query({ id: 'unknown-id' }).catch((e: unknown) => e);
    expect((malformed as TRPCClientError<never>).data).toMatchObject({ httpStatus: 400, problemCode: 'VALIDATION_FAILED' });
  });

  it('runs subscriptions over the WebSocket, authenticated by the token in the connection params', async () => {
    const user = await newUser(t);
    const client = createTerritoryClient({ url: baseUrl, token: user.token, wsIdleCloseMs: 100 });
    const id = newId();
    const announce = async () => {
      await t.sql(
        `insert into notification (id, created_at_utc, user_id, type, title, body, data, source_key)
         values ($1, now(), $2, 'POST_CREATED', 'New post', 'Someone posted', '{}', $3) on conflict do nothing`,
        [id, user.id, `sdk-test:${id}`],
      );
      await t.sql(`select pg_notify('notification_created', $1)`, [JSON.stringify({ userId: user.id, notificationId: id })]);
    };

    const received = await new Promise<{ id: string; data: { id: string; title: string } }>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const subscription = client.notifications.onNew.subscribe(undefined, {
        // The server starts listening just after it acknowledges; announcing until the item arrives avoids a race.
        onStarted: () => {
          timer = setInterval(() => void announce().catch(reject), 200);
        },
        onData: (envelope) => {
          clearInterval(timer);
          subscription.unsubscribe();
          resolve(envelope);
        },
        onError: (error) => {
          clearInterval(timer);
          reject(error);
        },
      });
    });
    expect(received.id).toBe(id);
    expect(received.data).toMatchObject({ id, title: 'New post' });
  });

  it('refuses a subscription without a token', async () => {
    const anonymous = createTerritoryClient({ url: baseUrl, wsIdleCloseMs: 100 });
    const error = await new Promise<unknown>((resolve) => {
      anonymous.notifications.onNew.subscribe(undefined, { onData: () => resolve(null), onError: resolve });
    });
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<never>).data).toMatchObject({ httpStatus: 401 });
  });

  it('derives the WebSocket address of /trpc from the server URL', () => {
    expect(trpcWebSocketUrl('http://127.0.0.1:3000')).toBe('ws://127.0.0.1:3000/trpc');
    expect(trpcWebSocketUrl('https://api.example.org/base/')).toBe('wss://api.example.org/base/trpc');
  });
});

describe('REST client', () => {
  it('calls a typed REST operation with the bearer token', async () => {
    const user = await newUser(t);
    const territory = await newTerritory(t, { name: 'Rest Ville' });
    const rest = createRestClient({ baseUrl, token: user.token });
    const { data, error, response } = await rest.GET('/api/v1/territories/{id}', { params: { path: { id: territory.id } } });
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: territory.id, name: 'Rest Ville', parentTerritoryId: null });
  });

  it('returns problem details as the typed error', async () => {
    const territory = await newTerritory(t);
    const anonymous = createRestClient({ baseUrl });
    const unauthorized = await anonymous.GET('/api/v1/territories/{id}', { params: { path: { id: territory.id } } });
    expect(unauthorized.response.status).toBe(401);
    expect(unauthorized.error).toMatchObject({ status: 401, code: expect.any(String) });

    const invalid = await anonymous.GET('/api/v1/territories', { params: { query: { take: 101 } } });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'take' }] });
  });
});
