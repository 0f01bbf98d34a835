/**
 * The chat scenarios and their seed, listed in scenarios.ts:
 * - chat history, first page and deep page: `GET /api/v1/chat/conversations/{id}/messages` on a channel of ~100k
 *   messages, newest page and pages by a cursor far back in the history, against a bare route doing the same work with
 *   `pg` as src/routers/chat/chat.service.ts `listMessages`: the conversation and territory access reads (the latter
 *   names whom the caller blocked), the cursor's sequence number, then `messagesBeforeQuery` of chat.queries.ts;
 * - chat fan-out: 1000 subscribers (smoke: 50) of that channel over the tRPC WebSocket, each its own user and
 *   connection; a resident sends messages one after the other through the REST API and the time from the send to
 *   the first and to the last delivery is measured per message. No baseline: it is the live path's own figure.
 */
import { performance } from 'node:perf_hooks';
import { createTRPCClient, createWSClient, wsLink } from '@trpc/client';
import type pg from 'pg';
import WebSocket from 'ws';
import { runOnPoolAs, runPreparedOnPool } from '../src/db/sql.js';
import { type TerritoryAccessRow, territoryAccessQuery } from '../src/policy/access.queries.js';
import {
  type ConversationAccessRow,
  conversationAccessQuery,
  isNamedMessagePage,
  type MessageRow,
  messageSeqQuery,
  messagesBeforeQuery,
} from '../src/routers/chat/chat.queries.js';
import type { AppRouter } from '../src/routers/index.js';
import { HOT_READ, type CustomScenario, type Scenario } from './scenario.js';
import { type BenchSize, type SeedStep, benchViewerId } from './seed.js';

/** Residents who wrote the history (and one of whom sends during the fan-out). */
const CHATTERS = 20;
const PAGE = 50;
/**
 * Subscribers per source address: the API admits 50 WebSockets per client address (src/http/websocket-guard.ts), so
 * the subscribers connect from 127.0.0.2, 127.0.0.3... (all loopback on Linux), as many people would from theirs.
 */
const SOCKETS_PER_ADDRESS = 25;
/** How long one subscription may take to start before the run counts it failed. */
const SUBSCRIBE_TIMEOUT_MS = 30_000;

/** The `ws` WebSocket, bound to a source address. */
function boundWebSocket(localAddress: string) {
  return class extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols, { localAddress });
    }
  };
}

function chatCounts(size: BenchSize) {
  return size.mode === 'full' ? { messages: 100_000, listeners: 1_000, sends: 30 } : { messages: 5_000, listeners: 50, sends: 5 };
}

/** The chat's territory: the third in the md5 order (the map takes the first, the marketplace the second). */
async function chatTerritoryId(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ id: string }>(`select id from territory where status = 'ACTIVE' order by md5(id::text) offset 2 limit 1`);
  const id = rows[0]?.id;
  if (!id) throw new Error('the chat seed needs the territories step first');
  return id;
}

async function channelId(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ id: string }>(`select id from chat_conversation where territory_id = $1::uuid and kind = 'TERRITORY_PUBLIC'`, [
    await chatTerritoryId(db),
  ]);
  if (!rows[0]) throw new Error('the chat seed did not run');
  return rows[0].id;
}

/**
 * The territory's public channel with ~100k messages (smoke: 5k), one every ten seconds up to now, written by twenty
 * identity-verified residents; the listeners (VISITOR members) and the bench user (a VISITOR too) may read it.
 * Runs after the territories step and after the bench user exists.
 */
