import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERRITORY_FEATURE_FLAGS } from '../../src/entities/territory.entity.js';
import { newId } from '../../src/platform/ids.js';
import { newPost } from '../factories/content.js';
import { countRows, newCurator, newTerritory, type TestTerritory, type TestUser } from '../factories/index.js';
import { chatApi, verifiedResident } from '../chat/helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * A posting restriction (the threshold sanction) and ProhibitedWords rules reach every kind of content a person
 * creates in the territory: events, items, chat messages and comments, not only posts.
 */
let t: TestApp;
let territory: TestTerritory;
let elsewhere: TestTerritory;
let restricted: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { flags: [...TERRITORY_FEATURE_FLAGS] });
  elsewhere = await newTerritory(t, { flags: [...TERRITORY_FEATURE_FLAGS] });
  restricted = await verifiedResident(t, territory);
  await t.sql(
    `insert into posting_restriction (id, created_at_utc, territory_id, user_id, ends_at_utc) values ($1, now(), $2, $3, now() + interval '7 days')`,
    [newId(), territory.id, restricted.id],
  );
});
afterAll(() => t.close());

const post = (user: TestUser, url: string, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url, headers: user.headers, payload });
const restrictedCode = (res: { statusCode: number; json(): { code?: string } }) => [res.statusCode, res.json().code];

describe('a posting restriction refuses every kind of content in its territory only', () => {
  it('events', async () => {
    const startsAtUtc = new Date(Date.now() + 86_400_000).toISOString();
    const before = await countRows(t, 'event');
    const res = await post(restricted, '/api/v1/events', {
      territoryId: territory.id,
      title: 'Fair',
      startsAtUtc,
      latitude: territory.latitude,
      longitude: territory.longitude,
    });
    expect(restrictedCode(res)).toEqual([403, 'POSTING_RESTRICTED']);
    expect(await countRows(t, 'event')).toBe(before);
  });

  it('items', async () => {
    // The store was opened before the sanction.
    const [store] = await t.sql<{ id: string }>(
      `insert into store (id, created_at_utc, updated_at_utc, territory_id, owner_user_id, display_name, contact_visibility, status, payments_enabled)
       values ($1, now(), now(), $2, $3, 'Shop', 'Public', 'ACTIVE', true) returning id`,
      [newId(), territory.id, restricted.id],
    );
    const res = await post(restricted, '/api/v1/items', { storeId: store!.id, type: 'PRODUCT', title: 'Bread', pricingType: 'FIXED', priceAmount: 5 });
    expect(restrictedCode(res)).toEqual([403, 'POSTING_RESTRICTED']);
  });

  it('chat messages, while someone else in the same channel still writes', async () => {
    const chat = chatApi(t);
    const channel = await chat.channelId(territory.id, restricted, 'TERRITORY_PUBLIC');
    expect(restrictedCode(await chat.send(channel, restricted, { text: 'hello' }))).toEqual([403, 'POSTING_RESTRICTED']);
    const neighbour = await verifiedResident(t, territory);
    expect((await chat.send(channel, neighbour, { text: 'hello' })).statusCode).toBe(201);
  });

  it('comments', async () => {
    const author = await verifiedResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    expect(restrictedCode(await post(restricted, `/api/v1/feed/${postId}/comments`, { content: 'Nice' }))).toEqual([403, 'POSTING_RESTRICTED']);
  });

  it('edits of their own posts', async () => {
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: restricted.id, title: 'Before' });
    const res = await t.app.inject({ method: 'PATCH', url: `/api/v1/feed/${postId}`, headers: restricted.headers, payload: { title: 'Rewritten' } });
    expect(restrictedCode(res)).toEqual([403, 'POSTING_RESTRICTED']);
    expect(await t.sql('select title from post where id = $1', [postId])).toEqual([{ title: 'Before' }]);
  });

  it('elsewhere the same person posts as usual', async () => {
    const author = await verifiedResident(t, elsewhere);
    const postId = await newPost(t, { territoryId: elsewhere.id, authorUserId: author.id });
    expect((await post(restricted, `/api/v1/feed/${postId}/comments`, { content: 'Nice' })).statusCode).toBe(201);
  });
});

describe('ProhibitedWords rules apply to comments and chat messages', () => {
  it('a comment or a message with a prohibited word is a 400 naming it, and nothing is written', async () => {
    const curator = await newCurator(t, territory);
    const rule = await post(curator, `/api/v1/territories/${territory.id}/moderation-rules`, {
      name: 'Words',
      ruleType: 'ProhibitedWords',
      config: { words: ['badword'] },
    });
    expect(rule.statusCode).toBe(201);
    const writer = await verifiedResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: writer.id });
    const comments = await countRows(t, 'post_comment');
    const comment = await post(writer, `/api/v1/feed/${postId}/comments`, { content: 'such a BadWord here' });
    expect(comment.statusCode).toBe(400);
    expect(comment.json().detail).toContain('badword');
    expect(await countRows(t, 'post_comment')).toBe(comments);
    const chat = chatApi(t);
    const channel = await chat.channelId(territory.id, writer, 'TERRITORY_PUBLIC');
    const messages = await countRows(t, 'chat_message');
    expect((await chat.send(channel, writer, { text: 'badword!' })).statusCode).toBe(400);
    expect(await countRows(t, 'chat_message')).toBe(messages);
    expect((await chat.send(channel, writer, { text: 'a fine message' })).statusCode).toBe(201);
  });
});
