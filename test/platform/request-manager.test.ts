import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareManager, withLazyFork } from '../../src/db/request-manager.js';
import { runHotRead } from '../../src/db/sql.js';
import { newId } from '../../src/platform/ids.js';
import { newAdmin, newResident, newTerritory, newUser } from '../factories/index.js';
import { CHAT_FLAGS, chatApi, verifiedResident } from '../chat/helpers.js';
import { newEvent, newMapEntity, newPost } from '../factories/content.js';
import { listItem, openStore } from '../marketplace/money-helpers.js';
import { clientToken, v2 } from '../journeys/helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { countForks, type Read } from '../setup/forks.js';

/**
 * A REST request's EntityManager is forked when first read (src/db/request-manager.ts): hot reads given the context
 * run on the pool without it; anything else gets its own fork, as every request did before.
 */
let t: TestApp;
let withForks: ReturnType<typeof countForks>['withForks'];
let expectReadsWithoutFork: ReturnType<typeof countForks>['expectReadsWithoutFork'];
beforeAll(async () => {
  t = await createTestApp();
  ({ withForks, expectReadsWithoutFork } = countForks(t));
});
afterAll(() => t.close());

const root = () => t.deps.orm.em as EntityManager;

describe('the lazy fork of a REST request', () => {
  it('reads of hot statements only (a territory by id, a feed page) make no fork; a write makes one', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const auth = { authorization: `Bearer ${resident.token}` };
    const byId = await withForks(() => t.app.inject({ method: 'GET', url: `/api/v1/territories/${territory.id}`, headers: auth }));
    expect(byId.forks).toBe(0);
    expect(byId.value.statusCode).toBe(200);
    expect(byId.value.json().id).toBe(territory.id);

    const feed = await withForks(() => t.app.inject({ method: 'GET', url: `/api/v1/feed/paged?territoryId=${territory.id}`, headers: auth }));
    expect(feed.forks).toBe(0);
    expect(feed.value.statusCode).toBe(200);

    const created = await withForks(() =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/feed',
        headers: { ...auth, 'content-type': 'application/json' },
        payload: { territoryId: territory.id, title: 'Lazy fork', content: 'A write gets its own unit of work.', type: 'POST', visibility: 'PUBLIC' },
      }),
    );
    expect(created.value.statusCode).toBe(201);
    expect(created.forks).toBeGreaterThanOrEqual(1);
  });

  it('a chat history page, newest or by cursor, reads hot statements only: no fork', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const writer = await verifiedResident(t, territory);
    const api = chatApi(t);
    const channel = await api.channelId(territory.id, writer, 'TERRITORY_PUBLIC');
    for (const text of ['one', 'two', 'three']) expect((await api.send(channel, writer, { text })).statusCode).toBe(201);
    const newest = await withForks(() => api.messages(channel, writer, '?limit=2'));
    expect(newest.value.statusCode).toBe(200);
    const page = newest.value.json() as { messages: { text: string }[]; nextCursor: { beforeCreatedAtUtc: string; beforeMessageId: string } };
    expect(page.messages.map((m) => m.text)).toEqual(['three', 'two']);
    expect(newest.forks).toBe(0);
    const { beforeCreatedAtUtc, beforeMessageId } = page.nextCursor;
    const older = await withForks(() =>
      api.messages(channel, writer, `?limit=2&beforeCreatedAtUtc=${encodeURIComponent(beforeCreatedAtUtc)}&beforeMessageId=${beforeMessageId}`),
    );
    expect((older.value.json() as { messages: { text: string }[] }).messages.map((m) => m.text)).toEqual(['one']);
    expect(older.forks).toBe(0);
  });

  it("a post's comments page reads hot statements only (its access row names whom the reader blocked): no fork", async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const auth = { authorization: `Bearer ${resident.token}`, 'content-type': 'application/json' };
    const posted = await t.app.inject({
      method: 'POST',
      url: '/api/v1/feed',
      headers: auth,
      payload: { territoryId: territory.id, title: 'Comments', content: 'Read without a fork.', type: 'POST', visibility: 'RESIDENTS_ONLY' },
    });
    expect(posted.statusCode).toBe(201);
    const postId = (posted.json() as { id: string }).id;
    const commented = await t.app.inject({ method: 'POST', url: `/api/v1/feed/${postId}/comments`, headers: auth, payload: { content: 'First' } });
    expect(commented.statusCode).toBe(201);
    const page = await withForks(() => t.app.inject({ method: 'GET', url: `/api/v1/feed/${postId}/comments`, headers: auth }));
    expect(page.value.statusCode).toBe(200);
    expect(page.value.json()).toMatchObject({ totalCount: 1, items: [{ content: 'First' }] });
    expect(page.forks).toBe(0);
  });

  it("the caller's notifications, listed or paged, read hot statements only: no fork", async () => {
    const user = await newUser(t);
    const ids = [newId(), newId()];
    for (const [i, id] of ids.entries()) {
      await t.sql(
        `insert into notification (id, user_id, type, title, body, data, source_key, created_at_utc)
       values ($1::uuid, $2, 'POST_CREATED', $3, 'b', '{}', $1::text, now() + make_interval(secs => $4))`,
        [id, user.id, `n${i}`, i],
      );
    }
    const listed = await withForks(() => t.app.inject({ method: 'GET', url: '/api/v1/notifications', headers: user.headers }));
    expect(listed.value.statusCode).toBe(200);
    expect((listed.value.json() as { title: string }[]).map((n) => n.title)).toEqual(['n1', 'n0']);
    expect(listed.forks).toBe(0);
    const paged = await withForks(() => t.app.inject({ method: 'GET', url: '/api/v1/notifications/paged?pageNumber=1&pageSize=1', headers: user.headers }));
    expect(paged.value.json()).toMatchObject({ totalCount: 2, items: [{ title: 'n1' }] });
    expect(paged.forks).toBe(0);
  });

  it("what an app reads at start (the caller's profile, their memberships) makes no fork", async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory, { verified: true });
    const reads: Read[] = [
      ['/api/v1/users/me', (b) => expect(b).toMatchObject({ id: resident.id, twoFactorEnabled: false, permissions: [] })],
      ['/api/v1/memberships/me', (b) => expect(b).toMatchObject([{ territoryId: territory.id, role: 'RESIDENT', residencyVerification: 'GEOVERIFIED' }])],
      [`/api/v1/memberships/${territory.id}/me`, (b) => expect(b).toMatchObject({ territoryId: territory.id, userId: resident.id, capabilities: [] })],
    ];
    await expectReadsWithoutFork(resident, reads);
  });

  it("the marketplace's reads (a cart once made, a store, the stores, an item, the caller's checkouts and inquiries, fees, fiscal, plans) make no fork", async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const owner = await verifiedResident(t, territory);
    const storeId = await openStore(t, owner, territory);
    const itemId = await listItem(t, owner, storeId);
    // The first read of a cart creates it (a write); later reads of it do not write.
    const cart = await t.app.inject({ method: 'GET', url: `/api/v1/cart?territoryId=${territory.id}`, headers: owner.headers });
    expect(cart.statusCode).toBe(200);
    const reads: Read[] = [
      [`/api/v1/cart?territoryId=${territory.id}`, (b) => expect(b).toMatchObject({ cartId: cart.json().cartId, items: [] })],
      [`/api/v1/stores/${storeId}`, (b) => expect(b).toMatchObject({ id: storeId, contact: { email: 'b@example.org' } })],
      [`/api/v1/stores?territoryId=${territory.id}`, (b) => expect(b).toMatchObject([{ id: storeId }])],
      [`/api/v1/items/${itemId}`, (b) => expect(b).toMatchObject({ id: itemId, storeId })],
      [`/api/v1/stores/${storeId}/orders`, (b) => expect(b).toEqual([])],
      ['/api/v1/checkouts/me/paged', (b) => expect(b).toMatchObject({ totalCount: 0, items: [] })],
      ['/api/v1/inquiries/received/paged', (b) => expect(b).toMatchObject({ totalCount: 0, items: [] })],
      [`/api/v1/territories/${territory.id}/platform-fees`, (b) => expect(b).toMatchObject({ territoryId: territory.id })],
      [`/api/v1/territories/${territory.id}/fiscal-pack`, (b) => expect(b).toMatchObject({ territoryId: territory.id })],
      [`/api/v1/territories/${territory.id}/payment-methods`, (b) => expect(b).toMatchObject({ territoryId: territory.id })],
      ['/api/v1/subscription-plans', (b) => expect(Array.isArray(b)).toBe(true)],
    ];
    await expectReadsWithoutFork(owner, reads);
  });

  it("a post, an event, the caller's posts, map entities, moderation rules and chat lists read without a fork", async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const resident = await verifiedResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: resident.id, title: 'Read on the pool' });
    const eventId = await newEvent(t, { territoryId: territory.id, createdByUserId: resident.id, title: 'Fair' });
    const entityId = await newMapEntity(t, { territoryId: territory.id, createdByUserId: resident.id, name: 'Square', status: 'VALIDATED' });
    const api = chatApi(t);
    // The first listing creates the channels (a write); later listings read them.
    const channel = await api.channelId(territory.id, resident, 'TERRITORY_PUBLIC');
    const reads: Read[] = [
      [`/api/v1/feed/${postId}`, (b) => expect(b).toMatchObject({ id: postId, title: 'Read on the pool' })],
      ['/api/v1/feed/me/paged', (b) => expect(b).toMatchObject({ totalCount: 1, items: [{ id: postId }] })],
      [`/api/v1/events/${eventId}`, (b) => expect(b).toMatchObject({ id: eventId, title: 'Fair' })],
      [`/api/v1/events/paged?territoryId=${territory.id}`, (b) => expect(b).toMatchObject({ totalCount: 1, items: [{ id: eventId }] })],
      [`/api/v1/map/entities/paged?territoryId=${territory.id}`, (b) => expect(b).toMatchObject({ totalCount: 1, items: [{ id: entityId }] })],
      [`/api/v1/territories/${territory.id}/moderation-rules`, (b) => expect(Array.isArray(b)).toBe(true)],
      [`/api/v1/territories/${territory.id}/chat/channels`, (b) => expect((b as { channels: { id: string }[] }).channels.map((c) => c.id)).toContain(channel)],
      [`/api/v1/territories/${territory.id}/chat/groups`, (b) => expect(b).toMatchObject({ groups: [] })],
      [`/api/v1/chat/conversations/${channel}`, (b) => expect(b).toMatchObject({ id: channel })],
      [`/api/v1/chat/conversations/${channel}/participants`, (b) => expect(b).toMatchObject({ conversationId: channel })],
    ];
    await expectReadsWithoutFork(resident, reads);
  });

  it('a journeys screen computed from hot statements only makes no fork either; the client it acts through is given to a fork when one is made', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const client = await clientToken(t, await newAdmin(t));
    const screen = await withForks(() => v2(t, 'GET', `/feed/territory-feed?territoryId=${territory.id}`, { client, user: resident }));
    expect(screen.value.statusCode, screen.value.body).toBe(200);
    expect(screen.value.headers['x-cache']).toBe('MISS');
    expect(screen.forks).toBe(0);

    const ctx = withLazyFork({}, root());
    const given: string[] = [];
    prepareManager(ctx, (em) => given.push(`first ${em === ctx.em}`));
    prepareManager(ctx, () => given.push('second'));
    expect(given).toEqual([]);
    const forked = ctx.em;
    expect(given).toEqual(['first true', 'second']);
    // Once forked (or for a context that is not lazy), the manager is given it at once.
    prepareManager(ctx, (em) => given.push(`now ${em === forked}`));
    prepareManager({ em: root() }, (em) => given.push(`plain ${em === root()}`));
    expect(given).toEqual(['first true', 'second', 'now true', 'plain true']);
  });

  it('forks once, on first read; an assigned manager replaces it; a copy with its own `em` reads through that one', async () => {
    const ctx = withLazyFork({ user: null as null }, root());
    const read = await withForks(async () => [ctx.em, ctx.em]);
    const [first] = read.value;
    expect(read.value[1]).toBe(first);
    expect(read.forks).toBe(1);
    expect(first).not.toBe(root());

    const other = withLazyFork({}, root());
    const assigned = root().fork() as EntityManager;
    other.em = assigned;
    expect(other.em).toBe(assigned);

    // Inside a transaction, a copy of an unforked context (`{ ...ctx, em: tx }`) reads on the transaction's
    // connection (it sees the transaction's local setting); the unforked context itself reads on the pool.
    const unforked = withLazyFork({}, root());
    await root()
      .fork()
      .transactional(async (tx) => {
        await tx.execute(`select set_config('app.lazy_fork_probe', 'in the transaction', true)`);
        const query = { sql: `select coalesce(current_setting('app.lazy_fork_probe', true), '') as v`, params: [] };
        const reads = await withForks(async () => [
          await runHotRead<{ v: string }>(unforked, query),
          await runHotRead<{ v: string }>({ ...unforked, em: tx as EntityManager }, query),
        ]);
        expect(reads.value).toEqual([[{ v: '' }], [{ v: 'in the transaction' }]]);
        // The copy took nothing of the context's manager: the context is still unforked, and reads on the pool.
        expect(reads.forks).toBe(0);
        expect(await runHotRead<{ v: string }>(unforked, query)).toEqual([{ v: '' }]);
      });
  });
});