export const chatSeed: SeedStep = {
  name: 'chat',
  async run(db, size) {
    const counts = chatCounts(size);
    const territoryId = await chatTerritoryId(db);
    await db.query(`update territory set enabled_flags = enabled_flags || array['CHATENABLED', 'CHATTERITORYPUBLICCHANNEL'] where id = $1`, [territoryId]);
    await db.query(
      `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
       select gen_random_uuid(), now(), 'Chatter ' || i, 'bench', 'bench-chatter-' || i, 'Verified' from generate_series(1, $1::int) as i
       union all
       select gen_random_uuid(), now(), 'Listener ' || i, 'bench', 'bench-listener-' || i, 'Unverified' from generate_series(1, $2::int) as i`,
      [CHATTERS, counts.listeners],
    );
    await db.query(
      `insert into territory_membership (id, created_at_utc, territory_id, user_id, role, capabilities, geo_verified_at_utc, document_verified_at_utc)
       select gen_random_uuid(), now(), $1::uuid, id,
              case when external_id like 'bench-chatter-%' then 'RESIDENT' else 'VISITOR' end, '{}',
              case when external_id like 'bench-chatter-%' then now() end, null
         from app_user
        where external_id like 'bench-chatter-%' or external_id like 'bench-listener-%' or (auth_provider = 'bench' and external_id = 'bench-user')`,
      [territoryId],
    );
    await db.query(
      `insert into chat_conversation (id, created_at_utc, territory_id, kind, status, name, description, created_by_user_id, direct_key, last_seq,
                                      last_message_at_utc, last_message_preview, updated_at_utc)
       values (gen_random_uuid(), now() - make_interval(secs => $2::int * 10 + 60), $1::uuid, 'TERRITORY_PUBLIC', 'ACTIVE', null, null, null, null, $2::int,
               now(), 'Message ' || $2::int, now())`,
      [territoryId, counts.messages],
    );
    await db.query(
      `insert into chat_message (id, created_at_utc, conversation_id, seq, sender_user_id, text, media_id)
       select gen_random_uuid(), now() - make_interval(secs => ($2::int - g.i) * 10), c.id, g.i, u.ids[1 + g.i % ${CHATTERS}],
              'Message ' || g.i || ': ' || repeat('news from the street ', 1 + g.i % 5), null
         from generate_series(1, $2::int) as g(i),
              (select id from chat_conversation where territory_id = $1::uuid and kind = 'TERRITORY_PUBLIC') c,
              (select array_agg(id order by external_id) as ids from app_user where external_id like 'bench-chatter-%') u`,
      [territoryId, counts.messages],
    );
    // The listeners have the chat open, so their read markers are at the newest message (an open chat marks it read):
    // the unread count each live read computes stays small. Without a marker it counts the whole history.
    await db.query(
      `insert into chat_participant (conversation_id, user_id, role, joined_at_utc, last_read_message_id, last_read_seq, last_read_at_utc)
       select c.id, u.id, 'MEMBER', now(), m.id, c.last_seq, now()
         from chat_conversation c
         join chat_message m on m.conversation_id = c.id and m.seq = c.last_seq
         cross join app_user u
        where c.territory_id = $1::uuid and c.kind = 'TERRITORY_PUBLIC' and u.external_id like 'bench-listener-%'`,
      [territoryId],
    );
    await db.query('analyze chat_conversation; analyze chat_message; analyze territory_membership; analyze chat_participant');
    return { chatMessages: counts.messages, chatListeners: counts.listeners };
  },
};

const messageJson = (r: MessageRow) => ({
  id: r.id,
  conversationId: r.conversation_id,
  senderUserId: r.sender_user_id,
  text: r.text,
  media: null,
  createdAtUtc: r.created_at_utc,
});

