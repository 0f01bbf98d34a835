import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMembership,
  countRows,
  newAdmin,
  newCurator,
  newModerator,
  newResident,
  newTerritory,
  newUser,
  newVisitor,
  type TestTerritory,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { CHAT_FLAGS, chatApi, mediaAsset, verifiedResident, verifiedVisitor } from './helpers.js';

let t: TestApp;
let api: ReturnType<typeof chatApi>;
let territory: TestTerritory;
beforeAll(async () => {
  t = await createTestApp();
  api = chatApi(t);
  territory = await newTerritory(t, { flags: CHAT_FLAGS });
});
afterAll(() => t.close());

const T = () => territory.id;
const withoutFlag = (flag: string) => newTerritory(t, { flags: CHAT_FLAGS.filter((f) => f !== flag) });

async function block(blocker: TestUser, blocked: TestUser) {
  const res = await t.app.inject({ method: 'POST', url: `/api/v1/users/${blocked.id}/block`, headers: blocker.headers });
  expect(res.statusCode).toBe(204);
}

async function contactVisibility(user: TestUser, visibility: 'Public' | 'ResidentsOnly' | 'Private') {
  await t.sql(
    `insert into user_preferences (user_id, contact_visibility, created_at_utc, updated_at_utc) values ($1, $2, now(), now())
     on conflict (user_id) do update set contact_visibility = excluded.contact_visibility`,
    [user.id, visibility],
  );
}

/** An ACTIVE group owned by a fresh verified resident. */
async function activeGroup(where = territory) {
  const owner = await verifiedResident(t, where);
  const created = await api.createGroup(where.id, owner, { name: 'Gardeners' });
  expect(created.statusCode).toBe(201);
  const id = (created.json() as { id: string }).id;
  expect((await api.groupAction(where.id, id, 'approve', await newAdmin(t))).statusCode).toBe(200);
  return { owner, id };
}

describe('GET /api/v1/territories/{territoryId}/chat/channels', () => {
  it('creates the channels on first listing and lists those the caller may read', async () => {
    const visitor = await newVisitor(t, territory);
    const res = await api.channels(T(), visitor);
    expect(res.statusCode).toBe(200);
    const body = res.json() as { territoryId: string; channels: Record<string, unknown>[] };
    expect(body.territoryId).toBe(T());
    expect(body.channels).toHaveLength(1);
    expect(body.channels[0]).toMatchObject({
      territoryId: T(),
      kind: 'TERRITORY_PUBLIC',
      status: 'ACTIVE',
      name: 'Public channel',
      lastMessageAtUtc: null,
      lastMessagePreview: null,
      messageCount: 0,
      unreadCount: 0,
    });
    expect(await countRows(t, 'chat_conversation', 'territory_id = $1', [T()])).toBe(2);
    // Unverified residents read the public channel only; identity-Verified residents both.
    expect(((await api.channels(T(), await newResident(t, territory))).json() as { channels: unknown[] }).channels).toHaveLength(1);
    const kinds = ((await api.channels(T(), await verifiedResident(t, territory))).json() as { channels: { kind: string }[] }).channels.map((c) => c.kind);
    expect(kinds.sort()).toEqual(['TERRITORY_PUBLIC', 'TERRITORY_RESIDENTS']);
    // Listing again creates nothing more.
    expect(await countRows(t, 'chat_conversation', 'territory_id = $1', [T()])).toBe(2);
  });

  it('401 without a token; 403 for a non-member; 404 for an unknown territory; 404 CHAT_DISABLED without CHATENABLED', async () => {
    expect((await api.channels(T(), null)).statusCode).toBe(401);
    const outsider = await newUser(t, { identity: 'Verified' });
    const refused = await api.channels(T(), outsider);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'NOT_MEMBER' });
    expect((await api.channels(T(), await newAdmin(t))).statusCode).toBe(403);
    expect((await api.channels(UNKNOWN_ID, outsider)).statusCode).toBe(404);
    const off = await withoutFlag('CHATENABLED');
    const member = await verifiedResident(t, off);
    const disabled = await api.channels(off.id, member);
    expect(disabled.statusCode).toBe(404);
    expect(disabled.json()).toMatchObject({ code: 'CHAT_DISABLED', status: 404 });
    // Flags come first: a non-member of a territory without chat gets the same 404.
    expect((await api.channels(off.id, outsider)).json()).toMatchObject({ code: 'CHAT_DISABLED' });
    expect(await countRows(t, 'chat_conversation', 'territory_id = $1', [off.id])).toBe(0);
  });

  it('a channel whose flag is off is neither created nor listed', async () => {
    const noResidents = await withoutFlag('CHATTERITORYRESIDENTSCHANNEL');
    const res = await api.channels(noResidents.id, await verifiedResident(t, noResidents));
    expect((res.json() as { channels: { kind: string }[] }).channels.map((c) => c.kind)).toEqual(['TERRITORY_PUBLIC']);
    expect(await countRows(t, 'chat_conversation', 'territory_id = $1', [noResidents.id])).toBe(1);
  });
});

