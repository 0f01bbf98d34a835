/**
 * Subscribes to the messages of a chat conversation with the typed tRPC client and prints each new one as it
 * arrives (over one WebSocket; after a disconnect the SDK reconnects and resumes after the last message received).
 *
 *   API_URL=http://localhost:3000 node --conditions=source --import tsx client-sdk/examples/chat-messages.ts
 *
 * (from the repository root). In a project that installed the SDK: `API_URL=... node chat-messages.ts`.
 *
 * Without settings it logs in as the demo visitor and listens to the public channel of the first territory where the
 * visitor can open one (Vila Madalena in the demo data). Optional: `TOKEN` (an access token to use instead),
 * `CONVERSATION_ID` (the conversation to listen to), `COUNT` (stop after that many messages; default: until Ctrl-C).
 */
import { createTerritoryClient, type RouterOutputs, TRPCClientError } from '@territory-platform/client-sdk';
import { createRestClient } from '@territory-platform/client-sdk/rest';

type Message = RouterOutputs['chat']['messages']['messages'][number];

const apiUrl = (process.env.API_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const count = process.env.COUNT ? Number(process.env.COUNT) : Infinity;

/** The demo provider is accepted outside production (see the API's startup banner). */
async function token(): Promise<string> {
  if (process.env.TOKEN) return process.env.TOKEN;
  const { data, error, response } = await createRestClient({ baseUrl: apiUrl }).POST('/api/v1/auth/social', {
    body: { authProvider: 'demo', externalId: 'visitor', displayName: 'Demo Visitor' },
  });
  if (error) throw new Error(`login failed: ${response.status} ${error.detail}`);
  if (!('token' in data)) throw new Error('login needs a two-factor code');
  return data.token;
}

/** The public channel of the first territory whose chat the caller may open (403/404 elsewhere). */
async function findChannel(client: ReturnType<typeof createTerritoryClient>): Promise<string> {
  for (const territory of await client.territories.list.query({ take: 100 })) {
    try {
      const { channels } = await client.chat.channels.query({ territoryId: territory.id });
      const open = channels.find((c) => c.kind === 'TERRITORY_PUBLIC');
      if (open) {
        console.log(`territory ${territory.name}: ${open.name}`);
        return open.id;
      }
    } catch (error) {
      if (!(error instanceof TRPCClientError)) throw error;
    }
  }
  throw new Error('no territory with a chat channel this user can open');
}

const line = (m: Message) => `[${m.createdAtUtc}] ${m.senderUserId}: ${m.text}${m.media ? ` (${m.media.mediaType} ${m.media.url})` : ''}`;

async function main() {
  // The socket closes soon after the last subscription ends, so the script can exit.
  const client = createTerritoryClient({ url: apiUrl, token: await token(), wsIdleCloseMs: 100 });
  const conversationId = process.env.CONVERSATION_ID ?? (await findChannel(client));

  let received = 0;
  await new Promise<void>((resolve, reject) => {
    const subscription = client.chat.onMessage.subscribe(
      { conversationId },
      {
        onStarted: () => console.log(`listening to ${conversationId}`),
        // Each message comes as `{id, data}`: `id` is what the SDK resumes after when it reconnects.
        onData: ({ data }) => {
          console.log(line(data));
          if (++received >= count) {
            subscription.unsubscribe();
            resolve();
          }
        },
        onError: (error) => reject(error),
      },
    );
    process.once('SIGINT', () => {
      subscription.unsubscribe();
      resolve();
    });
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
