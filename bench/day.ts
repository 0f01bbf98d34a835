/**
 * Target 5 of issue 14, "a day in the territory": a mixed load of 50 connections for 30 s (smoke: 2 s) on the
 * bench data: 80 % reads spread evenly over the hot reads (the table's own request lists: territory by id, nearby,
 * search, events nearby, map pins, feed page, item search, chat history), 15 % writes (posts, likes, comments, event
 * participation, join requests: 3 % each) and 5 % uploads of a small PNG (a real multipart body to
 * `POST /api/v1/media/upload`). Reports throughput, p50/p99 per kind and every answer that is not 2xx. Then the same
 * load on two API processes on the same database (the second one `ROLE=api`), 25 connections each, one load
 * generator per process (autocannon does not balance), summed: the throughput of both and their ratio.
 *
 * No 4xx by construction: the writers are 500 geo-verified RESIDENTs of the feed's territory (smoke: 100), so each
 * may post, like, comment, join events and upload; each like is a (person, post) pair not liked before (the k-th
 * like of a person takes the next post), each join request a (visitor, territory) pair not asked before by one of
 * 500 visitors who are RESIDENT nowhere (a request per pair, under the limit of three a day); the bench API raises
 * every rate limit (run.ts). The reads carry the bench user's token where their scenario does. Writes go to the feed's
 * territory (its 200k posts), so the posts read are the ones written to.
 *
 * Like the other scenarios, the API processes run with the jobs off and no worker runs meanwhile: the POST_CREATED
 * outbox rows of the posts stay pending (the dispatch is measured by the notification fan-out). The two-process
 * figure says how far a second process helps on this machine: the CPU used by each API process, PostgreSQL and the
 * load generator is printed (cpu.ts), as on a 2-core machine they share the same cores. Met when the two processes
 * serve at least 1.5x the one (half of a second process's worth), and when no answer was other than 2xx.
 */
import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import { chatSeed } from './chat.js';
import { watchCpu } from './cpu.js';
import { eventsSeed } from './events-nearby.js';
import { feedSeed, feedTerritoryId } from './feed-read.js';
import { driveMixed, kindFigures, type KindFigures, type MixedRequest, type MixedSample } from './load.js';
import { mapSeed } from './map-pins.js';
import { marketplaceSeed } from './marketplace.js';
import type { CustomRunContext, CustomScenario } from './scenario.js';
import { type BenchSize, type SeedStep, seededRandom } from './seed.js';

const SECOND_API = 'api-2';
const CONNECTIONS = 50;
/** Two processes must serve at least this much more than one. */
const MIN_SCALING = 1.5;

/** The hot reads: request/baseline scenarios of scenarios.ts whose requests are sent as they are. */
const READS = [
  'territory by id',
  'territories nearby',
  'territories search',
  'events nearby',
  'map pins',
  'feed read',
  'item search',
  'chat history, first page',
] as const;
const WRITES = ['post', 'like', 'comment', 'event participation', 'join request'] as const;
const UPLOAD = 'upload: image';
/** Of every 100 requests: 10 of each read, 3 of each write, 5 uploads. */
const MIX: Array<[string, number]> = [
  ...READS.map((r): [string, number] => [`read: ${r}`, 10]),
  ...WRITES.map((w): [string, number] => [`write: ${w}`, 3]),
  [UPLOAD, 5],
];

function dayCounts(size: BenchSize) {
  return size.mode === 'full'
    ? { residents: 500, visitors: 500, warmupSeconds: 3, durationSeconds: 30 }
    : { residents: 100, visitors: 100, warmupSeconds: 0.5, durationSeconds: 2 };
}