const qs = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** The bare `listMessages` of a public channel read by a member. */
const historyBaseline: Scenario['baseline']['handler'] = async (pool, request, reply) => {
  const { id } = request.params as { id: string };
  const q = request.query as Record<string, string | undefined>;
  const viewer = await benchViewerId(pool);
  const [conv] = await runPreparedOnPool<ConversationAccessRow>(pool, conversationAccessQuery(id, viewer));
  if (!conv) return reply.code(404).send({ status: 404 });
  const [access] = await runPreparedOnPool<TerritoryAccessRow>(pool, territoryAccessQuery(conv.territory_id, viewer, null));
  const flags = access?.enabled_flags ?? [];
  if (access?.status !== 'ACTIVE' || !flags.includes('CHATENABLED') || !flags.includes('CHATTERITORYPUBLICCHANNEL') || !access.role) {
    return reply.code(404).send({ status: 404 });
  }
  let beforeSeq: number | null = null;
  if (q.beforeMessageId) {
    const [row] = await runPreparedOnPool<{ seq: number }>(pool, messageSeqQuery(conv.id, q.beforeMessageId));
    if (!row) return reply.code(400).send({ status: 400 });
    beforeSeq = Number(row.seq);
  }
  const limit = Number(q.limit ?? PAGE);
  const query = messagesBeforeQuery(conv.id, beforeSeq, access.blocked_user_ids ?? [], limit + 1);
  const rows = await runOnPoolAs<MessageRow>(pool, query, { prepared: isNamedMessagePage(limit + 1) });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    conversationId: conv.id,
    messages: page.map(messageJson),
    nextCursor: rows.length > limit && last ? { beforeCreatedAtUtc: last.created_at_utc, beforeMessageId: last.id } : null,
  };
};

export const chatHistoryFirstPageScenario: Scenario = {
  name: 'chat history, first page',
  targets: [HOT_READ],
  seed: chatSeed,
  authenticated: true,
  async requests({ db, random, count }) {
    const id = await channelId(db);
    // The newest page, as an opened chat asks for it (page sizes vary, so the URLs do).
    return Array.from({ length: count }, () => {
      const query = qs({ limit: PAGE - Math.floor(random() * 10) });
      return { api: `/api/v1/chat/conversations/${id}/messages?${query}`, baseline: `/baseline/chat/first/${id}/messages?${query}` };
    });
  },
  baseline: { path: '/baseline/chat/first/:id/messages', handler: historyBaseline },
};

