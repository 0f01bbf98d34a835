/**
 * A territory's votings page stays index-backed however many votings there are: EXPLAIN of the statement exactly as
 * the service sends it, over 6,000 votings in 100 territories.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { visibleVotingsQuery } from '../../src/routers/votings/votings.queries.js';
import { newUser } from '../factories/index.js';
import { expectIndexedRead } from '../factories/query-plan.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let viewerId: string;
let territoryId: string;
beforeAll(async () => {
  t = await createTestApp();
  viewerId = (await newUser(t)).id;
  await t.sql(`
    insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
    select gen_random_uuid(), now(), 'Votings ' || i, null, 'City', 'ST', -20 + (i % 10), -50 + (i / 10), 5, 'ACTIVE', '{}', '{}'
      from generate_series(0, 99) as i`);
  // A fifth Drafts, a tenth CuratorsOnly; no dates, so the votings-schedule job has nothing to do with them.
  await t.sql(
    `insert into voting (id, created_at_utc, territory_id, created_by_user_id, type, title, options, visibility, status)
     select gen_random_uuid(), now() - make_interval(mins => i), ts.ids[1 + i % 100], $1, 'ThemePrioritization', 'Voting ' || i, '{A,B}',
            case when i % 10 = 0 then 'CuratorsOnly' else 'AllMembers' end,
            case when i % 5 = 0 then 'Draft' when i % 5 = 1 then 'Open' else 'Approved' end
       from generate_series(1, 6000) as i, (select array_agg(id order by name) as ids from territory) ts`,
    [viewerId],
  );
  await t.sql('vacuum analyze territory, voting');
  territoryId = (await t.sql<{ id: string }>(`select id from territory where name = 'Votings 0'`))[0]!.id;
});
afterAll(() => t.close());

describe("a territory's votings page uses voting_territory_idx (EXPLAIN on 6,000 votings)", () => {
  it.each([
    { curator: false, status: undefined },
    { curator: true, status: undefined },
    { curator: false, status: 'Open' as const },
    { curator: true, status: 'Draft' as const },
  ])('curator: $curator, status: $status; no sequential scan of voting', async ({ curator, status }) => {
    await expectIndexedRead(
      t,
      visibleVotingsQuery({ territoryId, viewerId, curator, ...(status ? { status } : {}), skip: 20, take: 20 }),
      ['voting'],
      /^voting_territory_idx$/,
    );
  });
});
