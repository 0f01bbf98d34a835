import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchOutbox } from '../../src/routers/notifications/outbox-dispatch.job.js';
import { newId } from '../../src/platform/ids.js';
import { enqueueNotification } from '../../src/routers/notifications/outbox.js';
import { countRows, newUser, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
});
afterAll(() => t.close());

/** Delivers `count` notifications to the user through the outbox, oldest first; returns the source keys. */
async function deliver(user: TestUser, count: number) {
  const em = t.deps.orm.em.fork() as EntityManager;
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const postId = newId();
    keys.push(`post:${postId}:created`);
    enqueueNotification(em, {
      type: 'POST_CREATED',
      recipientUserIds: [user.id],
      title: `Post ${i}`,
      body: `Body ${i}`,
      data: { postId, territoryId: newId() },
      sourceKey: `post:${postId}:created`,
    });
    // One flush (and dispatch) each, so creation times are strictly ordered.
    await em.flush();
    await dispatchOutbox(t.deps.orm.em.fork() as EntityManager);
  }
  return keys;
}

interface NotificationBody {
  id: string;
  type: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  createdAtUtc: string;
  readAtUtc: string | null;
}

describe('GET /api/v1/notifications', () => {
  it('lists only my notifications, newest first, with every field', async () => {
    const [me, other] = [await newUser(t), await newUser(t)];
    await deliver(me, 3);
    await deliver(other, 1);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/notifications', headers: me.headers });
    expect(res.statusCode).toBe(200);
    const items = res.json() as NotificationBody[];
    expect(items.map((n) => n.title)).toEqual(['Post 2', 'Post 1', 'Post 0']);
    expect(Object.keys(items[0]!).sort()).toEqual(['body', 'createdAtUtc', 'data', 'id', 'readAtUtc', 'title', 'type']);
    expect(items[0]).toMatchObject({ type: 'POST_CREATED', body: 'Body 2', readAtUtc: null });
    expect(items[0]!.data).toHaveProperty('postId');
    expect(new Date(items[0]!.createdAtUtc).toISOString()).toBe(items[0]!.createdAtUtc);
  });

  it('takes 50 by default and honours skip/take', async () => {
    const me = await newUser(t);
    await deliver(me, 55);
    const all = await t.app.inject({ method: 'GET', url: '/api/v1/notifications', headers: me.headers });
    expect(all.json()).toHaveLength(50);
    const page = await t.app.inject({ method: 'GET', url: '/api/v1/notifications?skip=1&take=2', headers: me.headers });
    expect((page.json() as NotificationBody[]).map((n) => n.title)).toEqual(['Post 53', 'Post 52']);
  });

  it('is 401 without a token and 400 for take out of range', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/notifications' })).statusCode).toBe(401);
    const me = await newUser(t);
    const bad = await t.app.inject({ method: 'GET', url: '/api/v1/notifications?take=101', headers: me.headers });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'take' }] });
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/notifications?skip=-1', headers: me.headers })).statusCode).toBe(400);
  });
});

describe('GET /api/v1/notifications/paged', () => {
  it('answers the paging envelope, newest first', async () => {
    const me = await newUser(t);
    await deliver(me, 5);
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/notifications/paged?pageNumber=2&pageSize=2', headers: me.headers });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { items: NotificationBody[] };
    expect(body).toMatchObject({ pageNumber: 2, pageSize: 2, totalCount: 5, totalPages: 3, hasPreviousPage: true, hasNextPage: true });
    expect(body.items.map((n) => n.title)).toEqual(['Post 2', 'Post 1']);
  });

  it('is 401 without a token and 400 for pageSize 0 or 101', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/notifications/paged' })).statusCode).toBe(401);
    const me = await newUser(t);
    for (const query of ['pageSize=0', 'pageSize=101', 'pageNumber=0']) {
      const res = await t.app.inject({ method: 'GET', url: `/api/v1/notifications/paged?${query}`, headers: me.headers });
      expect(res.statusCode).toBe(400);
    }
  });
});

describe('POST /api/v1/notifications/{id}/read', () => {
  it('marks my notification read and answers it; repeating keeps the first read time', async () => {
    const me = await newUser(t);
    await deliver(me, 1);
    const [n] = (await t.app.inject({ method: 'GET', url: '/api/v1/notifications', headers: me.headers })).json() as NotificationBody[];
    const first = await t.app.inject({ method: 'POST', url: `/api/v1/notifications/${n!.id}/read`, headers: me.headers });
    expect(first.statusCode).toBe(200);
    const read = first.json() as NotificationBody;
    expect(read).toMatchObject({ id: n!.id, title: n!.title });
    expect(read.readAtUtc).not.toBeNull();
    const again = await t.app.inject({ method: 'POST', url: `/api/v1/notifications/${n!.id}/read`, headers: me.headers });
    expect(again.statusCode).toBe(200);
    expect((again.json() as NotificationBody).readAtUtc).toBe(read.readAtUtc);
    const listed = (await t.app.inject({ method: 'GET', url: '/api/v1/notifications', headers: me.headers })).json() as NotificationBody[];
    expect(listed[0]!.readAtUtc).toBe(read.readAtUtc);
  });

  it("is 403 for someone else's notification (owner only) and leaves it unread", async () => {
    const [owner, intruder] = [await newUser(t), await newUser(t)];
    await deliver(owner, 1);
    const [n] = (await t.app.inject({ method: 'GET', url: '/api/v1/notifications', headers: owner.headers })).json() as NotificationBody[];
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/notifications/${n!.id}/read`, headers: intruder.headers });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'FORBIDDEN', detail: 'This notification is addressed to another user.' });
    expect(await countRows(t, 'notification', 'id = $1 and read_at_utc is not null', [n!.id])).toBe(0);
  });

  it('is 404 for an unknown id, 400 for a malformed one, 401 without a token', async () => {
    const me = await newUser(t);
    const unknown = await t.app.inject({ method: 'POST', url: `/api/v1/notifications/${newId()}/read`, headers: me.headers });
    expect(unknown.statusCode).toBe(404);
    const malformed = await t.app.inject({ method: 'POST', url: '/api/v1/notifications/not-a-uuid/read', headers: me.headers });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/notifications/${newId()}/read` })).statusCode).toBe(401);
  });
});
