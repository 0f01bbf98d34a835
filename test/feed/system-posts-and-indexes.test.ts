import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { type TerritoryAccessRow, territoryAccessQuery } from '../../src/policy/access.queries.js';
import { feedCountQuery, feedPageQuery, myPostsQuery } from '../../src/routers/feed/feed.queries.js';
import { createSystemPost, setPostStatus } from '../../src/routers/feed/feed.service.js';
import { newResident, newTerritory, newUser, newVisitor } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { executedPlanOf, planSummary } from '../factories/query-plan.js';
import { pageSlice, runOnPool, runPreparedOnPool, toNumberedParams } from '../../src/db/sql.js';
import type pg from 'pg';
import { feedIds, UNKNOWN_ID } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  // The stored counters hold a few rows here; analyzed by autovacuum (whenever it gets to them) they look like one
  // page, read by a sequential scan. Never analyzed, they are planned as a platform's, read by key.
  for (const table of ['territory_post_counter', 'territory_author_post_counter']) await t.sql(`alter table ${table} set (autovacuum_enabled = false)`);
});
afterAll(() => t.close());

const fork = () => t.deps.orm.em.fork() as EntityManager;

/** `count` PUBLISHED PUBLIC posts of `authorId` in the territory, a second apart, newest first by position. */
const insertPublicPosts = (territoryId: string, authorId: string, count: number) =>
  t.sql(
    `insert into post (id, created_at_utc, updated_at_utc, territory_id, author_user_id, title, content, type, visibility, status)
     select gen_random_uuid(), now() - (g || ' seconds')::interval, now(), $1, $2, 'Post ' || g, 'content', 'POST', 'PUBLIC', 'PUBLISHED'
       from generate_series(1, $3::int) g`,
    [territoryId, authorId, count],
  );

