import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConversationRow, territoryConversationsQuery } from '../../src/routers/chat/chat.queries.js';
import { newAdmin, newCurator, newModerator, newTerritory, newVisitor, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { CHAT_FLAGS, chatApi, verifiedResident } from './helpers.js';

/**
 * Groups are invite-only (DESIGN section 14): members, curators and moderators discover a territory's groups and
 * curators and moderators see a group's details, but what its messages say (the newest one's time and text, the
 * message and unread counts) is shown only to those who may read them: participants and SYSTEM_ADMIN. Others get
 * null for the time and text and 0 for the counts (the counts are non-null integers in the published schema; 0 is
 * the number of messages visible to them).
 */
let t: TestApp;
let api: ReturnType<typeof chatApi>;
beforeAll(async () => {
  t = await createTestApp();
  api = chatApi(t);
});
afterAll(() => t.close());

const SECRET = 'Secret: the door code is 4711';

/** An ACTIVE group of `owner` and `member` with two messages of the owner; its id and when the newest was sent. */
async function talkingGroup(territory: TestTerritory) {
  const [owner, member] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
  const id = (await api.createGroup(territory.id, owner, { name: 'Private circle', description: 'Invite only' })).json().id as string;
  expect((await api.groupAction(territory.id, id, 'approve', await newAdmin(t))).statusCode).toBe(200);
  expect((await api.call('POST', `/api/v1/chat/conversations/${id}/participants`, owner, { userId: member.id })).statusCode).toBe(204);
  expect((await api.send(id, owner, { text: 'Hello' })).statusCode).toBe(201);
  const last = await api.send(id, owner, { text: SECRET });
  expect(last.statusCode).toBe(201);
  return { id, owner, member, lastAt: last.json().createdAtUtc as string };
}

const summaryOf = (id: string, territoryId: string, owner: TestUser, status = 'ACTIVE') => ({
  id,
  territoryId,
  kind: 'GROUP',
  status,
  name: 'Private circle',
  description: 'Invite only',
  createdByUserId: owner.id,
  createdAtUtc: expect.any(String),
});
const withheld = { lastMessageAtUtc: null, lastMessagePreview: null, messageCount: 0, unreadCount: 0 };

async function listed(territory: TestTerritory, user: TestUser, groupId: string) {
  const res = await api.call('GET', `/api/v1/territories/${territory.id}/chat/groups`, user);
  expect(res.statusCode).toBe(200);
  return (res.json() as { groups: { id: string }[] }).groups.find((g) => g.id === groupId);
}

describe('what an invite-only group says, to whom', () => {
  it('GET .../chat/groups: members, curators and moderators who are not participants see the group without its content', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const { id, owner, member, lastAt } = await talkingGroup(territory);
    const summary = summaryOf(id, territory.id, owner);
    for (const outsider of [
      await newVisitor(t, territory),
      await verifiedResident(t, territory),
      await newCurator(t, territory),
      await newModerator(t, territory),
    ]) {
      expect((await api.messages(id, outsider)).json()).toMatchObject({ status: 403, code: 'NOT_PARTICIPANT' });
      expect(await listed(territory, outsider, id)).toEqual({ ...summary, ...withheld });
    }
    // Those who read its messages see them summarised.
    expect(await listed(territory, member, id)).toEqual({ ...summary, lastMessageAtUtc: lastAt, lastMessagePreview: SECRET, messageCount: 2, unreadCount: 2 });
    expect(await listed(territory, owner, id)).toEqual({ ...summary, lastMessageAtUtc: lastAt, lastMessagePreview: SECRET, messageCount: 2, unreadCount: 0 });
    expect(await listed(territory, await newAdmin(t), id)).toEqual({
      ...summary,
      lastMessageAtUtc: lastAt,
      lastMessagePreview: SECRET,
      messageCount: 2,
      unreadCount: 2,
    });
  });

  it('GET /api/v1/chat/conversations/{id}: a curator or moderator sees the details, not the content; participants and admins see both', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const { id, owner, member, lastAt } = await talkingGroup(territory);
    const summary = summaryOf(id, territory.id, owner);
    for (const overseer of [await newCurator(t, territory), await newModerator(t, territory)]) {
      expect((await api.messages(id, overseer)).statusCode).toBe(403);
      const res = await api.call('GET', `/api/v1/chat/conversations/${id}`, overseer);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...summary, ...withheld });
    }
    for (const [reader, unreadCount] of [
      [member, 2],
      [await newAdmin(t), 2],
    ] as const) {
      const res = await api.call('GET', `/api/v1/chat/conversations/${id}`, reader);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...summary, lastMessageAtUtc: lastAt, lastMessagePreview: SECRET, messageCount: 2, unreadCount });
    }
    // Once out of the group, its content is withheld again.
    expect((await api.call('DELETE', `/api/v1/chat/conversations/${id}/participants/${member.id}`, member)).statusCode).toBe(204);
    expect((await api.call('GET', `/api/v1/chat/conversations/${id}`, member)).statusCode).toBe(403);
    expect(await listed(territory, member, id)).toEqual({ ...summary, ...withheld });
  });

  it('a moderator locking a group gets it back without its content; a system admin with it', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const { id, owner, lastAt } = await talkingGroup(territory);
    const locked = await api.groupAction(territory.id, id, 'lock', await newModerator(t, territory));
    expect(locked.statusCode).toBe(200);
    expect(locked.json()).toEqual({ ...summaryOf(id, territory.id, owner, 'LOCKED'), ...withheld });
    const unlocked = await api.groupAction(territory.id, id, 'unlock', await newAdmin(t));
    expect(unlocked.statusCode).toBe(200);
    expect(unlocked.json()).toEqual({
      ...summaryOf(id, territory.id, owner),
      lastMessageAtUtc: lastAt,
      lastMessagePreview: SECRET,
      messageCount: 2,
      unreadCount: 2,
    });
  });

  it('the listing SQL itself leaves the content in the database for a non-reader, and orders by activity only what the viewer reads', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const { id, owner } = await talkingGroup(territory);
    const quiet = (await api.createGroup(territory.id, owner, { name: 'Quiet' })).json().id as string;
    expect((await api.groupAction(territory.id, quiet, 'approve', await newAdmin(t))).statusCode).toBe(200);
    const outsider = await newVisitor(t, territory);
    const run = (viewer: { id: string; readsUnjoined: boolean }) => {
      const query = territoryConversationsQuery(territory.id, ['GROUP'], ['ACTIVE'], { ...viewer, hiddenSenders: [] });
      return t.deps.orm.em.fork().getConnection().execute<ConversationRow[]>(query.sql, query.params);
    };
    const rows = await run({ id: outsider.id, readsUnjoined: false });
    expect(rows.map((r) => [r.id, r.last_message_at_utc, r.last_message_preview, Number(r.message_count), Number(r.unread_count)])).toEqual(
      [id, quiet].sort().map((g) => [g, null, null, 0, 0]),
    );
    // The owner reads both: the talking group first (most recent message), the quiet one after.
    expect((await run({ id: owner.id, readsUnjoined: false })).map((r) => [r.id, r.last_message_preview])).toEqual([
      [id, SECRET],
      [quiet, null],
    ]);
  });
});
