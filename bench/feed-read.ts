/**
 * The feed-read scenario and its seed: `GET /api/v1/feed/paged` on one large territory against a bare route doing
 * the same work with `pg` as src/routers/feed/feed.service.ts `pageFeed`: the territory and membership lookup, the
 * caller's blocks, the page and count queries of feed.queries.ts, then the media URLs of the page. Listed in
 * scenarios.ts.
 */
import type pg from 'pg';
import { type FeedFilter, type FeedRow, type FeedViewer, feedCountQuery, feedPageQuery } from '../src/routers/feed/feed.queries.js';
import { runPreparedOnPool } from '../src/db/sql.js';
import { type TerritoryAccessRow, territoryAccessQuery } from '../src/policy/access.queries.js';
import { pageOffset, toPage } from '../src/platform/pagination.js';
import { feedItemOf } from '../src/routers/feed/feed.service.js';
import { HOT_READ, type Scenario } from './scenario.js';
import { type BenchSize, type SeedStep, benchViewerId } from './seed.js';

/** Few authors write the whole feed (as in a real neighbourhood, a handful of people post most). */
const AUTHORS = 8;
const TAGS = ['news', 'safety', 'events', 'market', 'lost and found', 'transport', 'water', 'schools', 'health', 'sports', 'culture', 'help'];
export const PAGE_SIZE = 20;
/** Readers page through the newest posts: the requests rotate over the first pages. */
export const PAGES = 50;

const postsOf = (size: BenchSize) => size.feedPosts ?? (size.mode === 'smoke' ? 5_000 : 200_000);

/**
 * The feed's territory: one ACTIVE territory picked the same way every run, from the other end of the md5 order than
 * the map scenario's, so the two never share a territory.
 */
export async function feedTerritoryId(db: pg.Client): Promise<string> {
  const { rows } = await db.query<{ id: string }>(`select id from territory where status = 'ACTIVE' order by md5(id::text) desc limit 1`);
  const id = rows[0]?.id;
  if (!id) throw new Error('the feed seed needs the territories step first');
  return id;
}

const sqlTextArray = (items: readonly string[]) => `array[${items.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')}]::text[]`;

/**
 * ~200k posts (smoke: 5k) in one territory, one every two minutes back from now: 30 % RESIDENTS_ONLY, 7.5 % not
 * PUBLISHED (hidden, rejected, pending), eight authors, zero to two tags, skewed like/comment/share counts, every
 * 50th an EVENT post announcing the territory's event (when the events step ran), and an image on every 10th post
 * (two on every 50th). Runs after the territories step (scenarios.ts lists this scenario after the territory ones).
 */
export const feedSeed: SeedStep = {
  name: 'feed',
  async run(db, size) {
    const territoryId = await feedTerritoryId(db);
    await db.query('select setseed(0.57)');
    await db.query(
      `insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
       select gen_random_uuid(), now(), 'Feed author ' || i, 'bench', 'bench-feed-author-' || i, 'Unverified' from generate_series(1, $1::int) as i`,
      [AUTHORS],
    );
    await db.query(
      `insert into post (id, created_at_utc, territory_id, author_user_id, title, content, type, visibility, status, tags, map_entity_id,
                         asset_ids, event_id, alert_id, updated_at_utc)
       select gen_random_uuid(), now() - make_interval(secs => g.i * 120), $1::uuid, a.ids[1 + (g.i * 7) % ${AUTHORS}],
              'Post ' || g.i || ' in the neighbourhood',
              'Neighbours, here is what happened today (' || g.i || '). ' || repeat('More details follow. ', 1 + g.i % 6),
              case when ev.id is not null and g.i % 50 = 0 then 'EVENT' else 'POST' end,
              case when g.i % 10 < 3 then 'RESIDENTS_ONLY' else 'PUBLIC' end,
              case g.i % 40 when 1 then 'HIDDEN' when 2 then 'REJECTED' when 3 then 'PENDING' else 'PUBLISHED' end,
              case g.i % 4 when 0 then '{}'::text[]
                           when 1 then array[t.tags[1 + g.i % ${TAGS.length}]]
                           else array[t.tags[1 + g.i % ${TAGS.length}], t.tags[1 + (g.i % ${TAGS.length} + 1 + (g.i / 7) % ${TAGS.length - 1}) % ${TAGS.length}]] end,
              null, '{}'::text[], case when ev.id is not null and g.i % 50 = 0 then ev.id end, null,
              now() - make_interval(secs => g.i * 120)
         from generate_series(1, $2::int) as g(i),
              (select array_agg(id order by external_id) as ids from app_user where external_id like 'bench-feed-author-%') a,
              (select (select id from event where territory_id = $1::uuid order by id limit 1) as id) ev,
              (select ${sqlTextArray(TAGS)} as tags) t`,
      [territoryId, postsOf(size)],
    );
    // Skewed like, comment and share counts (a post without any has no counts row, as in the API).
    await db.query(
      `insert into post_interaction_count (post_id, like_count, comment_count, share_count)
       select * from (select id, floor(power(random(), 3) * 60)::int as likes, floor(power(random(), 2) * 15)::int as comments,
                             floor(power(random(), 4) * 6)::int as shares
                        from post where territory_id = $1::uuid order by created_at_utc desc, id desc) c
        where likes + comments + shares > 0`,
      [territoryId],
    );
    // The media of a post: the storage key carries the post id and the display order, which the attachment reads back.
    await db.query(
      `with owners as (
         select id, author_user_id, n from (
           select p.id, p.author_user_id, row_number() over (order by p.created_at_utc desc, p.id desc) as n
             from post p where p.territory_id = $1::uuid) s
          where n % 10 = 0
       ), media as (
         insert into media_asset (id, created_at_utc, uploaded_by_user_id, media_type, mime_type, size_bytes, storage_key, title)
         select gen_random_uuid(), now(), o.author_user_id, 'IMAGE', 'image/jpeg', 150000, 'bench/feed/' || o.id || '/' || k.k, null
           from owners o cross join lateral generate_series(0, case when o.n % 50 = 0 then 1 else 0 end) as k(k)
         returning id, storage_key
       )
       insert into media_attachment (id, created_at_utc, media_asset_id, owner_type, owner_id, display_order)
       select gen_random_uuid(), now(), m.id, 'POST', split_part(m.storage_key, '/', 3)::uuid, split_part(m.storage_key, '/', 4)::int from media m`,
      [territoryId],
    );
    await db.query('analyze post; analyze post_interaction_count; analyze media_asset; analyze media_attachment');
    const { rows } = await db.query<{ posts: number; published: number; media: number }>(
      `select count(*)::int as posts, (count(*) filter (where status = 'PUBLISHED'))::int as published,
              (select count(*)::int from media_attachment a join post p on p.id = a.owner_id where a.owner_type = 'POST' and p.territory_id = $1::uuid) as media
         from post where territory_id = $1::uuid`,
      [territoryId],
    );
    return { feedPosts: rows[0]?.posts ?? 0, feedPublishedPosts: rows[0]?.published ?? 0, feedMedia: rows[0]?.media ?? 0 };
  },
};