describe('createSystemPost and setPostStatus (contract for events and alerts)', () => {
  it('a PENDING alert post stays invisible until published; rejected hides it again', async () => {
    const territory = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const reporter = await newResident(t, territory);
    const visitor = await newVisitor(t, territory);
    const alertId = newId();
    const { id } = await fork().transactional((tx) =>
      createSystemPost(tx, {
        territoryId: territory.id,
        authorUserId: reporter.id,
        title: 'Water contamination',
        content: 'Do not drink tap water',
        type: 'ALERT',
        visibility: 'PUBLIC',
        status: 'PENDING',
        alertId,
      }),
    );
    const [row] = await t.sql<{ alert_id: string; type: string; status: string }>('select alert_id, type, status from post where id = $1', [id]);
    expect(row).toEqual({ alert_id: alertId, type: 'ALERT', status: 'PENDING' });
    expect(await feedIds(t, visitor, `territoryId=${territory.id}`)).not.toContain(id);

    await fork().transactional((tx) => setPostStatus(tx, id, 'PUBLISHED'));
    expect(await feedIds(t, visitor, `territoryId=${territory.id}`)).toEqual([id]);

    await fork().transactional((tx) => setPostStatus(tx, id, 'REJECTED'));
    expect(await feedIds(t, visitor, `territoryId=${territory.id}`)).toEqual([]);
  });

  it('a rolled-back caller transaction leaves no post; an unknown post cannot change status', async () => {
    const territory = await newTerritory(t);
    const user = await newUser(t);
    const before = await t.sql<{ n: string }>('select count(*)::text as n from post');
    await expect(
      fork().transactional(async (tx) => {
        await createSystemPost(tx, {
          territoryId: territory.id,
          authorUserId: user.id,
          title: 'Event',
          content: '',
          type: 'EVENT',
          visibility: 'PUBLIC',
          status: 'PUBLISHED',
          eventId: newId(),
        });
        throw new Error('caller failed');
      }),
    ).rejects.toThrow('caller failed');
    expect(await t.sql<{ n: string }>('select count(*)::text as n from post')).toEqual(before);
    await expect(fork().transactional((tx) => setPostStatus(tx, UNKNOWN_ID, 'PUBLISHED'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('feed queries use their indexes (EXPLAIN on a few thousand posts)', () => {
  it('the feed page, its count and my posts are index scans, not sequential scans', async () => {
    const busy = await newTerritory(t);
    const others = await Promise.all(Array.from({ length: 20 }, () => newTerritory(t)));
    const author = await newUser(t);
    const prolific = await newUser(t);
    // 2000 posts in the busy territory (a few hidden or RESIDENTS_ONLY), 6000 more spread over 20 others.
    await t.sql(
      `insert into post (id, created_at_utc, updated_at_utc, territory_id, author_user_id, title, content, type, visibility, status)
       select gen_random_uuid(), now() - (g || ' seconds')::interval, now(), $1, case when g % 50 = 0 then $3::uuid else $2::uuid end,
              'Post ' || g, 'content', 'POST', case when g % 3 = 0 then 'RESIDENTS_ONLY' else 'PUBLIC' end,
              case when g % 97 = 0 then 'HIDDEN' else 'PUBLISHED' end
         from generate_series(1, 2000) g`,
      [busy.id, author.id, prolific.id],
    );
    for (const other of others) {
      await t.sql(
        `insert into post (id, created_at_utc, updated_at_utc, territory_id, author_user_id, title, content, type, visibility, status)
         select gen_random_uuid(), now() - (g || ' seconds')::interval, now(), $1, $2, 'Post ' || g, 'content', 'POST', 'PUBLIC', 'PUBLISHED'
           from generate_series(1, 300) g`,
        [other.id, author.id],
      );
    }
    await t.sql('vacuum analyze post');

    const em = fork();
    const explain = async (query: { sql: string; params: unknown[] }) => JSON.stringify(await em.execute(`explain (format json) ${query.sql}`, query.params));
    // Tiny joined tables (users, events) may well be scanned; the post table never.
    const seqScanOnPost = (plan: string) => /"Node Type":"Seq Scan"[^{}]*"Relation Name":"post"/.test(plan);

    const visitorView = { userId: newId(), seesResidentsOnly: false, blockedUserIds: [prolific.id] };
    const filter = { territoryId: busy.id, anyTags: null, mapEntityId: null, assetId: null };
    const page = await explain(feedPageQuery(visitorView, filter, { offset: 40, limit: 20 }));
    expect(page).toContain('post_feed_idx');
    expect(seqScanOnPost(page)).toBe(false);

    // Each item's media: a probe of the attachment index per row, never a scan of the attachments.
    expect(page).toMatch(/"Index Name":"media_attachment_owner_type_owner_id_display_order_index"/);
    expect(page).not.toMatch(/"Node Type":"Seq Scan"[^{}]*"Relation Name":"media_attachment"/);

    const residentView = { userId: newId(), seesResidentsOnly: true, blockedUserIds: [] };
    expect(await explain(feedPageQuery(residentView, filter, { offset: 0, limit: 20 }))).toContain('post_feed_idx');
    // A later page skips keys read from the index alone (a resident filters on nothing the index lacks), then reads
    // the page's rows by primary key.
    const later = await explain(feedPageQuery(residentView, filter, { offset: 40, limit: 20 }));
    expect(later).toMatch(/"Node Type":"Index Only Scan"[^{}]*"Index Name":"post_feed_idx"/);
    expect(later).toMatch(/"Index Name":"post_pkey"/);
    expect(seqScanOnPost(later)).toBe(false);
    // Unfiltered counts read the territory's stored counters, corrected by the same counters by author for the
    // viewer's own posts and the authors they blocked (key lookups, no post read); a filtered count counts on
    // post_feed_idx_count.
    const count = await explain(feedCountQuery(residentView, filter));
    expect(count).toContain('territory_post_counter_pkey');
    expect(seqScanOnPost(count)).toBe(false);
    const visitorCount = await explain(feedCountQuery(visitorView, filter));
    expect(visitorCount).toContain('territory_post_counter_pkey');
    expect(visitorCount).toContain('territory_author_post_counter_pkey');
    expect(visitorCount).not.toMatch(/"Relation Name":"post"/);
    const filteredCount = await explain(feedCountQuery(residentView, { ...filter, mapEntityId: newId() }));
    expect(filteredCount).toMatch(/"Index Name":"post_/);
    expect(seqScanOnPost(filteredCount)).toBe(false);

    // The stored counts are exact: the same totals as counting the rows, for every kind of viewer, after the writes
    // that move a post in or out of the counters (hide, publish again, change visibility, delete).
    const counted = async (view: Parameters<typeof feedCountQuery>[0]) => {
      const where = feedCountQuery(view, { ...filter, anyTags: null });
      const stored = (await em.execute<{ total: number }[]>(where.sql, where.params))[0]!.total;
      const rows = await t.sql<{ n: number }>(
        `select count(*)::int as n from post p where p.territory_id = $1 and p.status = 'PUBLISHED'
           and ($2::boolean or p.visibility = 'PUBLIC' or p.author_user_id = $3) and not (p.author_user_id = any($4::uuid[]))`,
        [busy.id, view.seesResidentsOnly, view.userId, view.blockedUserIds],
      );
      // The pages that carry the count in their rows (`withTotal`) carry the same total on every row.
      for (const offset of [0, 40]) {
        const page = feedPageQuery(view, filter, { offset, limit: 20 }, { withTotal: true });
        const totals = (await em.execute<{ total: number }[]>(page.sql, page.params)).map((r) => r.total);
        expect(totals).toEqual(Array.from({ length: Math.min(20, Math.max(stored - offset, 0)) }, () => stored));
      }
      return { stored, rows: rows[0]!.n };
    };
    const viewers = [
      residentView,
      visitorView,
      { userId: prolific.id, seesResidentsOnly: false, blockedUserIds: [author.id] },
      { userId: author.id, seesResidentsOnly: false, blockedUserIds: [] },
      { userId: newId(), seesResidentsOnly: true, blockedUserIds: [prolific.id, author.id] },
    ];
    const check = async () => {
      for (const view of viewers) {
        const { stored, rows } = await counted(view);
        expect(stored).toBe(rows);
      }
    };
    await check();
    const [first, second, third] = (await t.sql<{ id: string }>(`select id from post where territory_id = $1 and status = 'PUBLISHED' limit 3`, [busy.id])).map(
      (r) => r.id,
    );
    await t.sql(`update post set status = 'HIDDEN' where id = $1`, [first]);
    await check();
    await t.sql(`update post set status = 'PUBLISHED' where id = $1`, [first]);
    await t.sql(`update post set visibility = case when visibility = 'PUBLIC' then 'RESIDENTS_ONLY' else 'PUBLIC' end where id = $1`, [second]);
    await check();
    await t.sql(`delete from post where id = $1`, [third]);
    await t.sql(`update post set title = 'unrelated change' where territory_id = $1`, [busy.id]);
    await check();
    // A post of the blocked author moved out of the territory and back, and several posts in one statement.
    const [moved] = (await t.sql<{ id: string }>(`select id from post where territory_id = $1 and author_user_id = $2 limit 1`, [busy.id, prolific.id])).map(
      (r) => r.id,
    );
    const elsewhere = await newTerritory(t);
    await t.sql(`update post set territory_id = $2 where id = $1`, [moved, elsewhere.id]);
    await check();
    await t.sql(`update post set territory_id = $2 where id = $1`, [moved, busy.id]);
    await t.sql(
      `insert into post (id, created_at_utc, updated_at_utc, territory_id, author_user_id, title, content, type, visibility, status)
       select gen_random_uuid(), now(), now(), $1, case when g % 2 = 0 then $2::uuid else $3::uuid end, 'Bulk ' || g, 'content', 'POST',
              case when g % 3 = 0 then 'RESIDENTS_ONLY' else 'PUBLIC' end, 'PUBLISHED'
         from generate_series(1, 30) g`,
      [busy.id, prolific.id, author.id],
    );
    await check();

    // Hidden posts: a second branch on post_hidden_idx for whoever still sees them (all of them: a moderator; their
    // own: anyone), the published branch unchanged; never a sequential scan.
    for (const seesHidden of ['ALL', 'OWN'] as const) {
      const view = { userId: author.id, seesResidentsOnly: true, blockedUserIds: [], seesHidden };
      for (const query of [feedPageQuery(view, filter, { offset: 40, limit: 20 }), feedCountQuery(view, filter)]) {
        const plan = await explain(query);
        // The published branch: post_feed_idx for the page, the stored counters for the count.
        expect(plan, seesHidden).toMatch(/post_feed_idx|territory_post_counter_pkey/);
        expect(plan, seesHidden).toContain('post_hidden_idx');
        expect(seqScanOnPost(plan), seesHidden).toBe(false);
      }
    }
    const [{ hidden }] = (await t.sql<{ hidden: number }>(`select count(*)::int as hidden from post where territory_id = $1 and status = 'HIDDEN'`, [
      busy.id,
    ])) as [{ hidden: number }];
    const [{ published }] = (await t.sql<{ published: number }>(
      `select count(*)::int as published from post where territory_id = $1 and status = 'PUBLISHED'`,
      [busy.id],
    )) as [{ published: number }];
    const totalFor = async (view: Parameters<typeof feedCountQuery>[0]) =>
      (await em.execute<{ total: number }[]>(feedCountQuery(view, filter).sql, feedCountQuery(view, filter).params))[0]!.total;
    const moderatorView = { userId: newId(), seesResidentsOnly: true, blockedUserIds: [], seesHidden: 'ALL' as const };
    expect(await totalFor(moderatorView)).toBe(published + hidden);
    const unionWithTotal = feedPageQuery(moderatorView, filter, { offset: 0, limit: 20 }, { withTotal: true });
    expect((await em.execute<{ total: number }[]>(unionWithTotal.sql, unionWithTotal.params))[0]?.total).toBe(published + hidden);
    expect(await totalFor({ ...moderatorView, seesHidden: 'OWN' })).toBe(published);
    // The union pages like one ordered list: newest first, no duplicates, hidden posts among them.
    const pageOf = async (offset: number) => {
      const q = feedPageQuery(moderatorView, filter, { offset, limit: 100 });
      return em.execute<{ id: string; status: string; created_at_utc: string }[]>(q.sql, q.params);
    };
    const merged = [...(await pageOf(0)), ...(await pageOf(100))];
    expect(new Set(merged.map((r) => r.id)).size).toBe(200);
    expect(merged.some((r) => r.status === 'HIDDEN')).toBe(true);
    const mergedTimes = merged.map((r) => r.created_at_utc);
    expect([...mergedTimes].sort().reverse()).toEqual(mergedTimes);

    const mine = await explain(myPostsQuery(prolific.id, { territoryId: null, anyTags: null, mapEntityId: null, assetId: null }, { offset: 0, limit: 20 }));
    expect(mine).toContain('post_author_idx');
    expect(seqScanOnPost(mine)).toBe(false);

    // The rows really come back newest first through the visibility filters.
    const rows = await em.execute<{ id: string; visibility: string; author_user_id: string; created_at_utc: string }[]>(
      feedPageQuery(visitorView, filter, { offset: 0, limit: 50 }).sql,
      feedPageQuery(visitorView, filter, { offset: 0, limit: 50 }).params,
    );
    expect(rows).toHaveLength(50);
    expect(rows.every((r) => r.visibility === 'PUBLIC' && r.author_user_id !== prolific.id)).toBe(true);
    const times = rows.map((r) => r.created_at_utc);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('likedByMe is a primary-key probe per row of the page, however many posts the viewer liked (stale statistics too)', async () => {
    const place = await newTerritory(t);
    const author = await newUser(t);
    const fan = await newUser(t);
    await insertPublicPosts(place.id, author.id, 3000);
    await t.sql('vacuum analyze post, post_like');
    // Liked after the statistics were taken, as a heavy user's likes are between two analyzes: an EXISTS here was
    // planned as a hash of all the viewer's likes (4 of the 5 ms of a bench page, with 18k likes).
    await t.sql(`insert into post_like (post_id, user_id, created_at_utc) select id, $2, now() from post where territory_id = $1`, [place.id, fan.id]);
    const viewer = { userId: fan.id, seesResidentsOnly: false, blockedUserIds: [] };
    const query = feedPageQuery(viewer, { territoryId: place.id, anyTags: null, mapEntityId: null, assetId: null }, { offset: 100, limit: 20 });
    const pool = (await fork().getConnection().getNativeClient()) as pg.Pool;
    const nodes = await executedPlanOf(pool, query);
    const likeReads = nodes.filter((n) => n['Relation Name'] === 'post_like');
    expect(
      likeReads.map((n) => `${n['Node Type']} ${n['Index Name']} ${n['Actual Loops']}`),
      planSummary(nodes),
    ).toEqual(['Index Only Scan post_like_pkey 20']);
    const rows = await runOnPool<{ liked_by_me: boolean }>(pool, query);
    expect(rows.map((r) => r.liked_by_me)).toEqual(Array(20).fill(true));
  });

  it("likes, comments and shares leave the posts' rows as they were: a later page skips its rows in post_feed_idx with no more heap fetches", async () => {
    const place = await newTerritory(t);
    const author = await newResident(t, place);
    const fan = await newResident(t, place);
    await insertPublicPosts(place.id, author.id, 200);
    // The test database commits asynchronously (synchronous_commit off), and VACUUM sets a page all-visible only
    // once its rows' commits are on disk: a checkpoint writes them. A snapshot open elsewhere at that moment (a
    // background job) can still keep the pages from it, so the page's heap fetches are compared with the fetches
    // before the interactions (0 when the map is set), not with 0.
    await t.sql('checkpoint');
    await t.sql('vacuum analyze post');
    const viewer = { userId: fan.id, seesResidentsOnly: true, blockedUserIds: [] };
    const query = feedPageQuery(viewer, { territoryId: place.id, anyTags: null, mapEntityId: null, assetId: null }, { offset: 40, limit: 20 });
    const pool = (await fork().getConnection().getNativeClient()) as pg.Pool;
    const keyScan = async () => {
      const nodes = await executedPlanOf(pool, query);
      const keys = nodes.filter((n) => n['Index Name'] === 'post_feed_idx');
      expect(
        keys.map((n) => n['Node Type']),
        planSummary(nodes),
      ).toEqual(['Index Only Scan']);
      return keys[0]!['Heap Fetches'];
    };
    const fetchesBefore = await keyScan();
    const newest = await t.sql<{ id: string }>(`select id from post where territory_id = $1 order by created_at_utc desc limit 60`, [place.id]);
    const rowVersions = `select id, xmin::text from post where territory_id = $1 order by id`;
    const before = await t.sql<{ id: string; xmin: string }>(rowVersions, [place.id]);
    for (const { id } of newest) {
      for (const [path, payload] of [['likes'], ['comments', { content: 'Thanks' }], ['shares']] as const) {
        const res = await t.app.inject({ method: 'POST', url: `/api/v1/feed/${id}/${path}`, headers: fan.headers, ...(payload ? { payload } : {}) });
        expect(res.statusCode, res.body).toBeLessThan(300);
      }
    }
    // The counts moved (post_interaction_count), the posts' rows did not: same row versions, no page rewritten.
    expect(await t.sql(rowVersions, [place.id])).toEqual(before);
    expect(await keyScan()).toBe(fetchesBefore);
    const rows = await runOnPool<{ like_count: number; comment_count: number; share_count: number }>(pool, query);
    expect(rows.map((r) => [r.like_count, r.comment_count, r.share_count])).toEqual(Array(20).fill([1, 1, 1]));
  });

  it('commentedByMe is one probe of post_comment_author_post_idx per row, however many comments the viewer and others wrote', async () => {
    const place = await newTerritory(t);
    const author = await newUser(t);
    const [viewerUser, other] = [await newUser(t), await newUser(t)];
    await insertPublicPosts(place.id, author.id, 2000);
    // Every post commented on by the viewer and, three times each, by someone else.
    await t.sql(
      `insert into post_comment (id, created_at_utc, post_id, author_user_id, content)
       select gen_random_uuid(), now(), p.id, w.author, 'comment' from post p,
              (select $2::uuid as author union all select $3::uuid from generate_series(1, 3)) w
        where p.territory_id = $1`,
      [place.id, viewerUser.id, other.id],
    );
    await t.sql('vacuum analyze post, post_comment');
    const viewer = { userId: viewerUser.id, seesResidentsOnly: false, blockedUserIds: [] };
    const query = feedPageQuery(
      viewer,
      { territoryId: place.id, anyTags: null, mapEntityId: null, assetId: null },
      { offset: 0, limit: 20 },
      { withInteractions: true },
    );
    const pool = (await fork().getConnection().getNativeClient()) as pg.Pool;
    const nodes = await executedPlanOf(pool, query);
    // Before the index, a BitmapAnd of the post's comments and all of the viewer's, per row.
    expect(
      nodes.filter((n) => n['Relation Name'] === 'post_comment' || n['Node Type'] === 'BitmapAnd').map((n) => `${n['Index Name']} ${n['Actual Loops']}`),
      planSummary(nodes),
    ).toEqual(['post_comment_author_post_idx 20']);
    const rows = await runOnPool<{ commented_by_me: boolean }>(pool, query);
    expect(rows.map((r) => r.commented_by_me)).toEqual(Array(20).fill(true));
  });

  it('whether the reader has hidden posts is a probe of post_hidden_author_idx with the access; without any, the plain statement answers what the hidden branch would', async () => {
    const place = await newTerritory(t);
    const author = await newUser(t);
    const sanctioned = await newUser(t);
    const reader = await newUser(t);
    await insertPublicPosts(place.id, author.id, 1500);
    // Many hidden posts in the territory (150 of the author's, two of another one's), none of the reader's.
    await t.sql(`update post set status = 'HIDDEN' where territory_id = $1 and title like 'Post %7'`, [place.id]);
    await t.sql(`update post set status = 'HIDDEN', author_user_id = $2 where territory_id = $1 and title in ('Post 10', 'Post 20')`, [
      place.id,
      sanctioned.id,
    ]);
    await t.sql('vacuum analyze post');
    const pool = (await fork().getConnection().getNativeClient()) as pg.Pool;
    const flagOf = async (userId: string, asked = true) =>
      (await runOnPool<TerritoryAccessRow>(pool, territoryAccessQuery(place.id, userId, null, asked)))[0]!.has_own_hidden_posts;
    expect(await flagOf(sanctioned.id)).toBe(true);
    expect(await flagOf(reader.id)).toBe(false);
    expect(await flagOf(author.id)).toBe(true);
    // Not asked: not read.
    expect(await flagOf(sanctioned.id, false)).toBe(false);
    const nodes = await executedPlanOf(pool, territoryAccessQuery(place.id, sanctioned.id, null, true));
    const postReads = nodes.filter((n) => n['Relation Name'] === 'post');
    expect(
      postReads.map((n) => `${n['Node Type']} ${n['Index Name']}`),
      planSummary(nodes),
    ).toEqual(['Index Only Scan post_hidden_author_idx']);
    const unasked = await executedPlanOf(pool, territoryAccessQuery(place.id, sanctioned.id, null, false));
    expect(
      unasked.filter((n) => n['Relation Name'] === 'post' && (n['Actual Loops'] ?? 0) > 0),
      planSummary(unasked),
    ).toEqual([]);

    // The reader without hidden posts: the plain statement and the hidden branch answer the same pages.
    const filter = { territoryId: place.id, anyTags: null, mapEntityId: null, assetId: null };
    const plain = { userId: reader.id, seesResidentsOnly: true, blockedUserIds: [] };
    for (const offset of [0, 20, 400]) {
      const page = { offset, limit: 20 };
      const rows = await runOnPool(pool, feedPageQuery(plain, filter, page));
      expect(rows).toHaveLength(20);
      expect(rows).toEqual(await runOnPool(pool, feedPageQuery({ ...plain, seesHidden: 'OWN' }, filter, page)));
    }
    expect(await runOnPool(pool, feedCountQuery(plain, filter))).toEqual(await runOnPool(pool, feedCountQuery({ ...plain, seesHidden: 'OWN' }, filter)));
  });

  it("the plain feed's pages are planned once: the first page's limit is in the text, a later page is cut from a span of rows in the text", async () => {
    const place = await newTerritory(t);
    const author = await newUser(t);
    await insertPublicPosts(place.id, author.id, 5000);
    await t.sql('vacuum analyze post');
    expect(pageSlice({ offset: 0, limit: 20 }, 20)).toEqual({ sql: 'limit 20', params: [] });
    expect(pageSlice({ offset: 40, limit: 20 }, 20)).toEqual({ sql: 'offset ?::int limit ?::int', params: [40, 20] });
    expect(pageSlice({ offset: 0, limit: 7 }, 20)).toEqual({ sql: 'offset ?::int limit ?::int', params: [0, 7] });
    const viewer = { userId: author.id, seesResidentsOnly: true, blockedUserIds: [] };
    const filter = { territoryId: place.id, anyTags: null, mapEntityId: null, assetId: null };
    const pageAt = (offset: number) => feedPageQuery(viewer, filter, { offset, limit: 20 });
    const first = pageAt(0);
    expect(first.params).toEqual([author.id, place.id]);
    // A later page: the span of rows (64, 512 or 4,096: the first that holds the page's end) and the page size are in
    // the text, the offset is its one parameter; beyond the last span, both limits are parameters.
    expect(pageAt(40).sql).toMatch(/limit 64\) k\s.*offset \?::int limit 20\) k join post p on p.id = k.id\) p/s);
    expect(pageAt(40).params).toEqual([author.id, place.id, 40]);
    expect(pageAt(44).sql).toBe(pageAt(20).sql);
    expect(pageAt(45).sql).toMatch(/limit 512\) k/);
    expect(pageAt(4076).sql).toMatch(/limit 4096\) k/);
    expect(pageAt(4077).params).toEqual([author.id, place.id, 4097, 4077, 20]);
    // Spans and a first page's limit for the default page size only (each text takes a statement name): another size
    // keeps both parameters.
    expect(feedPageQuery(viewer, filter, { offset: 40, limit: 10 }).params).toEqual([author.id, place.id, 50, 40, 10]);
    expect(feedPageQuery(viewer, filter, { offset: 0, limit: 7 }).params).toEqual([author.id, place.id, 7, 0, 7]);

    // One connection, so that its prepared statements can be read back.
    const pool = (await fork().getConnection().getNativeClient()) as pg.Pool;
    const client = await pool.connect();
    try {
      const asPool = client as unknown as pg.Pool;
      const plans = async (query: typeof first) =>
        (
          await client.query<{ generic_plans: string; custom_plans: string }>(
            'select generic_plans, custom_plans from pg_prepared_statements where statement = $1',
            [toNumberedParams(query).sql],
          )
        ).rows[0];
      // PostgreSQL plans the first page once for all (generic), and a span's later pages too: with `offset ? limit ?`
      // alone it costed a generic plan for a tenth of the territory's rows, above the custom plans of the pages, and
      // planned every call. (The wider spans keep theirs at full bench data, 100k territories: bench/PROFILE.md. Here a
      // generic plan is costed for this file's average territory, ~700 posts, which makes a 512-row span look dear.)
      for (const offset of [0, 40]) {
        for (let i = 0; i < 8; i++) await runPreparedOnPool(asPool, pageAt(offset));
        expect(Number((await plans(pageAt(offset)))?.generic_plans), `offset ${offset}`).toBeGreaterThan(0);
      }
      // The same rows as the first page asked with parameters, and as the first rows' last 20 at each span's edges.
      const withParams = { sql: first.sql.replace('limit 20', 'offset ?::int limit ?::int'), params: [...first.params, 0, 20] };
      expect(await runPreparedOnPool(asPool, first)).toEqual(await runOnPool(asPool, withParams));
      const all = await runOnPool<{ id: string }>(asPool, feedPageQuery(viewer, filter, { offset: 0, limit: 5000 }));
      expect(all).toHaveLength(5000);
      for (const offset of [20, 44, 45, 492, 493, 4076, 4077, 4980]) {
        const rows = await runPreparedOnPool(asPool, pageAt(offset));
        expect(rows, `offset ${offset}`).toEqual(all.slice(offset, offset + 20));
        expect(rows).toHaveLength(20);
      }
      expect(await runPreparedOnPool(asPool, feedPageQuery(viewer, filter, { offset: 45, limit: 10 }))).toEqual(all.slice(45, 55));
    } finally {
      client.release();
    }
  });
});

describe("the feed's statement texts", () => {
  it('stay few per viewer shape, whatever the page, size or offset asked (each is a statement name of the 64 every connection holds)', () => {
    const filter = { territoryId: newId(), anyTags: null, mapEntityId: null, assetId: null };
    const viewers = [
      { userId: newId(), seesResidentsOnly: true, blockedUserIds: [] },
      { userId: newId(), seesResidentsOnly: false, blockedUserIds: [newId()] },
    ];
    for (const viewer of viewers) {
      const texts = new Set<string>();
      for (const options of [{}, { withTotal: true }, { withInteractions: true, withTotal: true }]) {
        for (let offset = 0; offset <= 10_000; offset += 20) texts.add(feedPageQuery(viewer, filter, { offset, limit: 20 }, options).sql);
        for (const page of [7, 20, 33, 50, 100])
          for (const offset of [0, 13, 200, 5000]) texts.add(feedPageQuery(viewer, filter, { offset, limit: page }, options).sql);
      }
      // Per variant (list, page with its count, journeys screen): the first page of the default size, three spans of
      // it, and one text for every other page, whatever its size (a text per size asked would let a client's sizes
      // take the statement names of the key lookups that come after them).
      expect(texts.size).toBe(3 * (1 + 3 + 1));
      expect(feedCountQuery(viewer, filter).sql).toBe(feedCountQuery({ ...viewer, userId: newId() }, { ...filter, territoryId: newId() }).sql);
    }
  });
});