describe('channel permissions (spec table)', () => {
  it('TERRITORY_PUBLIC: members read; identity-Verified residents write', async () => {
    const writer = await verifiedResident(t, territory);
    const channel = await api.channelId(T(), writer, 'TERRITORY_PUBLIC');
    const sent = await api.send(channel, writer, { text: '  Hello <b>neighbours</b>  ' });
    expect(sent.statusCode).toBe(201);
    expect(sent.json()).toMatchObject({ conversationId: channel, senderUserId: writer.id, text: 'Hello neighbours', media: null });

    const readers = [await newVisitor(t, territory), await newResident(t, territory), await verifiedVisitor(t, territory), await newCurator(t, territory)];
    for (const reader of readers) expect((await api.messages(channel, reader)).statusCode).toBe(200);
    for (const nonWriter of [
      await newVisitor(t, territory),
      await verifiedVisitor(t, territory),
      await newResident(t, territory),
      await newModerator(t, territory),
    ]) {
      const before = await countRows(t, 'chat_message');
      const res = await api.send(channel, nonWriter, { text: 'Hi' });
      expect(res.statusCode).toBe(403);
      expect(await countRows(t, 'chat_message')).toBe(before);
    }
    expect((await api.send(channel, await newResident(t, territory), { text: 'Hi' })).json()).toMatchObject({ code: 'IDENTITY_NOT_VERIFIED' });
    // Non-members (a verified user, a resident elsewhere, a system admin) neither read nor write.
    const elsewhere = await newTerritory(t, { flags: CHAT_FLAGS });
    for (const outsider of [await newUser(t, { identity: 'Verified' }), await verifiedResident(t, elsewhere), await newAdmin(t)]) {
      expect((await api.messages(channel, outsider)).statusCode).toBe(403);
      expect((await api.send(channel, outsider, { text: 'Hi' })).statusCode).toBe(403);
    }
  });

  it('TERRITORY_RESIDENTS: only identity-Verified residents read and write', async () => {
    const writer = await verifiedResident(t, territory);
    const channel = await api.channelId(T(), writer, 'TERRITORY_RESIDENTS');
    expect((await api.send(channel, writer, { text: 'Residents only' })).statusCode).toBe(201);
    expect((await api.messages(channel, writer)).statusCode).toBe(200);
    for (const refused of [
      await newVisitor(t, territory),
      await verifiedVisitor(t, territory),
      await newResident(t, territory, { verified: true }),
      await newCurator(t, territory),
      await newModerator(t, territory),
      await newAdmin(t),
      await newUser(t, { identity: 'Verified' }),
    ]) {
      expect((await api.messages(channel, refused)).statusCode).toBe(403);
      expect((await api.send(channel, refused, { text: 'Hi' })).statusCode).toBe(403);
    }
  });

  it('GET /api/v1/chat/conversations/{id}: details; 404 unknown; 401 without a token', async () => {
    const reader = await newVisitor(t, territory);
    const channel = await api.channelId(T(), reader, 'TERRITORY_PUBLIC');
    const res = await api.call('GET', `/api/v1/chat/conversations/${channel}`, reader);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: channel, kind: 'TERRITORY_PUBLIC', territoryId: T() });
    expect((await api.call('GET', `/api/v1/chat/conversations/${UNKNOWN_ID}`, reader)).statusCode).toBe(404);
    expect((await api.call('GET', `/api/v1/chat/conversations/${channel}`, null)).statusCode).toBe(401);
    expect((await api.call('GET', '/api/v1/chat/conversations/not-a-uuid', reader)).statusCode).toBe(400);
  });

  it('a territory that switches CHATENABLED off: its conversations answer 404 CHAT_DISABLED', async () => {
    const place = await newTerritory(t, { flags: CHAT_FLAGS });
    const writer = await verifiedResident(t, place);
    const channel = await api.channelId(place.id, writer, 'TERRITORY_PUBLIC');
    await t.sql(`update territory set enabled_flags = '{}' where id = $1`, [place.id]);
    for (const res of [
      await api.messages(channel, writer),
      await api.send(channel, writer, { text: 'x' }),
      await api.call('GET', `/api/v1/chat/conversations/${channel}`, writer),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'CHAT_DISABLED' });
    }
  });
});