/**
 * The reader's side of the feed: the bench user becomes a geo-verified RESIDENT of the feed territory (so
 * RESIDENTS_ONLY posts are in their feed) and has liked some posts (so `likedByMe` varies). The bench user is
 * inserted after the seed steps (run.ts), so this runs when the requests are built; idempotent (the journeys
 * scenarios call it too).
 */
export async function prepareReader(db: pg.Client, territoryId: string) {
  const user = `(select id from app_user where auth_provider = 'bench' and external_id = 'bench-user')`;
  await db.query(
    `insert into territory_membership (id, created_at_utc, territory_id, user_id, role, geo_verified_at_utc, document_verified_at_utc, capabilities)
     select gen_random_uuid(), now(), $1::uuid, ${user}, 'RESIDENT', now(), null, '{}'::text[]
     on conflict do nothing`,
    [territoryId],
  );
  await db.query(
    `with liked as (
       insert into post_like (post_id, user_id, created_at_utc)
       select p.id, ${user}, now() from post p join post_interaction_count c on c.post_id = p.id
        where p.territory_id = $1::uuid and c.like_count > 0 and md5(p.id::text) < '2'
       on conflict do nothing returning post_id
     )
     update post_interaction_count set like_count = like_count + 1 where post_id in (select post_id from liked)`,
    [territoryId],
  );
}

const qs = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

export const feedReadScenario: Scenario = {
  name: 'feed read',
  targets: [HOT_READ],
  seed: feedSeed,
  authenticated: true,
  async requests({ db, random, count }) {
    const territoryId = await feedTerritoryId(db);
    await prepareReader(db, territoryId);
    // Every one of the first pages once, in a seeded shuffled order.
    const pages = Array.from({ length: Math.min(PAGES, count) }, (_, i) => i + 1);
    for (let i = pages.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [pages[i], pages[j]] = [pages[j] as number, pages[i] as number];
    }
    return pages.map((pageNumber) => {
      const query = qs({ territoryId, pageNumber, pageSize: PAGE_SIZE });
      return { api: `/api/v1/feed/paged?${query}`, baseline: `/baseline/feed/paged?${query}` };
    });
  },
  baseline: {
    path: '/baseline/feed/paged',
    async handler(pool, request, reply) {
      const q = request.query as Record<string, string | undefined>;
      const territoryId = q.territoryId ?? '';
      const pageNumber = Number(q.pageNumber ?? 1);
      const pageSize = Number(q.pageSize ?? PAGE_SIZE);
      const userId = await benchViewerId(pool);
      // As the service: the access read (the territory, the caller's membership, whom the caller blocked, whether
      // they have hidden posts there).
      const [access] = await runPreparedOnPool<TerritoryAccessRow>(pool, territoryAccessQuery(territoryId, userId, null, true));
      if (!access?.id || access.status !== 'ACTIVE') return reply.code(404).send({ status: 404 });
      // The bench user holds no system permission and no capability: their own hidden posts, if any.
      const viewer: FeedViewer = {
        userId,
        seesResidentsOnly: access.role === 'RESIDENT' || (access.capabilities ?? []).length > 0,
        blockedUserIds: access.blocked_user_ids ?? [],
        ...(access.has_own_hidden_posts ? { seesHidden: 'OWN' as const } : {}),
      };
      const filter: FeedFilter = { territoryId, anyTags: null, mapEntityId: null, assetId: null };
      // The page with the count in its rows (an empty page: the count alone), as the service reads it.
      const rows = await runPreparedOnPool<FeedRow>(pool, feedPageQuery(viewer, filter, pageOffset(pageNumber, pageSize), { withTotal: true }));
      const total = rows[0]?.total ?? (await runPreparedOnPool<{ total: number }>(pool, feedCountQuery(viewer, filter)))[0]?.total ?? 0;
      return toPage(rows.map(feedItemOf), total, pageNumber, pageSize);
    },
  },
};
