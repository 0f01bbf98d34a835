import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newResident, newTerritory, newUser, newVisitor, type TestTerritory } from '../factories/index.js';
import { TINY_JPEG_8X8, TINY_MP4, TINY_PNG, TINY_WEBM } from '../factories/media-files.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { addModerationRule, createPost, type FeedItem, insertAsset, insertMapEntity, UNKNOWN_ID, uploadMedia } from './helpers.js';

let t: TestApp;
let territory: TestTerritory;
beforeAll(async () => {
  t = await createTestApp();
  territory = await newTerritory(t, { name: 'Vila Feed', flags: ['MEDIAIMAGESENABLED', 'MEDIAVIDEOSENABLED'] });
});
afterAll(() => t.close());

const body = (extra: Record<string, unknown> = {}) => ({ territoryId: territory.id, title: 'Clean-up day', content: 'Meet at the square.', ...extra });

describe('POST /api/v1/feed', () => {
  it('creates a post for a resident: 201, Location, the full feed item', async () => {
    const author = await newResident(t, territory);
    const res = await createPost(t, author, body({ visibility: 'residents_only', tags: [' Gardening ', 'gardening', 'Parks'] }));
    expect(res.statusCode).toBe(201);
    const post = res.json() as FeedItem;
    expect(res.headers.location).toBe(`/api/v1/feed/${post.id}`);
    expect(post).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      title: 'Clean-up day',
      content: 'Meet at the square.',
      type: 'POST',
      visibility: 'RESIDENTS_ONLY',
      status: 'PUBLISHED',
      tags: ['gardening', 'parks'],
      mapEntityId: null,
      assetIds: [],
      likeCount: 0,
      commentCount: 0,
      shareCount: 0,
      likedByMe: false,
      mediaUrls: [],
      event: null,
      author: { id: author.id, displayName: author.displayName },
      createdAtUtc: expect.stringMatching(/Z$/),
      updatedAtUtc: expect.stringMatching(/Z$/),
    });
    const located = await t.app.inject({ method: 'GET', url: res.headers.location as string, headers: author.headers });
    expect(located.statusCode).toBe(200);
    expect(located.json()).toEqual(post);
  });

  it('stores the map entity and the assets it references', async () => {
    const author = await newResident(t, territory);
    const mapEntityId = await insertMapEntity(t, territory.id, author.id);
    const assetId = await insertAsset(t, territory.id, author.id);
    const res = await createPost(t, author, body({ mapEntityId: mapEntityId.toUpperCase(), assetIds: [assetId, assetId.toUpperCase()] }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ mapEntityId, assetIds: [assetId] });
  });

  it('is 404 for a map entity or asset that is unknown, of another territory or rejected; nothing is written', async () => {
    const author = await newResident(t, territory);
    const elsewhere = await newTerritory(t);
    const before = await countRows(t, 'post');
    const bad = [
      { mapEntityId: UNKNOWN_ID },
      { mapEntityId: await insertMapEntity(t, elsewhere.id, author.id) },
      { mapEntityId: await insertMapEntity(t, territory.id, author.id, 'REJECTED') },
      { assetIds: [await insertAsset(t, territory.id, author.id), UNKNOWN_ID] },
      { assetIds: [await insertAsset(t, elsewhere.id, author.id)] },
      { assetIds: [await insertAsset(t, territory.id, author.id, 'Rejected')] },
    ];
    for (const extra of bad) {
      const res = await createPost(t, author, body(extra));
      expect(res.statusCode, JSON.stringify(extra)).toBe(404);
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND' });
    }
    expect(await countRows(t, 'post')).toBe(before);
  });

  it('sanitizes text: tags and angle brackets are stripped', async () => {
    const author = await newResident(t, territory);
    const res = await createPost(t, author, body({ title: '<b>Hello</b> there', content: 'a <script>x</script> b' }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ title: 'Hello there', content: 'a x b' });
  });

  it('notifies the other residents (not the author, not visitors) through the outbox, in the same transaction', async () => {
    const place = await newTerritory(t);
    const author = await newResident(t, place);
    const neighbour = await newResident(t, place);
    await newVisitor(t, place);
    const res = await createPost(t, author, { territoryId: place.id, title: 'Lost cat', content: 'Grey, answers to Mingau.' });
    expect(res.statusCode).toBe(201);
    const postId = (res.json() as FeedItem).id;
    const rows = await t.sql<{ type: string; recipient_user_ids: string[]; data: Record<string, unknown>; source_key: string }>(
      `select type, recipient_user_ids, data, source_key from outbox_message where data->>'postId' = $1`,
      [postId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      type: 'POST_CREATED',
      recipient_user_ids: [neighbour.id],
      data: { territoryId: place.id, postId, authorUserId: author.id },
      source_key: `post:${postId}:created`,
    });
  });

  it('takes the territory from the X-Session-Id selection', async () => {
    const author = await newResident(t, territory);
    const selected = await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/selection',
      headers: { ...author.headers, 'x-session-id': 'feed-session-1' },
      payload: { territoryId: territory.id },
    });
    expect(selected.statusCode).toBe(200);
    const res = await createPost(t, author, { title: 'From session', content: 'x' }, { 'x-session-id': 'feed-session-1' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ territoryId: territory.id });
  });

  it('is 404 without a territory (no territoryId, no selection) and for an unknown territory', async () => {
    const user = await newUser(t);
    const none = await createPost(t, user, { title: 'x', content: 'y' });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ code: 'NO_TERRITORY_SELECTED' });
    const unknown = await createPost(t, user, { territoryId: UNKNOWN_ID, title: 'x', content: 'y' });
    expect(unknown.statusCode).toBe(404);
  });

  it('needs a token', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/feed', payload: body() });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('is 403 for a visitor and for a non-member, writing nothing', async () => {
    const before = await countRows(t, 'post');
    const outbox = await countRows(t, 'outbox_message');
    const visitor = await newVisitor(t, territory);
    const stranger = await newUser(t);
    for (const user of [visitor, stranger]) {
      const res = await createPost(t, user, body());
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'NOT_RESIDENT' });
    }
    expect(await countRows(t, 'post')).toBe(before);
    expect(await countRows(t, 'outbox_message')).toBe(outbox);
  });

  it('is 400 on invalid bodies, writing nothing', async () => {
    const author = await newResident(t, territory);
    const before = await countRows(t, 'post');
    const invalid = [
      body({ title: '' }),
      body({ title: 'x'.repeat(201) }),
      body({ content: '' }),
      body({ content: 'x'.repeat(5001) }),
      body({ content: '<p></p>' }),
      body({ type: 'STORY' }),
      body({ visibility: 'FRIENDS' }),
      body({ territoryId: 'not-a-uuid' }),
      body({ mediaIds: ['nope'] }),
      body({ tags: ['<x>'] }),
      body({ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }),
      body({ mapEntityId: 'abc' }),
      { territoryId: territory.id, content: 'no title' },
    ];
    for (const payload of invalid) {
      const res = await createPost(t, author, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(await countRows(t, 'post')).toBe(before);
  });

  it('accepts the limits exactly (title 200, content 5000)', async () => {
    const author = await newResident(t, territory);
    const res = await createPost(t, author, body({ title: 'x'.repeat(200), content: 'y'.repeat(5000) }));
    expect(res.statusCode).toBe(201);
  });

  it('refuses EVENT posts from clients (they come from event creation)', async () => {
    const author = await newResident(t, territory);
    const before = await countRows(t, 'post');
    const res = await createPost(t, author, body({ type: 'EVENT' }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'type' }] });
    expect(await countRows(t, 'post')).toBe(before);
  });

  it('accepts ALERT posts only where the ALERTPOSTS flag is on', async () => {
    const author = await newResident(t, territory);
    const before = await countRows(t, 'post');
    const refused = await createPost(t, author, body({ type: 'ALERT' }));
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'ALERT_POSTS_DISABLED' });
    expect(await countRows(t, 'post')).toBe(before);

    const alerting = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const resident = await newResident(t, alerting);
    const ok = await createPost(t, resident, { territoryId: alerting.id, title: 'Flooding', content: 'Main street flooded', type: 'alert' });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toMatchObject({ type: 'ALERT', status: 'PUBLISHED' });
  });
});

