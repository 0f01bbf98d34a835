import { createTRPCClient, createWSClient, type TRPCClientError, wsLink } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { AppRouter } from '../../src/routers/index.js';
import {
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
} from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { CHAT_FLAGS, chatApi, mediaAsset, verifiedResident } from './helpers.js';

/**
 * The rules of issue 11 not covered elsewhere: the permission table of groups and direct messages for every kind of
 * caller (flags first), media ownership, and the live stream's authorisation over time (removed participant,
 * disabled group, blocked senders) and its "committed before published". Channels' table: chat.test.ts; posting
 * restrictions and prohibited words in chat: test/moderation/restrictions.test.ts.
 */
let t: TestApp;
let api: ReturnType<typeof chatApi>;
let port: number;
const clients: { close(): Promise<void> | void }[] = [];

beforeAll(async () => {
  t = await createTestApp();
  api = chatApi(t);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await t?.close();
});

type Caller = 'nonMember' | 'verifiedUser' | 'visitor' | 'resident' | 'verifiedResident' | 'curator' | 'moderator' | 'systemAdmin' | 'participant';

/** One user of each kind the spec's table names, in `territory` (the participant is added by the caller). */
async function callers(territory: TestTerritory): Promise<Record<Exclude<Caller, 'participant'>, TestUser>> {
  return {
    nonMember: await newUser(t),
    verifiedUser: await newUser(t, { identity: 'Verified' }),
    visitor: await newVisitor(t, territory),
    resident: await newResident(t, territory, { verified: true }),
    verifiedResident: await verifiedResident(t, territory),
    curator: await newCurator(t, territory),
    moderator: await newModerator(t, territory),
    systemAdmin: await newAdmin(t),
  };
}

async function activeGroup(territory: TestTerritory) {
  const owner = await verifiedResident(t, territory);
  const created = await api.createGroup(territory.id, owner, { name: 'Gardeners' });
  expect(created.statusCode).toBe(201);
  const id = (created.json() as { id: string }).id;
  expect((await api.groupAction(territory.id, id, 'approve', await newAdmin(t))).statusCode).toBe(200);
  return { owner, id };
}

async function addParticipant(conversationId: string, owner: TestUser, user: TestUser) {
  expect((await api.call('POST', `/api/v1/chat/conversations/${conversationId}/participants`, owner, { userId: user.id })).statusCode).toBe(204);
}

/** What each caller gets for reading, writing and seeing the details of the conversation. */
async function observed(conversationId: string, users: Record<string, TestUser>) {
  const result: Record<string, { read: number; write: number; view: number; participants: number }> = {};
  for (const [name, user] of Object.entries(users)) {
    const before = await countRows(t, 'chat_message', 'conversation_id = $1', [conversationId]);
    const write = (await api.send(conversationId, user, { text: `from ${name}` })).statusCode;
    if (write !== 201) expect(await countRows(t, 'chat_message', 'conversation_id = $1', [conversationId])).toBe(before);
    result[name] = {
      read: (await api.messages(conversationId, user)).statusCode,
      write,
      view: (await api.call('GET', `/api/v1/chat/conversations/${conversationId}`, user)).statusCode,
      participants: (await api.call('GET', `/api/v1/chat/conversations/${conversationId}/participants`, user)).statusCode,
    };
  }
  return result;
}

const all = (read: number, write: number, view: number) => ({ read, write, view, participants: view });

