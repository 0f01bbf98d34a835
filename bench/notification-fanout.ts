/**
 * Target 6 of issue 14, notification fan-out: a resident posts in a territory of 5,000 residents (smoke: 500); the
 * time from the send until the last of the others has the POST_CREATED notification row, and until the last of 500
 * of them (smoke: 50) subscribed over the tRPC WebSocket (`notifications.onNew`) has received it. Goal: 2 s for the
 * rows (the issue's); the same 2 s is applied to the WebSocket delivery.
 *
 * How a post reaches its readers (src/routers/feed/feed.service.ts `createPost`, src/routers/notifications): the
 * post's transaction writes one outbox row naming every other resident and NOTIFYs `outbox_pending`; a process
 * running the jobs hears it and sends an `outbox-dispatch` job (pg-boss, polled every 0.5 s), whose handler inserts
 * one notification per recipient in one statement, each with a `pg_notify` on `notification_created`, in the batch's
 * transaction; every API process LISTENs there and each live subscription reads its own notification and sends it.
 * The bench's API runs with the jobs off, so a worker process (`ROLE=worker`, `JOBS__ENABLED=true`) does the
 * dispatch, as deployed; it is started for this scenario only (it would dispatch, and run its schedules, beside the
 * other scenarios) and stopped after it, so the outbox rows written by later scenarios stay pending.
 *
 * Three posts one after the other (smoke: one), each measured alone (the outbox drained before each); the verdicts
 * are on the slowest. The rows are polled every 10 ms (the figures are up to that late); the database's own times
 * (post row, first and last notification row) split the wait into the job's pick-up and the insert.
 */
import { performance } from 'node:perf_hooks';
import { createTRPCClient, createWSClient, wsLink } from '@trpc/client';
import type pg from 'pg';
import WebSocket from 'ws';
import type { AppRouter } from '../src/routers/index.js';
import type { CustomScenario, CustomTarget } from './scenario.js';
import type { BenchSize, SeedStep } from './seed.js';

const WORKER = 'worker';
/** The goal of issue 14 for the last row; the WebSocket's last delivery is held to the same. */
const GOAL_MS = 2_000;
const POLL_MS = 10;
/** A post not fully delivered within this long counts as failed. */
const GIVE_UP_MS = 30_000;
/** The API admits 50 WebSockets per address (src/http/websocket-guard.ts): subscribers come from 127.0.0.2, .3... */
const SOCKETS_PER_ADDRESS = 25;

function fanoutCounts(size: BenchSize) {
  return size.mode === 'full' ? { residents: 5_000, subscribers: 500, posts: 3 } : { residents: 500, subscribers: 50, posts: 1 };
}

/** The fan-out's territory: the fifth in the md5 order (map, marketplace and chat take the first three). */
async function fanoutTerritoryId(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ id: string }>(`select id from territory where status = 'ACTIVE' order by md5(id::text) offset 4 limit 1`);
  const id = rows[0]?.id;
  if (!id) throw new Error('the notification fan-out seed needs the territories step first');
  return id;
}

/**
 * The residents (5,000 besides the author; smoke 500), geo-verified RESIDENTs of the territory and of no other (a
 * user is RESIDENT of one territory at most), with the default preferences (POST_CREATED on).
 */
export const notificationFanoutSeed: SeedStep = {
  name: 'notification fan-out',
  async run(db, size) {
    const { residents } = fanoutCounts(size);
    const territoryId = await fanoutTerritoryId(db);
    await db.query(
      `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
       select gen_random_uuid(), now(), 'Neighbour ' || i, 'bench', 'bench-fanout-resident-' || i, 'Unverified' from generate_series(0, $1::int) as i`,
      [residents],
    );
    await db.query(
      `insert into territory_membership (id, created_at_utc, territory_id, user_id, role, geo_verified_at_utc, document_verified_at_utc, capabilities)
       select gen_random_uuid(), now(), $1::uuid, id, 'RESIDENT', now(), null, '{}'::text[] from app_user where external_id like 'bench-fanout-resident-%'`,
      [territoryId],
    );
    await db.query('analyze app_user; analyze territory_membership');
    return { fanoutResidents: residents };
  },
};