describe('community moderation rules on post creation', () => {
  it('ProhibitedWords: a whole word, any case, is a 400 naming the rule; nothing is written', async () => {
    const place = await newTerritory(t);
    await addModerationRule(t, place.id, 'ProhibitedWords', 'No insults', { words: ['idiota', 'bad word'] });
    const author = await newResident(t, place);
    const before = await countRows(t, 'post');
    const outbox = await countRows(t, 'outbox_message');

    const inContent = await createPost(t, author, { territoryId: place.id, title: 'Hello', content: 'Que IDIOTA, não?' });
    expect(inContent.statusCode).toBe(400);
    expect(inContent.json()).toMatchObject({ code: 'MODERATION_RULE_VIOLATION', errors: [{ field: 'content' }] });
    expect(inContent.json().detail).toContain('No insults');
    expect(inContent.json().detail).toContain('ProhibitedWords');

    const phrase = await createPost(t, author, { territoryId: place.id, title: 'A  Bad\tWord here', content: 'ok' });
    expect(phrase.statusCode).toBe(400);
    expect(phrase.json()).toMatchObject({ code: 'MODERATION_RULE_VIOLATION', errors: [{ field: 'title' }] });

    expect(await countRows(t, 'post')).toBe(before);
    expect(await countRows(t, 'outbox_message')).toBe(outbox);

    // Inside a longer word it is not the prohibited word.
    const partOfWord = await createPost(t, author, { territoryId: place.id, title: 'Idiotas?', content: 'badwords and idiotamente' });
    expect(partOfWord.statusCode).toBe(201);
  });

  it('ContentType: only the allowed post types may be created', async () => {
    const place = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    await addModerationRule(t, place.id, 'ContentType', 'Plain posts only', { allowedTypes: ['post'] });
    const author = await newResident(t, place);
    const before = await countRows(t, 'post');
    const alert = await createPost(t, author, { territoryId: place.id, title: 'Alert', content: 'x', type: 'ALERT' });
    expect(alert.statusCode).toBe(400);
    expect(alert.json()).toMatchObject({ code: 'MODERATION_RULE_VIOLATION', errors: [{ field: 'type' }] });
    expect(alert.json().detail).toContain('Plain posts only');
    expect(await countRows(t, 'post')).toBe(before);
    const post = await createPost(t, author, { territoryId: place.id, title: 'Post', content: 'x' });
    expect(post.statusCode).toBe(201);
  });

  it('ignores inactive rules, rules of other territories and rule types not about a post', async () => {
    const place = await newTerritory(t);
    const other = await newTerritory(t);
    await addModerationRule(t, place.id, 'ProhibitedWords', 'Switched off', { words: ['forbidden'] }, false);
    await addModerationRule(t, other.id, 'ProhibitedWords', 'Elsewhere', { words: ['forbidden'] });
    await addModerationRule(t, place.id, 'Behavior', 'Be kind', { words: ['forbidden'] });
    const author = await newResident(t, place);
    const res = await createPost(t, author, { territoryId: place.id, title: 'forbidden', content: 'forbidden' });
    expect(res.statusCode).toBe(201);
  });
});