describe('permission table of groups and direct messages, for every caller', () => {
  it('GROUP: participants and system admins read and write; curators and moderators see its details; others 403', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const users = await callers(territory);
    const { owner, id } = await activeGroup(territory);
    const participant = await newVisitor(t, territory);
    await addParticipant(id, owner, participant);
    expect(await observed(id, { ...users, participant, owner })).toEqual({
      nonMember: all(403, 403, 403),
      verifiedUser: all(403, 403, 403),
      visitor: all(403, 403, 403),
      resident: all(403, 403, 403),
      verifiedResident: all(403, 403, 403),
      curator: all(403, 403, 200),
      moderator: all(403, 403, 200),
      systemAdmin: all(200, 201, 200),
      participant: all(200, 201, 200),
      owner: all(200, 201, 200),
    });
  });

  it('DIRECT: only its two participants and system admins; others 403, curators and moderators included', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const users = await callers(territory);
    const [me, them] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
    const dm = (await api.direct(me, { territoryId: territory.id, userId: them.id })).json().id as string;
    expect(await observed(dm, { ...users, me, them })).toEqual({
      nonMember: all(403, 403, 403),
      verifiedUser: all(403, 403, 403),
      visitor: all(403, 403, 403),
      resident: all(403, 403, 403),
      verifiedResident: all(403, 403, 403),
      curator: all(403, 403, 403),
      moderator: all(403, 403, 403),
      systemAdmin: all(200, 201, 200),
      me: all(200, 201, 200),
      them: all(200, 201, 200),
    });
  });

  it('flags come first: with CHATENABLED or the kind’s flag off every caller gets 404 CHAT_DISABLED', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const users = await callers(territory);
    const { owner, id: group } = await activeGroup(territory);
    const [me, them] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
    const dm = (await api.direct(me, { territoryId: territory.id, userId: them.id })).json().id as string;
    const everyone = { ...users, owner, me };
    for (const [off, conversations] of [
      ['CHATENABLED', [group, dm]],
      ['CHATGROUPS', [group]],
      ['CHATDMENABLED', [dm]],
    ] as const) {
      await t.sql('update territory set enabled_flags = $2 where id = $1', [territory.id, CHAT_FLAGS.filter((f) => f !== off)]);
      for (const conversationId of conversations) {
        for (const [name, user] of Object.entries(everyone)) {
          for (const res of [
            await api.messages(conversationId, user),
            await api.send(conversationId, user, { text: 'x' }),
            await api.call('GET', `/api/v1/chat/conversations/${conversationId}`, user),
          ]) {
            expect([off, name, res.statusCode, res.json().code]).toEqual([off, name, 404, 'CHAT_DISABLED']);
          }
        }
      }
    }
    expect(await countRows(t, 'chat_message', 'conversation_id = any($1::uuid[])', [[group, dm]])).toBe(0);
  });
});

describe('media of a message', () => {
  it('must belong to the sender: 400 MEDIA_NOT_OWNED, nothing written', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const [me, them] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
    const dm = (await api.direct(me, { territoryId: territory.id, userId: them.id })).json().id as string;
    const theirs = await mediaAsset(t, them, { mediaType: 'IMAGE', mimeType: 'image/png' });
    const before = await countRows(t, 'chat_message');
    const res = await api.send(dm, me, { text: 'look', mediaId: theirs });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'MEDIA_NOT_OWNED' });
    expect(await countRows(t, 'chat_message')).toBe(before);
    expect(await countRows(t, 'media_attachment', 'media_asset_id = $1', [theirs])).toBe(0);
  });
});

// ---- the live stream over time

interface Live {
  received: { id: string; text: string; senderUserId: string }[];
  error: Promise<TRPCClientError<AppRouter>>;
  unsubscribe(): void;
}

function subscribe(user: TestUser, conversationId: string, onData?: (message: { id: string }) => void): Promise<Live> {
  const ws = createWSClient({
    url: `ws://127.0.0.1:${port}/trpc`,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: { token: user.token },
  });
  clients.push(ws);
  const trpc = createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] });
  const received: Live['received'] = [];
  let failed!: (error: TRPCClientError<AppRouter>) => void;
  const error = new Promise<TRPCClientError<AppRouter>>((resolve) => (failed = resolve));
  return new Promise((resolve, reject) => {
    let started = false;
    const sub = trpc.chat.onMessage.subscribe(
      { conversationId },
      {
        onStarted: () => {
          started = true;
          resolve({ received, error, unsubscribe: () => sub.unsubscribe() });
        },
        onData: (envelope) => {
          received.push(envelope.data as Live['received'][number]);
          onData?.(envelope.data as { id: string });
        },
        onError: (e) => {
          if (started) failed(e as TRPCClientError<AppRouter>);
          else reject(e);
        },
      },
    );
  });
}

