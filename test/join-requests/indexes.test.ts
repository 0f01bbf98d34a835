/**
 * The incoming join requests (listed and counted) stay index-backed however many requests there are: EXPLAIN of the
 * statements exactly as the service sends them, over 60,000 requests in 100 territories.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type IncomingFilter, incomingCountQuery, incomingQuery } from '../../src/routers/join-requests/join-requests.queries.js';
import { newUser } from '../factories/index.js';
import { expectIndexedRead } from '../factories/query-plan.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let userId: string;
let curated: string[];
beforeAll(async () => {
  t = await createTestApp();
  const requester = await newUser(t);
  const other = await newUser(t);
  userId = (await newUser(t)).id;
  await t.sql(`
    insert into territory (id, created_at_utc, name, description, city, state, latitude, longitude, radius_km, status, tags, enabled_flags)
    select gen_random_uuid(), now(), 'Requests ' || i, null, 'City', 'ST', -20 + (i % 10), -50 + (i / 10), 5, 'ACTIVE', '{}', '{}'
      from generate_series(0, 99) as i`);
  // One PENDING request per territory (one per requester and territory at most), the others decided or cancelled.
  await t.sql(
    `insert into join_request (id, created_at_utc, territory_id, requester_user_id, message, status)
     select gen_random_uuid(), now() - make_interval(mins => i), ts.ids[1 + i % 100], $1, null,
            case when i <= 100 then 'PENDING' when i % 3 = 0 then 'APPROVED' when i % 3 = 1 then 'REJECTED' else 'CANCELLED' end
       from generate_series(1, 60000) as i, (select array_agg(id order by name) as ids from territory) ts`,
    [requester.id],
  );
  // Every request is addressed to another user; one in 500 also to the user.
  await t.sql(`insert into join_request_recipient (join_request_id, recipient_user_id) select id, $1 from join_request`, [other.id]);
  await t.sql(
    `insert into join_request_recipient (join_request_id, recipient_user_id)
     select id, $1 from (select id, row_number() over (order by id) as n from join_request) r where n % 500 = 0`,
    [userId],
  );
  await t.sql('vacuum analyze territory, join_request, join_request_recipient');
  curated = (await t.sql<{ id: string }>(`select id from territory where name in ('Requests 1', 'Requests 2')`)).map((r) => r.id);
});
afterAll(() => t.close());

/** The tables the incoming reads touch: neither is ever scanned whole. */
const TABLES = ['join_request', 'join_request_recipient'];

describe('incoming join requests read through their indexes (EXPLAIN on 60,000 requests)', () => {
  const filters = (): Record<string, IncomingFilter> => ({
    'a recipient': { userId, curatedTerritoryIds: [] },
    'a recipient and curator of two territories': { userId, curatedTerritoryIds: curated },
    'the same, PENDING only': { userId, curatedTerritoryIds: curated, status: 'PENDING' },
  });

  it.each(['a recipient', 'a recipient and curator of two territories', 'the same, PENDING only'])(
    '%s: the page and the count scan no table sequentially; the recipient index finds the addressed ones',
    async (name) => {
      const filter = filters()[name]!;
      for (const query of [incomingQuery(filter, { offset: 0, limit: 20 }), incomingCountQuery(filter)]) {
        await expectIndexedRead(t, query, TABLES, /^join_request_recipient_recipient_user_id_join_request_id_index$/);
      }
    },
  );

  it("a curator's territories through (territory_id, status, created_at_utc)", async () => {
    const query = incomingQuery(filters()['a recipient and curator of two territories']!, { offset: 0, limit: 20 });
    await expectIndexedRead(t, query, TABLES, /^join_request_territory_id_status_created_at_utc_index$/);
  });
});
