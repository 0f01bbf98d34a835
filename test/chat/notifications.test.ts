import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/platform/clock.js';
import { dispatchOutbox } from '../../src/routers/notifications/outbox-dispatch.job.js';
import { countRows, newCurator, newTerritory, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { CHAT_FLAGS, chatApi, verifiedResident } from './helpers.js';

let t: TestApp;
let api: ReturnType<typeof chatApi>;
let territory: TestTerritory;
beforeAll(async () => {
  t = await createTestApp();
  api = chatApi(t);
  territory = await newTerritory(t, { flags: CHAT_FLAGS });
});
afterAll(() => t.close());
afterEach(() => vi.restoreAllMocks());

interface OutboxRow {
  type: string;
  recipient_user_ids: string[];
  title: string;
  body: string;
  data: Record<string, unknown>;
}

const outboxOf = (sourceKey: string) =>
  t.sql<OutboxRow>('select type, recipient_user_ids, title, body, data from outbox_message where source_key = $1', [sourceKey]);

/** The user's notifications of a type, once the outbox row of `sourceKey` is dispatched (here or by the app's job). */
async function delivered(user: TestUser, type: string, sourceKey: string) {
  await expect
    .poll(
      async () => {
        await dispatchOutbox(t.deps.orm.em.fork() as EntityManager);
        return countRows(t, 'outbox_message', 'source_key = $1 and processed_at_utc is null', [sourceKey]);
      },
      { timeout: 15_000 },
    )
    .toBe(0);
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/notifications?take=100', headers: user.headers });
  expect(res.statusCode).toBe(200);
  return (res.json() as { type: string; title: string; body: string; data: Record<string, unknown> }[]).filter((n) => n.type === type);
}

async function directPair() {
  const [me, them] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
  const started = await api.direct(me, { territoryId: territory.id, userId: them.id });
  expect(started.statusCode).toBe(201);
  return { me, them, dm: (started.json() as { id: string }).id };
}

async function sendText(conversationId: string, user: TestUser, text: string) {
  const res = await api.send(conversationId, user, { text });
  expect(res.statusCode).toBe(201);
  return (res.json() as { id: string }).id;
}

describe('chat notifications (through the outbox)', () => {
  it('a direct message notifies its recipient (CHAT_DIRECT_MESSAGE_RECEIVED), not its sender', async () => {
    const { me, them, dm } = await directPair();
    const messageId = await sendText(dm, me, 'Are you coming to the meeting?');
    const sourceKey = `chat-message:${messageId}:received`;
    expect(await outboxOf(sourceKey)).toEqual([
      {
        type: 'CHAT_DIRECT_MESSAGE_RECEIVED',
        recipient_user_ids: [them.id],
        title: `New message from ${me.displayName}`,
        body: 'Are you coming to the meeting?',
        data: { territoryId: territory.id, conversationId: dm, messageId },
      },
    ]);
    const [notification] = await delivered(them, 'CHAT_DIRECT_MESSAGE_RECEIVED', sourceKey);
    expect(notification).toMatchObject({ title: `New message from ${me.displayName}`, data: { conversationId: dm, messageId } });
    expect(await delivered(me, 'CHAT_DIRECT_MESSAGE_RECEIVED', sourceKey)).toEqual([]);
  });

  it('messages in channels and groups notify nobody', async () => {
    const writer = await verifiedResident(t, territory);
    const channel = await api.channelId(territory.id, writer, 'TERRITORY_PUBLIC');
    const messageId = await sendText(channel, writer, 'Hello everyone');
    expect(await outboxOf(`chat-message:${messageId}:received`)).toEqual([]);
  });

  it("honours the recipient's notification preference", async () => {
    const { me, them, dm } = await directPair();
    const off = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/users/me/preferences/notifications',
      headers: them.headers,
      payload: { CHAT_DIRECT_MESSAGE_RECEIVED: false },
    });
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ notifications: { CHAT_DIRECT_MESSAGE_RECEIVED: false, CHAT_GROUP_INVITATION_RECEIVED: true } });
    const messageId = await sendText(dm, me, 'Quiet please');
    expect(await delivered(them, 'CHAT_DIRECT_MESSAGE_RECEIVED', `chat-message:${messageId}:received`)).toEqual([]);
  });

  it('a muted conversation does not notify until its mute has passed (mutedUntilUtc)', async () => {
    const { me, them, dm } = await directPair();
    const now = Date.now();
    const until = new Date(now + 60 * 60_000);
    await t.sql('update chat_participant set muted_until_utc = $3 where conversation_id = $1 and user_id = $2', [dm, them.id, until]);
    const participants = await api.call('GET', `/api/v1/chat/conversations/${dm}/participants`, them);
    expect((participants.json() as { participants: { userId: string; mutedUntilUtc: string | null }[] }).participants).toContainEqual(
      expect.objectContaining({ userId: them.id, mutedUntilUtc: until.toISOString() }),
    );

    const whileMuted = await sendText(dm, me, 'muted');
    expect(await outboxOf(`chat-message:${whileMuted}:received`)).toEqual([]);
    // The other side's mute is theirs: the recipient answering still notifies the sender.
    const answer = await sendText(dm, them, 'answer');
    expect((await outboxOf(`chat-message:${answer}:received`)).map((r) => r.recipient_user_ids)).toEqual([[me.id]]);

    // An hour and a minute later (the server's clock), the mute is over.
    vi.spyOn(clock, 'now').mockImplementation(() => new Date(now + 61 * 60_000));
    const afterMute = await sendText(dm, me, 'not muted any more');
    expect((await outboxOf(`chat-message:${afterMute}:received`)).map((r) => r.recipient_user_ids)).toEqual([[them.id]]);
    expect(await delivered(them, 'CHAT_DIRECT_MESSAGE_RECEIVED', `chat-message:${afterMute}:received`)).toHaveLength(1);
  });

  it('an invitation to a group notifies the invitee once (CHAT_GROUP_INVITATION_RECEIVED)', async () => {
    const owner = await verifiedResident(t, territory);
    const created = await api.createGroup(territory.id, owner, { name: 'Compost club' });
    const groupId = (created.json() as { id: string }).id;
    const invitee = await verifiedResident(t, territory);
    const invite = () => api.call('POST', `/api/v1/chat/conversations/${groupId}/participants`, owner, { userId: invitee.id });
    expect((await invite()).statusCode).toBe(204);
    expect((await invite()).statusCode).toBe(204);
    const rows = await t.sql<OutboxRow & { source_key: string }>(
      `select type, recipient_user_ids, title, body, data, source_key from outbox_message where type = 'CHAT_GROUP_INVITATION_RECEIVED' and data->>'conversationId' = $1`,
      [groupId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      recipient_user_ids: [invitee.id],
      title: 'You were added to the chat group Compost club',
      data: { territoryId: territory.id, conversationId: groupId },
    });
    const [notification] = await delivered(invitee, 'CHAT_GROUP_INVITATION_RECEIVED', rows[0]!.source_key);
    expect(notification).toMatchObject({ data: { conversationId: groupId } });
  });

  it("a new group waiting for approval notifies the territory's curators (CHAT_GROUP_PENDING_APPROVAL)", async () => {
    const place = await newTerritory(t, { flags: CHAT_FLAGS });
    const [curatorA, curatorB] = [await newCurator(t, place), await newCurator(t, place)];
    const creator = await verifiedResident(t, place);
    const created = await api.createGroup(place.id, creator, { name: 'Night walks' });
    expect(created.statusCode).toBe(201);
    const groupId = (created.json() as { id: string }).id;
    const sourceKey = `chat-group:${groupId}:pending-approval`;
    const [row] = await outboxOf(sourceKey);
    expect(row).toMatchObject({
      type: 'CHAT_GROUP_PENDING_APPROVAL',
      title: 'Chat group waiting for approval: Night walks',
      data: { territoryId: place.id, conversationId: groupId },
    });
    expect([...row!.recipient_user_ids].sort()).toEqual([curatorA.id, curatorB.id].sort());
    expect(await delivered(curatorA, 'CHAT_GROUP_PENDING_APPROVAL', sourceKey)).toHaveLength(1);
    expect(await delivered(creator, 'CHAT_GROUP_PENDING_APPROVAL', sourceKey)).toEqual([]);
  });

  it('a refused message or group writes no outbox row', async () => {
    const { me, dm } = await directPair();
    const before = await countRows(t, 'outbox_message');
    expect((await api.send(dm, me, { text: '' })).statusCode).toBe(400);
    expect((await api.createGroup(territory.id, me, { name: '' })).statusCode).toBe(400);
    expect(await countRows(t, 'outbox_message')).toBe(before);
  });
});
