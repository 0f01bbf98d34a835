import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTerritory, newUser } from '../factories/index.js';
import { listenLocally, readEvents } from '../factories/sse.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { CHAT_FLAGS, chatApi, verifiedResident } from './helpers.js';

/** `chat.onMessage` for apps that cannot hold a WebSocket: the same subscription as Server-Sent Events over HTTP. */
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  base = await listenLocally(t);
});
afterAll(() => t.close());

const input = (conversationId: string) => encodeURIComponent(JSON.stringify({ conversationId }));

describe('chat.onMessage over SSE', () => {
  it('streams a message sent after the stream opened, as a tracked event with the message id', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const writer = await verifiedResident(t, territory);
    const reader = await verifiedResident(t, territory);
    const chat = chatApi(t);
    const channel = await chat.channelId(territory.id, writer, 'TERRITORY_PUBLIC');
    let sentId = '';
    const { status, contentType, text } = await readEvents(
      `${base}/trpc/chat.onMessage?input=${input(channel)}`,
      reader.headers,
      (read) => read.includes('over SSE'),
      async () => {
        sentId = ((await chat.send(channel, writer, { text: 'over SSE' })).json() as { id: string }).id;
      },
    );
    expect(status).toBe(200);
    expect(contentType).toContain('text/event-stream');
    expect(text).toContain('over SSE');
    expect(text).toContain(`id: ${sentId}`);
  });

  it('without a token the stream answers UNAUTHORIZED; a non-participant of a DM FORBIDDEN', async () => {
    const territory = await newTerritory(t, { flags: CHAT_FLAGS });
    const [me, them] = [await verifiedResident(t, territory), await verifiedResident(t, territory)];
    const dm = (await chatApi(t).direct(me, { territoryId: territory.id, userId: them.id })).json().id as string;
    const anonymous = await readEvents(`${base}/trpc/chat.onMessage?input=${input(dm)}`, {}, (read) => read.includes('serialized-error'));
    expect(anonymous.text).toContain('UNAUTHORIZED');
    const stranger = await newUser(t);
    const refused = await readEvents(`${base}/trpc/chat.onMessage?input=${input(dm)}`, stranger.headers, (read) => read.includes('serialized-error'));
    expect(refused.text).toContain('FORBIDDEN');
  });
});