describe('POST /api/v1/chat/conversations/{id}/messages', () => {
  it('400 for bad input, with nothing written', async () => {
    const writer = await verifiedResident(t, territory);
    const channel = await api.channelId(T(), writer, 'TERRITORY_PUBLIC');
    const before = await countRows(t, 'chat_message');
    for (const payload of [{}, { text: '' }, { text: '   ' }, { text: '<b></b>' }, { text: 'x'.repeat(4001) }, { text: 42 }, { text: 'ok', mediaId: 'nope' }]) {
      const res = await api.send(channel, writer, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(await countRows(t, 'chat_message')).toBe(before);
    expect((await api.send(channel, writer, { text: 'x'.repeat(4000) })).statusCode).toBe(201);
    expect((await api.send(UNKNOWN_ID, writer, { text: 'Hi' })).statusCode).toBe(404);
    expect((await api.send(channel, null, { text: 'Hi' })).statusCode).toBe(401);
  });

  it('media: one image or one audio where the flags allow; video refused with the spec text', async () => {
    const writer = await verifiedResident(t, territory);
    const channel = await api.channelId(T(), writer, 'TERRITORY_PUBLIC');
    const image = await mediaAsset(t, writer, { mediaType: 'IMAGE', mimeType: 'image/png', sizeBytes: 2000 });
    const sent = await api.send(channel, writer, { text: 'Look', mediaId: image });
    expect(sent.statusCode).toBe(201);
    expect(sent.json()).toMatchObject({ media: { id: image, url: `/api/v1/media/${image}`, mediaType: 'IMAGE' } });
    expect(await countRows(t, 'media_attachment', "media_asset_id = $1 and owner_type = 'CHAT_MESSAGE'", [image])).toBe(1);
    const audio = await mediaAsset(t, writer, { mediaType: 'AUDIO', mimeType: 'audio/mpeg', sizeBytes: 1024 * 1024, durationSeconds: 30 });
    expect((await api.send(channel, writer, { text: 'Listen', mediaId: audio })).statusCode).toBe(201);

    const before = await countRows(t, 'chat_message');
    const video = await mediaAsset(t, writer, { mediaType: 'VIDEO', mimeType: 'video/mp4', durationSeconds: 5 });
    const refused = await api.send(channel, writer, { text: 'Watch', mediaId: video });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().detail).toBe('Only images and audios are allowed in chat messages');
    const big = await mediaAsset(t, writer, { mediaType: 'IMAGE', mimeType: 'image/png', sizeBytes: 5 * 1024 * 1024 + 1 });
    expect((await api.send(channel, writer, { text: 'Big', mediaId: big })).json()).toMatchObject({ status: 400, code: 'MEDIA_TOO_LARGE' });
    const longAudio = await mediaAsset(t, writer, { mediaType: 'AUDIO', mimeType: 'audio/mpeg', sizeBytes: 1000, durationSeconds: 61 });
    expect((await api.send(channel, writer, { text: 'Long', mediaId: longAudio })).json()).toMatchObject({ status: 400, code: 'MEDIA_TOO_LONG' });
    const bigAudio = await mediaAsset(t, writer, { mediaType: 'AUDIO', mimeType: 'audio/mpeg', sizeBytes: 2 * 1024 * 1024 + 1, durationSeconds: 10 });
    expect((await api.send(channel, writer, { text: 'Big', mediaId: bigAudio })).json()).toMatchObject({ status: 400, code: 'MEDIA_TOO_LARGE' });
    const others = await mediaAsset(t, await newUser(t), { mediaType: 'IMAGE', mimeType: 'image/png' });
    expect((await api.send(channel, writer, { text: 'Theirs', mediaId: others })).json()).toMatchObject({ status: 400, code: 'MEDIA_NOT_OWNED' });
    expect((await api.send(channel, writer, { text: 'Again', mediaId: image })).json()).toMatchObject({ status: 400, code: 'MEDIA_ALREADY_ATTACHED' });
    expect(await countRows(t, 'chat_message')).toBe(before);
  });

  it('a video gets the spec text even where the territory allows no chat media (maxMediaCount 0); an image there, the count', async () => {
    const place = await newTerritory(t, { flags: CHAT_FLAGS });
    const config = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/territories/${place.id}/media-config`,
      headers: (await newCurator(t, place)).headers,
      payload: { chat: { maxMediaCount: 0 } },
    });
    expect(config.statusCode).toBe(200);
    expect(config.json().chat).toMatchObject({ maxMediaCount: 0 });
    const writer = await verifiedResident(t, place);
    const channel = await api.channelId(place.id, writer, 'TERRITORY_PUBLIC');
    const video = await mediaAsset(t, writer, { mediaType: 'VIDEO', mimeType: 'video/mp4', durationSeconds: 5 });
    const refused = await api.send(channel, writer, { text: 'Watch', mediaId: video });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      status: 400,
      code: 'MEDIA_TYPE_NOT_ALLOWED',
      detail: 'Only images and audios are allowed in chat messages',
      errors: [{ field: 'mediaId', message: 'Only images and audios are allowed in chat messages' }],
    });
    const image = await mediaAsset(t, writer, { mediaType: 'IMAGE', mimeType: 'image/png' });
    expect((await api.send(channel, writer, { text: 'Look', mediaId: image })).json()).toMatchObject({
      status: 400,
      code: 'MEDIA_COUNT_EXCEEDED',
      detail: 'At most 0 media are allowed in chat messages in this territory.',
    });
    expect(await countRows(t, 'chat_message', 'conversation_id = $1', [channel])).toBe(0);
  });

  it('media flags: CHATMEDIAENABLED, CHATMEDIAIMAGESENABLED, CHATMEDIAAUDIOENABLED', async () => {
    for (const [flag, type, mime] of [
      ['CHATMEDIAENABLED', 'IMAGE', 'image/png'],
      ['CHATMEDIAIMAGESENABLED', 'IMAGE', 'image/png'],
      ['CHATMEDIAAUDIOENABLED', 'AUDIO', 'audio/mpeg'],
    ] as const) {
      const place = await withoutFlag(flag);
      const writer = await verifiedResident(t, place);
      const channel = await api.channelId(place.id, writer, 'TERRITORY_PUBLIC');
      const media = await mediaAsset(t, writer, { mediaType: type, mimeType: mime, durationSeconds: type === 'AUDIO' ? 10 : null });
      const res = await api.send(channel, writer, { text: 'With media', mediaId: media });
      expect(res.statusCode, flag).toBe(400);
      expect(res.json()).toMatchObject({ code: 'MEDIA_TYPE_NOT_ALLOWED' });
      expect(await countRows(t, 'chat_message', 'conversation_id = $1', [channel])).toBe(0);
      expect((await api.send(channel, writer, { text: 'Text only' })).statusCode).toBe(201);
    }
  });

  it('media of a message is served to readers of its conversation only', async () => {
    const writer = await verifiedResident(t, territory);
    const channel = await api.channelId(T(), writer, 'TERRITORY_RESIDENTS');
    const image = await mediaAsset(t, writer, { mediaType: 'IMAGE', mimeType: 'image/png' });
    expect((await api.send(channel, writer, { text: 'Pic', mediaId: image })).statusCode).toBe(201);
    // The stored file is missing (a row only): a reader passes the rule and gets the missing-file 404, with its own detail.
    const reader = await api.call('GET', `/api/v1/media/${image}`, await verifiedResident(t, territory));
    const visitor = await api.call('GET', `/api/v1/media/${image}`, await newVisitor(t, territory));
    expect(reader.json().detail).toBe('Media file was not found.');
    expect(visitor.json().detail).toBe('Media was not found.');
  });
});

describe('cursor paging, unread counts, read markers', () => {
  it('pages newest first with nextCursor, `before` and `beforeCreatedAtUtc`; limit bounds', async () => {
    const writer = await verifiedResident(t, territory);
    const { id } = await activeGroup();
    await t.sql(`insert into chat_participant (conversation_id, user_id, role, joined_at_utc, last_read_seq) values ($1, $2, 'MEMBER', now(), 0)`, [
      id,
      writer.id,
    ]);
    const sent: string[] = [];
    for (let i = 1; i <= 7; i++) sent.push((await api.send(id, writer, { text: `m${i}` })).json().id as string);
    const first = await api.messages(id, writer, '?limit=3');
    expect(first.statusCode).toBe(200);
    const page1 = first.json() as {
      conversationId: string;
      messages: { id: string; text: string; createdAtUtc: string }[];
      nextCursor: { beforeCreatedAtUtc: string; beforeMessageId: string } | null;
    };
    expect(page1.conversationId).toBe(id);
    expect(page1.messages.map((m) => m.text)).toEqual(['m7', 'm6', 'm5']);
    expect(page1.nextCursor).toEqual({ beforeCreatedAtUtc: page1.messages[2]!.createdAtUtc, beforeMessageId: page1.messages[2]!.id });
    const c = page1.nextCursor!;
    const page2 = (
      await api.messages(id, writer, `?limit=3&beforeCreatedAtUtc=${encodeURIComponent(c.beforeCreatedAtUtc)}&beforeMessageId=${c.beforeMessageId}`)
    ).json();
    expect(page2.messages.map((m: { text: string }) => m.text)).toEqual(['m4', 'm3', 'm2']);
    const page3 = (await api.messages(id, writer, `?limit=3&before=${page2.nextCursor.beforeMessageId}`)).json();
    expect(page3.messages.map((m: { text: string }) => m.text)).toEqual(['m1']);
    expect(page3.nextCursor).toBeNull();
    // By instant only: everything strictly older than that instant.
    const future = (await api.messages(id, writer, `?beforeCreatedAtUtc=${encodeURIComponent('2999-01-01T00:00:00Z')}`)).json();
    expect(future.messages).toHaveLength(7);
    const past = (await api.messages(id, writer, `?beforeCreatedAtUtc=${encodeURIComponent('2000-01-01T00:00:00Z')}`)).json();
    expect(past.messages).toHaveLength(0);
    for (const query of ['?limit=0', '?limit=101', '?limit=x', '?beforeMessageId=nope', '?beforeCreatedAtUtc=yesterday', `?beforeMessageId=${UNKNOWN_ID}`]) {
      expect((await api.messages(id, writer, query)).statusCode, query).toBe(400);
    }
  });

  it('unread counts per conversation and read markers (POST .../read)', async () => {
    const { owner, id } = await activeGroup();
    const reader = await verifiedResident(t, territory);
    expect((await api.call('POST', `/api/v1/chat/conversations/${id}/participants`, owner, { userId: reader.id })).statusCode).toBe(204);
    const ids: string[] = [];
    for (const text of ['a', 'b', 'c']) ids.push((await api.send(id, owner, { text })).json().id as string);
    const details = async (user: TestUser) =>
      (await api.call('GET', `/api/v1/chat/conversations/${id}`, user)).json() as { unreadCount: number; messageCount: number; lastMessagePreview: string };
    expect(await details(reader)).toMatchObject({ unreadCount: 3, messageCount: 3, lastMessagePreview: 'c' });
    // One's own messages are never unread.
    expect((await details(owner)).unreadCount).toBe(0);

    expect((await api.call('POST', `/api/v1/chat/conversations/${id}/read`, reader, { messageId: ids[1] })).statusCode).toBe(204);
    expect((await details(reader)).unreadCount).toBe(1);
    // A marker never moves back.
    expect((await api.call('POST', `/api/v1/chat/conversations/${id}/read`, reader, { messageId: ids[0] })).statusCode).toBe(204);
    expect((await details(reader)).unreadCount).toBe(1);
    expect((await api.call('POST', `/api/v1/chat/conversations/${id}/read`, reader, {})).statusCode).toBe(204);
    expect((await details(reader)).unreadCount).toBe(0);
    const participants = (await api.call('GET', `/api/v1/chat/conversations/${id}/participants`, reader)).json() as {
      participants: { userId: string; lastReadMessageId: string | null; lastReadAtUtc: string | null; role: string }[];
    };
    expect(participants.participants.find((p) => p.userId === reader.id)).toMatchObject({ role: 'MEMBER', lastReadMessageId: ids[2] });
    expect((await api.call('POST', `/api/v1/chat/conversations/${id}/read`, reader, { messageId: UNKNOWN_ID })).statusCode).toBe(404);
    expect((await api.call('POST', `/api/v1/chat/conversations/${id}/read`, reader, { messageId: 'x' })).statusCode).toBe(400);
    expect((await api.call('POST', `/api/v1/chat/conversations/${id}/read`, null, {})).statusCode).toBe(401);
    expect((await api.call('POST', `/api/v1/chat/conversations/${id}/read`, await verifiedResident(t, territory), {})).statusCode).toBe(403);
  });

  it('channel unread counts keep a read-marker row per reader', async () => {
    const place = await newTerritory(t, { flags: CHAT_FLAGS });
    const writer = await verifiedResident(t, place);
    const visitor = await newVisitor(t, place);
    const channel = await api.channelId(place.id, writer, 'TERRITORY_PUBLIC');
    await api.send(channel, writer, { text: 'one' });
    await api.send(channel, writer, { text: 'two' });
    const unread = async () => ((await api.channels(place.id, visitor)).json() as { channels: { unreadCount: number }[] }).channels[0]!.unreadCount;
    expect(await unread()).toBe(2);
    expect((await api.call('POST', `/api/v1/chat/conversations/${channel}/read`, visitor, {})).statusCode).toBe(204);
    expect(await unread()).toBe(0);
    await api.send(channel, writer, { text: 'three' });
    expect(await unread()).toBe(1);
  });

  it('messages of users the reader blocked are left out', async () => {
    const place = await newTerritory(t, { flags: CHAT_FLAGS });
    const [a, b, reader] = [await verifiedResident(t, place), await verifiedResident(t, place), await newVisitor(t, place)];
    const channel = await api.channelId(place.id, a, 'TERRITORY_PUBLIC');
    await api.send(channel, a, { text: 'from a' });
    await api.send(channel, b, { text: 'from b' });
    await block(reader, b);
    const texts = ((await api.messages(channel, reader)).json() as { messages: { text: string }[] }).messages.map((m) => m.text);
    expect(texts).toEqual(['from a']);
    expect(((await api.messages(channel, a)).json() as { messages: unknown[] }).messages).toHaveLength(2);
    // Nor do they show in the summaries: the newest message shown is a's, and b's does not count as unread.
    const summary = (await api.call('GET', `/api/v1/chat/conversations/${channel}`, reader)).json();
    expect(summary).toMatchObject({ lastMessagePreview: 'from a', unreadCount: 1 });
    const listed = (await api.channels(place.id, reader)).json().channels.find((c: { id: string }) => c.id === channel);
    expect(listed).toMatchObject({ lastMessagePreview: 'from a', unreadCount: 1, lastMessageAtUtc: summary.lastMessageAtUtc });
    expect((await api.call('GET', `/api/v1/chat/conversations/${channel}`, a)).json()).toMatchObject({ lastMessagePreview: 'from b', unreadCount: 1 });
  });
});

describe('groups', () => {
  it('POST creates a PENDING_APPROVAL group owned by its creator (201, Location); not listed until approved', async () => {
    const creator = await verifiedResident(t, territory);
    const res = await api.createGroup(T(), creator, { name: ' Book club ', description: 'We read <i>books</i>' });
    expect(res.statusCode).toBe(201);
    const group = res.json() as { id: string };
    expect(res.headers.location).toBe(`/api/v1/chat/conversations/${group.id}`);
    expect(group).toMatchObject({
      kind: 'GROUP',
      status: 'PENDING_APPROVAL',
      name: 'Book club',
      description: 'We read books',
      createdByUserId: creator.id,
      territoryId: T(),
    });
    const listed = async () =>
      ((await api.call('GET', `/api/v1/territories/${T()}/chat/groups`, creator)).json() as { groups: { id: string }[] }).groups.map((g) => g.id);
    expect(await listed()).not.toContain(group.id);
    // Pending: nobody writes yet.
    expect((await api.send(group.id, creator, { text: 'Hi' })).json()).toMatchObject({ status: 409, code: 'CONVERSATION_NOT_ACTIVE' });
    const approved = await api.groupAction(T(), group.id, 'approve', await newCurator(t, territory));
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({ id: group.id, status: 'ACTIVE' });
    expect(await listed()).toContain(group.id);
    const participants = (await api.call('GET', `/api/v1/chat/conversations/${group.id}/participants`, creator)).json();
    expect(participants).toMatchObject({
      conversationId: group.id,
      participants: [{ userId: creator.id, role: 'OWNER', lastReadMessageId: null, mutedUntilUtc: null }],
    });
  });

  it('creation: 403 for visitors, unverified residents and non-members; 400 with nothing written; 404 without CHATGROUPS; 401', async () => {
    for (const [user, code] of [
      [await verifiedVisitor(t, territory), 'NOT_RESIDENT'],
      [await newResident(t, territory, { verified: true }), 'IDENTITY_NOT_VERIFIED'],
      [await newUser(t, { identity: 'Verified' }), 'NOT_RESIDENT'],
      [await newAdmin(t), 'NOT_RESIDENT'],
    ] as const) {
      const res = await api.createGroup(T(), user, { name: 'Nope' });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code });
    }
    const creator = await verifiedResident(t, territory);
    const before = await countRows(t, 'chat_conversation');
    for (const payload of [{}, { name: '' }, { name: 'x'.repeat(101) }, { name: 'ok', description: 'x'.repeat(501) }, { name: 3 }]) {
      expect((await api.createGroup(T(), creator, payload)).statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect(await countRows(t, 'chat_conversation')).toBe(before);
    const noGroups = await withoutFlag('CHATGROUPS');
    const there = await verifiedResident(t, noGroups);
    expect((await api.createGroup(noGroups.id, there, { name: 'x' })).json()).toMatchObject({ status: 404, code: 'CHAT_DISABLED' });
    expect((await api.call('GET', `/api/v1/territories/${noGroups.id}/chat/groups`, there)).json()).toMatchObject({ status: 404, code: 'CHAT_DISABLED' });
    expect((await api.createGroup(T(), null, { name: 'x' })).statusCode).toBe(401);
    expect((await api.createGroup(UNKNOWN_ID, creator, { name: 'x' })).statusCode).toBe(404);
  });

  it('GET groups: members and moderators; 403 for others', async () => {
    expect((await api.call('GET', `/api/v1/territories/${T()}/chat/groups`, await newVisitor(t, territory))).statusCode).toBe(200);
    expect((await api.call('GET', `/api/v1/territories/${T()}/chat/groups`, await newAdmin(t))).statusCode).toBe(200);
    expect((await api.call('GET', `/api/v1/territories/${T()}/chat/groups`, await newUser(t))).statusCode).toBe(403);
    expect((await api.call('GET', `/api/v1/territories/${T()}/chat/groups`, null)).statusCode).toBe(401);
  });

  it('approve (curator or admin), lock / unlock / disable (moderator or admin), with their transitions', async () => {
    const creator = await verifiedResident(t, territory);
    const id = (await api.createGroup(T(), creator, { name: 'Runners' })).json().id as string;
    const [curator, moderator, admin] = [await newCurator(t, territory), await newModerator(t, territory), await newAdmin(t)];
    for (const user of [creator, moderator, await newVisitor(t, territory)]) expect((await api.groupAction(T(), id, 'approve', user)).statusCode).toBe(403);
    expect((await api.groupAction(T(), id, 'lock', moderator)).json()).toMatchObject({
      status: 409,
      code: 'GROUP_STATUS_CONFLICT',
      detail: 'A PENDING_APPROVAL group cannot be locked.',
    });
    expect((await api.groupAction(T(), id, 'approve', curator)).json()).toMatchObject({ status: 'ACTIVE' });
    expect((await api.groupAction(T(), id, 'approve', curator)).statusCode).toBe(200);
    for (const user of [creator, curator]) expect((await api.groupAction(T(), id, 'lock', user)).statusCode).toBe(403);
    expect((await api.groupAction(T(), id, 'lock', moderator)).json()).toMatchObject({ status: 'LOCKED' });
    expect((await api.send(id, creator, { text: 'Locked?' })).json()).toMatchObject({ status: 409, code: 'CONVERSATION_NOT_ACTIVE' });
    expect((await api.messages(id, creator)).statusCode).toBe(200);
    expect((await api.groupAction(T(), id, 'unlock', curator)).statusCode).toBe(403);
    expect((await api.groupAction(T(), id, 'unlock', admin)).json()).toMatchObject({ status: 'ACTIVE' });
    expect((await api.send(id, creator, { text: 'Open again' })).statusCode).toBe(201);
    expect((await api.groupAction(T(), id, 'disable', moderator)).json()).toMatchObject({ status: 'DISABLED' });
    expect((await api.groupAction(T(), id, 'unlock', moderator)).json()).toMatchObject({ status: 409, code: 'GROUP_STATUS_CONFLICT' });
    expect((await api.groupAction(T(), id, 'approve', curator)).statusCode).toBe(409);
    expect((await api.send(id, creator, { text: 'Disabled?' })).statusCode).toBe(409);
    expect(await countRows(t, 'audit_entry', "subject_id = $1 and action like 'chat.group.%'", [id])).toBe(4);
    for (const action of ['approve', 'lock', 'unlock', 'disable']) {
      expect((await api.groupAction(T(), UNKNOWN_ID, action, admin)).statusCode).toBe(404);
      expect((await api.groupAction(T(), id, action, null)).statusCode).toBe(401);
    }
    // A group is addressed within its territory.
    const elsewhere = await newTerritory(t, { flags: CHAT_FLAGS });
    expect((await api.groupAction(elsewhere.id, id, 'lock', admin)).statusCode).toBe(404);
  });

  it('participants: invite-only; owner or admin add; a member leaves; the owner cannot leave', async () => {
    const { owner, id } = await activeGroup();
    const [friend, stranger, admin] = [await newResident(t, territory), await verifiedResident(t, territory), await newAdmin(t)];
    // Non-participants neither read nor write (only its curators and moderators see its details).
    expect((await api.messages(id, stranger)).statusCode).toBe(403);
    expect((await api.send(id, stranger, { text: 'Let me in' })).json()).toMatchObject({ status: 403, code: 'NOT_PARTICIPANT' });
    expect((await api.call('GET', `/api/v1/chat/conversations/${id}`, stranger)).statusCode).toBe(403);
    expect((await api.call('GET', `/api/v1/chat/conversations/${id}`, await newModerator(t, territory))).statusCode).toBe(200);
    expect((await api.messages(id, await newModerator(t, territory))).statusCode).toBe(403);
    expect((await api.messages(id, admin)).statusCode).toBe(200);

    const add = (by: TestUser | null, userId: string) => api.call('POST', `/api/v1/chat/conversations/${id}/participants`, by, { userId });
    expect((await add(stranger, stranger.id)).statusCode).toBe(403);
    expect((await add(owner, friend.id)).statusCode).toBe(204);
    expect((await add(owner, friend.id)).statusCode).toBe(204);
    expect(await countRows(t, 'chat_participant', 'conversation_id = $1', [id])).toBe(2);
    // A participant who is not the owner cannot invite.
    expect((await add(friend, stranger.id)).json()).toMatchObject({ status: 403, code: 'NOT_GROUP_OWNER' });
    expect((await add(admin, stranger.id)).statusCode).toBe(204);
    expect((await api.send(id, friend, { text: 'Thanks!' })).statusCode).toBe(201);
    const nonMember = await newUser(t);
    const before = await countRows(t, 'chat_participant');
    expect((await add(owner, nonMember.id)).json()).toMatchObject({ status: 400, code: 'NOT_MEMBER' });
    expect((await add(owner, UNKNOWN_ID)).statusCode).toBe(404);
    expect((await add(owner, 'x')).statusCode).toBe(400);
    expect((await add(null, friend.id)).statusCode).toBe(401);
    const blocker = await newVisitor(t, territory);
    await block(blocker, owner);
    expect((await add(owner, blocker.id)).json()).toMatchObject({ status: 403, code: 'USER_BLOCKED' });
    expect(await countRows(t, 'chat_participant')).toBe(before);

    const remove = (by: TestUser | null, userId: string) => api.call('DELETE', `/api/v1/chat/conversations/${id}/participants/${userId}`, by);
    expect((await remove(friend, stranger.id)).statusCode).toBe(403);
    expect((await remove(friend, friend.id)).statusCode).toBe(204);
    expect((await api.messages(id, friend)).statusCode).toBe(403);
    expect((await remove(owner, stranger.id)).statusCode).toBe(204);
    // An idempotent removal (the spec's 204): again, or someone who never took part, changes nothing.
    const participants = await countRows(t, 'chat_participant', 'conversation_id = $1', [id]);
    expect((await remove(owner, stranger.id)).statusCode).toBe(204);
    expect((await remove(owner, (await newVisitor(t, territory)).id)).statusCode).toBe(204);
    expect(await countRows(t, 'chat_participant', 'conversation_id = $1', [id])).toBe(participants);
    expect((await remove(owner, owner.id)).json()).toMatchObject({ status: 409, code: 'OWNER_CANNOT_LEAVE' });
    expect((await remove(null, owner.id)).statusCode).toBe(401);
  });

  it('ids in upper case are the same ids: a member leaves with their own id upper-cased (204); the owner still cannot', async () => {
    const { owner, id } = await activeGroup();
    const member = await verifiedResident(t, territory);
    expect((await api.call('POST', `/api/v1/chat/conversations/${id.toUpperCase()}/participants`, owner, { userId: member.id.toUpperCase() })).statusCode).toBe(
      204,
    );
    const details = await api.call('GET', `/api/v1/chat/conversations/${id.toUpperCase()}`, member);
    expect(details.statusCode).toBe(200);
    expect(details.json()).toMatchObject({ id, kind: 'GROUP' });
    const left = await api.call('DELETE', `/api/v1/chat/conversations/${id}/participants/${member.id.toUpperCase()}`, member);
    expect(left.statusCode).toBe(204);
    expect(left.body).toBe('');
    expect(await countRows(t, 'chat_participant', 'conversation_id = $1 and user_id = $2', [id, member.id])).toBe(0);
    expect((await api.call('DELETE', `/api/v1/chat/conversations/${id}/participants/${owner.id.toUpperCase()}`, owner)).json()).toMatchObject({
      status: 409,
      code: 'OWNER_CANNOT_LEAVE',
    });
  });

  it('participants of channels and direct messages cannot be changed (400)', async () => {
    const writer = await verifiedResident(t, territory);
    const channel = await api.channelId(T(), writer, 'TERRITORY_PUBLIC');
    const admin = await newAdmin(t);
    await addMembership(t, admin, territory, { role: 'VISITOR' });
    expect((await api.call('POST', `/api/v1/chat/conversations/${channel}/participants`, admin, { userId: writer.id })).json()).toMatchObject({
      status: 400,
      code: 'NOT_A_GROUP',
    });
  });
});

describe('POST /api/v1/chat/direct', () => {
  it('a verified user starts a direct message (201), a repeat answers 200 with the same conversation; only the pair (and admins) read and write', async () => {
    const [me, them] = [await verifiedResident(t, territory), await newVisitor(t, territory)];
    const res = await api.direct(me, { territoryId: T(), userId: them.id });
    expect(res.statusCode).toBe(201);
    const dm = res.json() as { id: string };
    expect(dm).toMatchObject({ kind: 'DIRECT', status: 'ACTIVE', territoryId: T(), name: null, createdByUserId: me.id });
    expect(res.headers.location).toBe(`/api/v1/chat/conversations/${dm.id}`);
    const again = await api.direct(me, { territoryId: T(), userId: them.id });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(dm.id);
    expect(await countRows(t, 'chat_conversation', "kind = 'DIRECT' and id = $1", [dm.id])).toBe(1);
    expect((await api.send(dm.id, me, { text: 'Hi' })).statusCode).toBe(201);
    // The recipient writes back even unverified: only starting one needs a verified identity.
    expect((await api.send(dm.id, them, { text: 'Hello' })).statusCode).toBe(201);
    const participants = (await api.call('GET', `/api/v1/chat/conversations/${dm.id}/participants`, them)).json() as { participants: { userId: string }[] };
    expect(participants.participants.map((p) => p.userId).sort()).toEqual([me.id, them.id].sort());
    for (const other of [await verifiedResident(t, territory), await newCurator(t, territory), await newModerator(t, territory)]) {
      expect((await api.messages(dm.id, other)).statusCode).toBe(403);
      expect((await api.send(dm.id, other, { text: 'Hi' })).statusCode).toBe(403);
    }
    const admin = await newAdmin(t);
    expect((await api.messages(dm.id, admin)).statusCode).toBe(200);
    expect((await api.call('POST', `/api/v1/chat/conversations/${dm.id}/participants`, me, { userId: admin.id })).json()).toMatchObject({
      code: 'NOT_A_GROUP',
    });
  });

  it('needs a verified initiator, the recipient’s contact visibility, and no block either way (403); nothing is written', async () => {
    const before = await countRows(t, 'chat_conversation', "kind = 'DIRECT'");
    const recipient = await newVisitor(t, territory);
    const unverified = await newResident(t, territory, { verified: true });
    expect((await api.direct(unverified, { territoryId: T(), userId: recipient.id })).json()).toMatchObject({ status: 403, code: 'IDENTITY_NOT_VERIFIED' });

    // ResidentsOnly (the default): residents of the territory only.
    const visitor = await verifiedVisitor(t, territory);
    expect((await api.direct(visitor, { territoryId: T(), userId: recipient.id })).json()).toMatchObject({ status: 403, code: 'CONTACT_NOT_ALLOWED' });
    const outsider = await newUser(t, { identity: 'Verified' });
    expect((await api.direct(outsider, { territoryId: T(), userId: recipient.id })).statusCode).toBe(403);
    // ...of a territory the recipient belongs to: a resident of another territory, messaging from there, is refused.
    const elsewhere = await newTerritory(t, { flags: CHAT_FLAGS });
    const stranger = await verifiedResident(t, elsewhere);
    expect((await api.direct(stranger, { territoryId: elsewhere.id, userId: recipient.id })).json()).toMatchObject({
      status: 403,
      code: 'CONTACT_NOT_ALLOWED',
    });
    // Private: nobody.
    const hermit = await newVisitor(t, territory);
    await contactVisibility(hermit, 'Private');
    expect((await api.direct(await verifiedResident(t, territory), { territoryId: T(), userId: hermit.id })).json()).toMatchObject({
      code: 'CONTACT_NOT_ALLOWED',
    });
    // Blocks either way.
    const [a, b] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
    await block(b, a);
    expect((await api.direct(a, { territoryId: T(), userId: b.id })).json()).toMatchObject({ status: 403, code: 'USER_BLOCKED' });
    expect((await api.direct(b, { territoryId: T(), userId: a.id })).json()).toMatchObject({ status: 403, code: 'USER_BLOCKED' });
    expect(await countRows(t, 'chat_conversation', "kind = 'DIRECT'")).toBe(before);

    // Public: anyone verified, member or not.
    const open = await newVisitor(t, territory);
    await contactVisibility(open, 'Public');
    expect((await api.direct(outsider, { territoryId: T(), userId: open.id })).statusCode).toBe(201);
  });

  it('the recipient id in upper case names the same person: the pair keeps one conversation (200 on the repeat)', async () => {
    const [me, them] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
    const started = await api.direct(me, { territoryId: T(), userId: them.id.toUpperCase() });
    expect(started.statusCode).toBe(201);
    expect(started.json()).toMatchObject({ kind: 'DIRECT', territoryId: T(), createdByUserId: me.id });
    const again = await api.direct(them, { territoryId: T(), userId: me.id.toUpperCase() });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(started.json().id);
    expect(await countRows(t, 'chat_participant', 'conversation_id = $1', [started.json().id])).toBe(2);
  });

  it('a block after the start stops the conversation (403 on send)', async () => {
    const [a, b] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
    const dm = (await api.direct(a, { territoryId: T(), userId: b.id })).json().id as string;
    await block(b, a);
    expect((await api.send(dm, a, { text: 'Still there?' })).json()).toMatchObject({ status: 403, code: 'USER_BLOCKED' });
    expect((await api.send(dm, b, { text: 'Bye' })).statusCode).toBe(403);
  });

  it('400 for bad input or oneself; 404 for an unknown user or territory; 404 CHAT_DISABLED without CHATDMENABLED; 401', async () => {
    const me = await verifiedResident(t, territory);
    for (const payload of [{}, { territoryId: T() }, { territoryId: T(), userId: 'x' }, { userId: me.id }]) {
      expect((await api.direct(me, payload)).statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect((await api.direct(me, { territoryId: T(), userId: me.id })).json()).toMatchObject({ status: 400, code: 'CANNOT_MESSAGE_SELF' });
    // The same id in upper case is still oneself (it was a 500 from the unique pair key).
    const before = await countRows(t, 'chat_conversation', "kind = 'DIRECT'");
    const upper = await api.direct(me, { territoryId: T().toUpperCase(), userId: me.id.toUpperCase() });
    expect(upper.statusCode).toBe(400);
    expect(upper.json()).toMatchObject({ status: 400, code: 'CANNOT_MESSAGE_SELF', errors: [{ field: 'userId', message: 'must be another user' }] });
    expect(await countRows(t, 'chat_conversation', "kind = 'DIRECT'")).toBe(before);
    expect((await api.direct(me, { territoryId: T(), userId: UNKNOWN_ID })).statusCode).toBe(404);
    expect((await api.direct(me, { territoryId: UNKNOWN_ID, userId: me.id })).statusCode).toBe(404);
    const noDm = await withoutFlag('CHATDMENABLED');
    const there = await verifiedResident(t, noDm);
    expect((await api.direct(there, { territoryId: noDm.id, userId: (await verifiedResident(t, noDm)).id })).json()).toMatchObject({
      status: 404,
      code: 'CHAT_DISABLED',
    });
    expect((await api.direct(null, { territoryId: T(), userId: me.id })).statusCode).toBe(401);
  });
});

describe('account deletion', () => {
  it("removes the person's participation; their messages stay in the conversations of others", async () => {
    const [leaver, other] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
    const dm = (await api.direct(leaver, { territoryId: T(), userId: other.id })).json().id as string;
    const message = (await api.send(dm, leaver, { text: 'Goodbye' })).json().id as string;
    const deleted = await t.app.inject({ method: 'DELETE', url: '/api/v1/users/me', headers: leaver.headers });
    expect(deleted.statusCode).toBe(204);
    expect(await countRows(t, 'chat_participant', 'user_id = $1', [leaver.id])).toBe(0);
    const messages = (await api.messages(dm, other)).json() as { messages: { id: string; senderUserId: string; text: string }[] };
    expect(messages.messages).toEqual([expect.objectContaining({ id: message, senderUserId: leaver.id, text: 'Goodbye' })]);
    const [user] = await t.sql<{ display_name: string }>('select display_name from app_user where id = $1', [leaver.id]);
    expect(user!.display_name).toBe('Deleted user');
  });
});
