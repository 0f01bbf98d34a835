import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { feedCountQuery, feedPageQuery } from '../../src/routers/feed/feed.queries.js';
import { newTerritory, newUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * A feed filtered by the reader's interests (`filterByInterests`: `tags && their tags`). A database of its own: its
 * posts' tags and statuses would move the statistics other files' plan assertions read.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const fork = () => t.deps.orm.em.fork();

describe('a feed filtered by interests (EXPLAIN on a few thousand posts)', () => {
  it("a feed filtered by the reader's interests: its count and a rare tag's page read the tags index, never the territory's every post", async () => {
    const territory = await newTerritory(t);
    const author = await newUser(t);
    // 4000 posts: every other one tagged `common`, one in 500 `rare`, a few unpublished.
    await t.sql(
      `insert into post (id, created_at_utc, updated_at_utc, territory_id, author_user_id, title, content, type, visibility, status, tags)
       select gen_random_uuid(), now() - (g || ' seconds')::interval, now(), $1, $2, 'Post ' || g, 'content', 'POST', 'PUBLIC',
              case when g % 97 = 0 then 'REJECTED' else 'PUBLISHED' end,
              array_remove(array[case when g % 2 = 0 then 'common' end, case when g % 500 = 0 then 'rare' end], null)
         from generate_series(1, 4000) g`,
      [territory.id, author.id],
    );
    await t.sql('vacuum analyze post');
    const em = fork();
    const explain = async (query: { sql: string; params: unknown[] }) => JSON.stringify(await em.execute(`explain (format json) ${query.sql}`, query.params));
    const reader = { userId: newId(), seesResidentsOnly: true, blockedUserIds: [] };
    const rare = { territoryId: territory.id, anyTags: ['rare'], mapEntityId: null, assetId: null };
    for (const plan of [await explain(feedCountQuery(reader, rare)), await explain(feedPageQuery(reader, rare, { offset: 0, limit: 20 }))]) {
      expect(plan).toContain('"Index Name":"post_feed_tags_idx"');
      expect(plan).not.toMatch(/"Node Type":"Seq Scan"[^{}]*"Relation Name":"post"/);
    }
    // The counts are exact.
    for (const tags of [['rare'], ['common'], ['rare', 'common'], ['none']]) {
      const query = feedCountQuery(reader, { ...rare, anyTags: tags });
      const [{ total }] = (await em.execute<{ total: number }[]>(query.sql, query.params)) as [{ total: number }];
      const [{ n }] = (await t.sql<{ n: number }>(
        `select count(*)::int as n from post where territory_id = $1 and status = 'PUBLISHED' and tags && $2::text[]`,
        [territory.id, tags],
      )) as [{ n: number }];
      expect(total, tags.join('+')).toBe(n);
    }
  });
});