describe('chat.onMessage over time', () => {
  it('a participant removed from a group loses the stream at once (FORBIDDEN), the others keep theirs', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const { owner, id } = await activeGroup(territory);
    const [leaving, staying] = [await newVisitor(t, territory), await newVisitor(t, territory)];
    await addParticipant(id, owner, leaving);
    await addParticipant(id, owner, staying);
    const gone = await subscribe(leaving, id);
    const kept = await subscribe(staying, id);
    expect((await api.send(id, owner, { text: 'before' })).statusCode).toBe(201);
    await expect.poll(() => gone.received.map((m) => m.text), { timeout: 15_000 }).toEqual(['before']);

    expect((await api.call('DELETE', `/api/v1/chat/conversations/${id}/participants/${leaving.id}`, owner)).statusCode).toBe(204);
    // No new message is needed: the removal itself ends the stream.
    expect((await gone.error).data?.code).toBe('FORBIDDEN');
    expect((await api.send(id, owner, { text: 'after' })).statusCode).toBe(201);
    await expect.poll(() => kept.received.map((m) => m.text), { timeout: 15_000 }).toEqual(['before', 'after']);
    expect(gone.received.map((m) => m.text)).toEqual(['before']);
    kept.unsubscribe();
  });

  it('disabling a group ends its streams (CONFLICT); a disabled group cannot be subscribed to', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const { owner, id } = await activeGroup(territory);
    const live = await subscribe(owner, id);
    expect((await api.groupAction(territory.id, id, 'disable', await newModerator(t, territory))).statusCode).toBe(200);
    const ended = await live.error;
    expect([ended.data?.code, ended.data?.problemCode]).toEqual(['CONFLICT', 'CONVERSATION_NOT_ACTIVE']);
    const refused = await subscribe(owner, id).catch((e: TRPCClientError<AppRouter>) => e);
    expect((refused as TRPCClientError<AppRouter>).data?.code).toBe('CONFLICT');
  });

  it('a conversation id in upper case subscribes to the same conversation and receives its messages', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const { owner, id } = await activeGroup(territory);
    const live = await subscribe(owner, id.toUpperCase());
    expect((await api.send(id, owner, { text: 'heard' })).statusCode).toBe(201);
    await expect.poll(() => live.received.map((m) => m.text), { timeout: 15_000 }).toEqual(['heard']);
    live.unsubscribe();
  });

  it('leaves out the messages of senders the subscriber blocked', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const [reader, blocked, other] = [await newVisitor(t, territory), await verifiedResident(t, territory), await verifiedResident(t, territory)];
    const channel = await api.channelId(territory.id, other, 'TERRITORY_PUBLIC');
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/users/${blocked.id}/block`, headers: reader.headers })).statusCode).toBe(204);
    const live = await subscribe(reader, channel);
    await api.send(channel, blocked, { text: 'hidden' });
    await api.send(channel, other, { text: 'shown' });
    await expect.poll(() => live.received.map((m) => m.text), { timeout: 15_000 }).toEqual(['shown']);
    live.unsubscribe();
  });

  it('a message is committed before it is published: at receipt, another connection already reads it', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const writer = await verifiedResident(t, territory);
    const channel = await api.channelId(territory.id, writer, 'TERRITORY_PUBLIC');
    const checks: Promise<number>[] = [];
    const live = await subscribe(writer, channel, (m) => checks.push(countRows(t, 'chat_message', 'id = $1', [m.id])));
    await Promise.all([1, 2, 3, 4, 5].map((n) => api.send(channel, writer, { text: `m${n}` })));
    await expect.poll(() => live.received.length, { timeout: 15_000 }).toBe(5);
    expect(await Promise.all(checks)).toEqual([1, 1, 1, 1, 1]);
    live.unsubscribe();
  });
});