describe('media attached to posts', () => {
  it('attaches the caller’s images in order and answers their URLs', async () => {
    const author = await newResident(t, territory);
    const a = await uploadMedia(t, author, 'a.png', TINY_PNG);
    const b = await uploadMedia(t, author, 'b.jpg', TINY_JPEG_8X8);
    const res = await createPost(t, author, body({ mediaIds: [b.id, a.id] }));
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ mediaUrls: [b.url, a.url] });
  });

  it('refuses two videos with a 400 and writes nothing (no post, no attachment)', async () => {
    const author = await newResident(t, territory);
    const one = await uploadMedia(t, author, 'one.mp4', TINY_MP4);
    const two = await uploadMedia(t, author, 'two.webm', TINY_WEBM);
    const posts = await countRows(t, 'post');
    const attachments = await countRows(t, 'media_attachment');
    const res = await createPost(t, author, body({ mediaIds: [one.id, two.id] }));
    expect(res.statusCode).toBe(400);
    expect(await countRows(t, 'post')).toBe(posts);
    expect(await countRows(t, 'media_attachment')).toBe(attachments);
  });

  it('refuses someone else’s media and media types the territory has not enabled', async () => {
    const author = await newResident(t, territory);
    const other = await newUser(t);
    const theirs = await uploadMedia(t, other, 'theirs.png', TINY_PNG);
    const before = await countRows(t, 'post');
    const notMine = await createPost(t, author, body({ mediaIds: [theirs.id] }));
    expect(notMine.statusCode).toBe(400);

    const noMediaFlags = await newTerritory(t);
    const resident = await newResident(t, noMediaFlags);
    const image = await uploadMedia(t, resident, 'x.png', TINY_PNG);
    const disabled = await createPost(t, resident, { territoryId: noMediaFlags.id, title: 'x', content: 'y', mediaIds: [image.id] });
    expect(disabled.statusCode).toBe(400);
    expect(await countRows(t, 'post')).toBe(before);
  });
});