/** The writers (RESIDENTs of the feed's territory, geo-verified) and the visitors who ask to join territories. */
export const daySeed: SeedStep = {
  name: 'a day in the territory',
  async run(db, size) {
    const counts = dayCounts(size);
    const territoryId = await feedTerritoryId(db);
    await db.query(
      `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
       select gen_random_uuid(), now(), 'Resident ' || i, 'bench', 'bench-day-resident-' || i, 'Unverified' from generate_series(1, $1::int) as i
       union all
       select gen_random_uuid(), now(), 'Visitor ' || i, 'bench', 'bench-day-visitor-' || i, 'Unverified' from generate_series(1, $2::int) as i`,
      [counts.residents, counts.visitors],
    );
    await db.query(
      `insert into territory_membership (id, created_at_utc, territory_id, user_id, role, geo_verified_at_utc, document_verified_at_utc, capabilities)
       select gen_random_uuid(), now(), $1::uuid, id, 'RESIDENT', now(), null, '{}'::text[] from app_user where external_id like 'bench-day-resident-%'`,
      [territoryId],
    );
    await db.query('analyze app_user; analyze territory_membership');
    return { dayResidents: counts.residents, dayVisitors: counts.visitors };
  },
};

/** A real PNG (RGB, random pixels, so it does not compress): `side` x `side`, about 3 x side^2 bytes. */
function smallPng(side: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const rows = Buffer.concat(Array.from({ length: side }, () => Buffer.concat([Buffer.from([0]), randomBytes(side * 3)])));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** One multipart/form-data body (a photo of the street and its title), sent by every upload. */
function uploadBody() {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nThe new bus stop\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bus-stop.png"\r\nContent-Type: image/png\r\n\r\n`),
    smallPng(64),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

interface DayData {
  territoryId: string;
  residents: string[];
  visitors: string[];
  tokens: Map<string, string>;
  posts: string[];
  events: string[];
  joinTerritories: string[];
  benchUserId: string;
  reads: Map<string, Array<{ path: string; headers: Record<string, string> }>>;
}

async function loadDayData(ctx: CustomRunContext): Promise<DayData> {
  const { db } = ctx;
  const territoryId = await feedTerritoryId(db);
  const ids = async (sql: string, params: unknown[] = []) => (await db.query<{ id: string }>(sql, params)).rows.map((r) => r.id);
  const residents = await ids(`select id from app_user where external_id like 'bench-day-resident-%' order by external_id`);
  const visitors = await ids(`select id from app_user where external_id like 'bench-day-visitor-%' order by external_id`);
  // What every resident may like and comment on: the territory's newest public posts.
  const posts = await ids(
    `select id from post where territory_id = $1::uuid and status = 'PUBLISHED' and visibility = 'PUBLIC' order by created_at_utc desc, id desc limit 5000`,
    [territoryId],
  );
  const events = await ids(`select id from event where status = 'SCHEDULED' order by md5(id::text) limit 2000`);
  // Territories to ask to join: past the ones the scenarios load their data into (the first few of the md5 order).
  const joinTerritories = await ids(`select id from territory where status = 'ACTIVE' and id <> $1::uuid order by md5(id::text) offset 10 limit 2000`, [
    territoryId,
  ]);
  const [benchUserId] = await ids(`select id from app_user where auth_provider = 'bench' and external_id = 'bench-user'`);
  if (residents.length === 0 || posts.length === 0 || events.length === 0 || joinTerritories.length === 0 || !benchUserId) {
    throw new Error('a day in the territory: its seed steps did not run');
  }
  const tokens = new Map(await Promise.all([...residents, ...visitors].map(async (id): Promise<[string, string]> => [id, await ctx.tokenFor(id)])));
  const reads = new Map<string, Array<{ path: string; headers: Record<string, string> }>>();
  for (const name of READS) {
    const { pairs, authenticated } = await ctx.requestsOf(name);
    const common: Record<string, string> = authenticated ? { authorization: `Bearer ${ctx.token}` } : {};
    reads.set(
      `read: ${name}`,
      pairs.map((p) => ({ path: p.api, headers: p.apiHeaders ?? common })),
    );
  }
  return { territoryId, residents, visitors, tokens, posts, events, joinTerritories, benchUserId, reads };
}

/**
 * The request stream: kinds in a fixed shuffled order of 100 (the mix exactly), each kind with its own counter k.
 * Writers and targets are chosen from k so that no (person, post) like and no (visitor, territory) join request
 * repeats: person u = k mod n takes, on its j-th turn, the (u + j)-th post or territory.
 */
function requestStream(data: DayData, random: () => number): () => MixedRequest {
  const slots = MIX.flatMap(([kind, share]) => Array.from({ length: share }, () => kind));
  for (let i = slots.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  const counters = new Map<string, number>();
  const upload = uploadBody();
  let n = 0;
  const json = (token: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` });
  const turn = <T>(list: T[], people: number, k: number) => list[((k % people) + Math.floor(k / people)) % list.length]!;
  return () => {
    const kind = slots[n++ % slots.length]!;
    const k = counters.get(kind) ?? 0;
    counters.set(kind, k + 1);
    const reads = data.reads.get(kind);
    if (reads) {
      const read = reads[k % reads.length]!;
      return { kind, method: 'GET', path: read.path, headers: read.headers };
    }
    const resident = data.residents[k % data.residents.length]!;
    const token = data.tokens.get(resident)!;
    switch (kind) {
      case 'write: post':
        return {
          kind,
          method: 'POST',
          path: '/api/v1/feed',
          headers: json(token),
          body: JSON.stringify({
            territoryId: data.territoryId,
            title: `Water back on Rua ${k}`,
            content: 'The water is back since noon.',
            visibility: 'PUBLIC',
          }),
        };
      case 'write: like':
        return { kind, method: 'POST', path: `/api/v1/feed/${turn(data.posts, data.residents.length, k)}/likes`, headers: json(token), body: '{}' };
      case 'write: comment':
        return {
          kind,
          method: 'POST',
          path: `/api/v1/feed/${data.posts[k % data.posts.length]}/comments`,
          headers: json(token),
          body: JSON.stringify({ content: 'Thanks for letting us know!' }),
        };
      case 'write: event participation': {
        const action = Math.floor(k / data.residents.length) % 2 === 0 ? 'interest' : 'confirm';
        return { kind, method: 'POST', path: `/api/v1/events/${turn(data.events, data.residents.length, k)}/${action}`, headers: json(token), body: '{}' };
      }
      case 'write: join request': {
        const visitor = data.visitors[k % data.visitors.length]!;
        return {
          kind,
          method: 'POST',
          path: `/api/v1/territories/${turn(data.joinTerritories, data.visitors.length, k)}/join-requests`,
          headers: json(data.tokens.get(visitor)!),
          body: JSON.stringify({ recipientUserIds: [data.benchUserId], message: 'We moved in last month.' }),
        };
      }
      default:
        return {
          kind,
          method: 'POST',
          path: '/api/v1/media/upload',
          headers: { 'content-type': upload.contentType, authorization: `Bearer ${token}` },
          body: upload.body,
        };
    }
  };
}

interface RunFigures {
  reqPerSec: number;
  requests: number;
  errors: number;
  byKind: Map<string, KindFigures>;
  cpu: ReturnType<ReturnType<typeof watchCpu>['stop']>;
}

/** Warm-up, then the measured load, on each of `apis` at once (the connections split evenly), summed. */
async function runDay(
  apis: Array<{ name: string; url: string; pid: number | undefined }>,
  next: () => MixedRequest,
  ctx: CustomRunContext,
): Promise<RunFigures> {
  const counts = dayCounts(ctx.size);
  const connections = CONNECTIONS / apis.length;
  await Promise.all(apis.map((api) => driveMixed({ baseUrl: api.url, connections, durationSeconds: counts.warmupSeconds, next })));
  const cpu = watchCpu(Object.fromEntries(apis.map((api) => [api.name, api.pid])), ctx.postgresDataDir);
  const samples: MixedSample[] = await Promise.all(
    apis.map((api) => driveMixed({ baseUrl: api.url, connections, durationSeconds: counts.durationSeconds, next })),
  );
  const cpuFigures = cpu.stop();
  const byKind = new Map(MIX.map(([kind]) => [kind, kindFigures(samples.flatMap((s) => s.byKind.get(kind) ?? []))]));
  const requests = [...byKind.values()].reduce((n, f) => n + f.requests, 0);
  const duration = Math.max(...samples.map((s) => s.durationSeconds));
  const errors = [...byKind.values()].reduce((n, f) => n + f.non2xx, 0) + samples.reduce((n, s) => n + s.errors, 0);
  return { reqPerSec: duration > 0 ? Math.round((requests / duration) * 10) / 10 : 0, requests, errors, byKind, cpu: cpuFigures };
}

function reportOf(one: RunFigures, two: RunFigures): string[] {
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  const codes = (f: KindFigures) =>
    f.non2xx === 0
      ? '0'
      : Object.entries(f.statusCodes)
          .filter(([code]) => !code.startsWith('2'))
          .map(([code, n]) => `${n}x${code}`)
          .join(' ');
  const header = ['kind', 'share', '1 proc: req', 'p50', 'p99', 'non-2xx', '2 procs: req', 'p50', 'p99', 'non-2xx'];
  const rows = MIX.map(([kind, share]) => {
    const a = one.byKind.get(kind)!;
    const b = two.byKind.get(kind)!;
    return [kind, `${share} %`, String(a.requests), ms(a.p50Ms), ms(a.p99Ms), codes(a), String(b.requests), ms(b.p50Ms), ms(b.p99Ms), codes(b)];
  });
  rows.push(['all', '100 %', String(one.requests), '', '', String(one.errors), String(two.requests), '', '', String(two.errors)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const cpu = (f: RunFigures) =>
    `${Object.entries(f.cpu.cores)
      .map(([name, cores]) => `${name} ${cores.toFixed(2)}`)
      .join(', ')} cores; machine ${f.cpu.machineBusyPct ?? '?'} % busy`;
  return [
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
    `CPU, one API process: ${cpu(one)}`,
    `CPU, two API processes: ${cpu(two)}`,
  ];
}

export const dayScenario: CustomScenario = {
  name: 'a day in the territory',
  // The hot reads' data, in the order of scenarios.ts.
  needs: [eventsSeed, mapSeed, feedSeed, marketplaceSeed, chatSeed],
  seed: daySeed,
  servers: [{ name: SECOND_API, script: 'bench/api-server.ts', env: { ROLE: 'api' } }],
  async run(ctx) {
    const counts = dayCounts(ctx.size);
    const data = await loadDayData(ctx);
    const next = requestStream(data, seededRandom(20261125));
    ctx.log(`a day in the territory: one API process, ${CONNECTIONS} connections, ${counts.durationSeconds} s`);
    const one = await runDay([{ name: 'api', url: ctx.apiUrl, pid: ctx.apiPid }], next, ctx);
    const second = await ctx.server(SECOND_API);
    ctx.log(`a day in the territory: two API processes, ${CONNECTIONS / 2} connections each, ${counts.durationSeconds} s`);
    const two = await runDay(
      [
        { name: 'api', url: ctx.apiUrl, pid: ctx.apiPid },
        { name: SECOND_API, url: second.url, pid: second.process.pid },
      ],
      next,
      ctx,
    );
    const scaling = one.reqPerSec > 0 ? Math.round((two.reqPerSec / one.reqPerSec) * 100) / 100 : 0;
    const perKind = (f: RunFigures) =>
      Object.fromEntries(
        [...f.byKind].map(([kind, k]) => [kind, { requests: k.requests, p50Ms: k.p50Ms, p99Ms: k.p99Ms, non2xx: k.non2xx, statusCodes: k.statusCodes }]),
      );
    return {
      figures: {
        connections: CONNECTIONS,
        durationSeconds: counts.durationSeconds,
        oneProcessReqPerSec: one.reqPerSec,
        oneProcessErrors: one.errors,
        twoProcessesReqPerSec: two.reqPerSec,
        twoProcessesErrors: two.errors,
        scaling,
      },
      failures: one.errors + two.errors,
      targets: [
        {
          target: `non-2xx answers and socket errors: ${one.errors} (one API process) + ${two.errors} (two): none allowed`,
          ratio: one.errors + two.errors,
          holds: one.errors + two.errors === 0,
        },
        {
          target: `two API processes ${two.reqPerSec.toFixed(0)} req/s / one ${one.reqPerSec.toFixed(0)} req/s at least ${MIN_SCALING}x`,
          ratio: scaling,
          holds: scaling >= MIN_SCALING,
        },
      ],
      report: reportOf(one, two),
      details: { oneProcess: { ...perKind(one), cpu: one.cpu }, twoProcesses: { ...perKind(two), cpu: two.cpu } },
    };
  },
};