export const chatHistoryDeepPageScenario: Scenario = {
  name: 'chat history, deep page',
  targets: [HOT_READ],
  seed: chatSeed,
  authenticated: true,
  async requests({ db, random, count }) {
    const id = await channelId(db);
    // Cursors in the oldest tenth of the history: someone scrolled back a long way (the cursor as nextCursor gives it).
    const { rows: conv } = await db.query<{ last_seq: number }>('select last_seq from chat_conversation where id = $1', [id]);
    const oldest = Math.max(PAGE + 1, Math.floor(Number(conv[0]?.last_seq ?? 0) / 10));
    const seqs = Array.from({ length: count }, () => PAGE + 1 + Math.floor(random() * (oldest - PAGE)));
    const { rows } = await db.query<{ seq: number; id: string; created_at_utc: Date }>(
      'select seq, id, created_at_utc from chat_message where conversation_id = $1 and seq = any($2::int[])',
      [id, seqs],
    );
    const bySeq = new Map(rows.map((r) => [Number(r.seq), r]));
    return seqs.map((seq) => {
      const cursor = bySeq.get(seq)!;
      const query = qs({ beforeCreatedAtUtc: cursor.created_at_utc.toISOString(), beforeMessageId: cursor.id, limit: PAGE });
      return { api: `/api/v1/chat/conversations/${id}/messages?${query}`, baseline: `/baseline/chat/deep/${id}/messages?${query}` };
    });
  },
  baseline: { path: '/baseline/chat/deep/:id/messages', handler: historyBaseline },
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
const round1 = (v: number) => Math.round(v * 10) / 10;

export const chatFanoutScenario: CustomScenario = {
  name: 'chat fan-out (WebSocket)',
  seed: chatSeed,
  async run({ apiUrl, db, size, tokenFor, log }) {
    const counts = chatCounts(size);
    const conversationId = await channelId(db);
    const { rows: listeners } = await db.query<{ id: string }>(`select id from app_user where external_id like 'bench-listener-%' order by external_id`);
    const { rows: writers } = await db.query<{ id: string }>(`select id from app_user where external_id = 'bench-chatter-1'`);
    const writerToken = await tokenFor(writers[0]!.id);
    const wsUrl = `${apiUrl.replace(/^http/, 'ws')}/trpc`;

    /** Arrival times (performance.now) per message id, one entry per subscriber that received it. */
    const arrivals = new Map<string, number[]>();
    const waiters = new Map<string, () => void>();
    const sockets: Array<ReturnType<typeof createWSClient>> = [];
    const subscriptions: Array<{ unsubscribe(): void }> = [];
    let errors = 0;
    const subscribe = async (userId: string, index: number) => {
      const ws = createWSClient({
        url: wsUrl,
        WebSocket: boundWebSocket(`127.0.0.${2 + Math.floor(index / SOCKETS_PER_ADDRESS)}`) as unknown as typeof globalThis.WebSocket,
        connectionParams: { token: await tokenFor(userId) },
      });
      sockets.push(ws);
      const trpc = createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] });
      await new Promise<void>((resolve, reject) => {
        // A refused socket is retried by the client without end: a subscription that does not start in time failed.
        const timer = setTimeout(() => reject(new Error(`subscriber ${index} did not start within ${SUBSCRIBE_TIMEOUT_MS} ms`)), SUBSCRIBE_TIMEOUT_MS);
        const sub = trpc.chat.onMessage.subscribe(
          { conversationId },
          {
            onStarted: () => {
              clearTimeout(timer);
              resolve();
            },
            onData: (envelope) => {
              const at = performance.now();
              const list = arrivals.get(envelope.id) ?? [];
              list.push(at);
              arrivals.set(envelope.id, list);
              if (list.length === listeners.length) waiters.get(envelope.id)?.();
            },
            onError: (error) => {
              clearTimeout(timer);
              errors++;
              reject(error);
            },
          },
        );
        subscriptions.push(sub);
      });
    };

    try {
      log(`chat fan-out: connecting ${listeners.length} subscribers`);
      // A few dozen handshakes at a time, as clients arrive, not one burst of a thousand.
      for (let i = 0; i < listeners.length; i += 50) await Promise.all(listeners.slice(i, i + 50).map((l, k) => subscribe(l.id, i + k)));
      log(`chat fan-out: ${listeners.length} subscribed; sending ${counts.sends} messages`);

      const firsts: number[] = [];
      const lasts: number[] = [];
      let missing = 0;
      for (let n = 1; n <= counts.sends; n++) {
        const sentAt = performance.now();
        const response = await fetch(`${apiUrl}/api/v1/chat/conversations/${conversationId}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${writerToken}` },
          body: JSON.stringify({ text: `Fan-out message ${n}` }),
        });
        if (response.status !== 201) {
          errors++;
          continue;
        }
        const { id } = (await response.json()) as { id: string };
        // Every subscriber has it (maybe already, before the answer came back), or 30 s went by.
        await new Promise<void>((resolve) => {
          if ((arrivals.get(id)?.length ?? 0) >= listeners.length) return resolve();
          const timer = setTimeout(resolve, 30_000);
          waiters.set(id, () => {
            clearTimeout(timer);
            resolve();
          });
        });
        waiters.delete(id);
        const got = arrivals.get(id) ?? [];
        missing += listeners.length - got.length;
        if (got.length < listeners.length) {
          // The fan-out cannot keep up: the messages not sent count as undelivered too, and the run ends here.
          log(`chat fan-out: message ${n} reached ${got.length} of ${listeners.length} subscribers within 30 s; stopping`);
          missing += (counts.sends - n) * listeners.length;
          break;
        }
        if (got.length > 0) {
          firsts.push(Math.min(...got) - sentAt);
          lasts.push(Math.max(...got) - sentAt);
        }
      }
      firsts.sort((a, b) => a - b);
      lasts.sort((a, b) => a - b);
      return {
        figures: {
          subscribers: listeners.length,
          messages: counts.sends,
          firstDeliveryP50Ms: round1(percentile(firsts, 50)),
          lastDeliveryP50Ms: round1(percentile(lasts, 50)),
          lastDeliveryP99Ms: round1(percentile(lasts, 99)),
        },
        failures: errors + missing,
      };
    } finally {
      for (const sub of subscriptions) sub.unsubscribe();
      await Promise.all(sockets.map((ws) => ws.close()));
    }
  },
};