/** The `ws` WebSocket, bound to a source address. */
function boundWebSocket(localAddress: string) {
  return class extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols, { localAddress });
    }
  };
}

const pendingOutbox = async (db: pg.Client) =>
  (await db.query<{ n: number }>('select count(*)::int as n from outbox_message where processed_at_utc is null')).rows[0]?.n ?? 0;

/** Polls `check` every POLL_MS until it is true or `ms` went by; answers whether it became true. */
async function until(check: () => Promise<boolean> | boolean, ms: number) {
  const end = performance.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

const round1 = (v: number) => Math.round(v * 10) / 10;

export const notificationFanoutScenario: CustomScenario = {
  name: 'notification fan-out',
  seed: notificationFanoutSeed,
  servers: [{ name: WORKER, script: 'bench/worker-server.ts', env: { ROLE: 'worker', JOBS__ENABLED: 'true' }, lazy: true }],
  async run({ apiUrl, db, size, tokenFor, log, server, stopServer }) {
    const counts = fanoutCounts(size);
    const territoryId = await fanoutTerritoryId(db);
    const { rows: people } = await db.query<{ id: string }>(
      `select id from app_user where external_id like 'bench-fanout-resident-%' order by substr(external_id, 23)::int`,
    );
    const [author, ...residents] = people.map((p) => p.id);
    if (!author || residents.length !== counts.residents) throw new Error('the notification fan-out seed did not run');
    const listeners = residents.slice(0, counts.subscribers);
    const authorToken = await tokenFor(author);
    const wsUrl = `${apiUrl.replace(/^http/, 'ws')}/trpc`;

    const sockets: Array<ReturnType<typeof createWSClient>> = [];
    const subscriptions: Array<{ unsubscribe(): void }> = [];
    /** Arrival times (performance.now) per post id, one per subscriber that received its notification. */
    const arrivals = new Map<string, number[]>();
    let failures = 0;
    try {
      log(`notification fan-out: starting a worker (ROLE=worker)`);
      await server(WORKER);
      // What earlier scenarios left in the outbox is dispatched first (a nudge, as a commit gives), so it does not
      // fall into the measurement.
      await db.query(`select pg_notify('outbox_pending', '')`);
      if (!(await until(async () => (await pendingOutbox(db)) === 0, 60_000))) throw new Error('the worker did not drain the outbox within 60 s');

      log(`notification fan-out: ${counts.residents} residents; connecting ${listeners.length} subscribers`);
      const subscribe = async (userId: string, index: number) => {
        const ws = createWSClient({
          url: wsUrl,
          WebSocket: boundWebSocket(`127.0.0.${2 + Math.floor(index / SOCKETS_PER_ADDRESS)}`) as unknown as typeof globalThis.WebSocket,
          connectionParams: { token: await tokenFor(userId) },
        });
        sockets.push(ws);
        const trpc = createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] });
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`subscriber ${index} did not start within 30 s`)), 30_000);
          const sub = trpc.notifications.onNew.subscribe(undefined, {
            onStarted: () => {
              clearTimeout(timer);
              resolve();
            },
            onData: (envelope) => {
              const at = performance.now();
              const postId = envelope.data.data.postId;
              if (typeof postId !== 'string') return;
              const list = arrivals.get(postId) ?? [];
              list.push(at);
              arrivals.set(postId, list);
            },
            onError: (error) => {
              clearTimeout(timer);
              failures++;
              reject(error);
            },
          });
          subscriptions.push(sub);
        });
      };
      // A few dozen handshakes at a time, as people open the app, not one burst.
      for (let i = 0; i < listeners.length; i += 50) await Promise.all(listeners.slice(i, i + 50).map((id, k) => subscribe(id, i + k)));

      const measured: Array<{ answeredMs: number; lastRowMs: number; firstWsMs: number; lastWsMs: number; pickUpMs: number; insertMs: number }> = [];
      for (let n = 1; n <= counts.posts; n++) {
        if (!(await until(async () => (await pendingOutbox(db)) === 0, GIVE_UP_MS))) throw new Error('the outbox did not drain between the posts');
        const sentAt = performance.now();
        const response = await fetch(`${apiUrl}/api/v1/feed`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${authorToken}` },
          body: JSON.stringify({
            territoryId,
            title: `Street party on Saturday (${n})`,
            content: 'Bring a chair and something to share.',
            visibility: 'PUBLIC',
          }),
        });
        const answeredMs = performance.now() - sentAt;
        if (response.status !== 201) {
          log(`notification fan-out: the post answered ${response.status}: ${await response.text()}`);
          failures++;
          continue;
        }
        const postId = ((await response.json()) as { id: string }).id;
        const sourceKey = `post:${postId}:created`;
        let lastRowAt = 0;
        const rowsDone = until(async () => {
          const { rows } = await db.query<{ n: number }>('select count(*)::int as n from notification where source_key = $1', [sourceKey]);
          if ((rows[0]?.n ?? 0) < counts.residents) return false;
          lastRowAt = performance.now();
          return true;
        }, GIVE_UP_MS);
        const wsDone = until(() => (arrivals.get(postId)?.length ?? 0) >= listeners.length, GIVE_UP_MS);
        const [rowsOk, wsOk] = await Promise.all([rowsDone, wsDone]);
        const got = arrivals.get(postId) ?? [];
        if (!rowsOk || !wsOk) {
          log(
            `notification fan-out: post ${n}: rows ${rowsOk ? 'all' : 'missing'}, ${got.length} of ${listeners.length} subscribers within ${GIVE_UP_MS / 1000} s`,
          );
          failures += (rowsOk ? 0 : 1) + (listeners.length - got.length);
          continue;
        }
        const { rows: times } = await db.query<{ pick_up_ms: number; insert_ms: number }>(
          `select extract(epoch from min(n.created_at_utc) - p.created_at_utc) * 1000 as pick_up_ms,
                  extract(epoch from max(n.created_at_utc) - min(n.created_at_utc)) * 1000 as insert_ms
             from post p join notification n on n.source_key = $2 where p.id = $1::uuid group by p.created_at_utc`,
          [postId, sourceKey],
        );
        measured.push({
          answeredMs: answeredMs,
          lastRowMs: lastRowAt - sentAt,
          firstWsMs: Math.min(...got) - sentAt,
          lastWsMs: Math.max(...got) - sentAt,
          pickUpMs: Number(times[0]?.pick_up_ms ?? 0),
          insertMs: Number(times[0]?.insert_ms ?? 0),
        });
        log(`notification fan-out: post ${n}: last row ${round1(lastRowAt - sentAt)} ms, last WebSocket delivery ${round1(Math.max(...got) - sentAt)} ms`);
      }

      const worst = (key: keyof (typeof measured)[number]) => round1(Math.max(0, ...measured.map((m) => m[key])));
      const lastRowMs = worst('lastRowMs');
      const lastWsMs = worst('lastWsMs');
      const targets: CustomTarget[] = [
        {
          target: `last of ${counts.residents} residents has the notification row ${lastRowMs} ms after the send (slowest of ${measured.length} posts) / goal ${GOAL_MS} ms: at most 1x`,
          ratio: Math.round((lastRowMs / GOAL_MS) * 1000) / 1000,
          holds: measured.length === counts.posts && lastRowMs <= GOAL_MS,
        },
        {
          target: `last of ${listeners.length} WebSocket subscribers receives it ${lastWsMs} ms after the send (slowest of ${measured.length} posts) / goal ${GOAL_MS} ms: at most 1x`,
          ratio: Math.round((lastWsMs / GOAL_MS) * 1000) / 1000,
          holds: measured.length === counts.posts && lastWsMs <= GOAL_MS,
        },
      ];
      return {
        figures: {
          residents: counts.residents,
          subscribers: listeners.length,
          posts: measured.length,
          postAnsweredMs: worst('answeredMs'),
          lastRowMs,
          firstWebSocketMs: worst('firstWsMs'),
          lastWebSocketMs: lastWsMs,
          dbPostToFirstRowMs: worst('pickUpMs'),
          dbFirstToLastRowMs: worst('insertMs'),
        },
        failures,
        targets,
      };
    } finally {
      for (const sub of subscriptions) sub.unsubscribe();
      await Promise.all(sockets.map((ws) => ws.close()));
      // Later scenarios run without jobs, as the others did.
      await stopServer(WORKER);
    }
  },
};
