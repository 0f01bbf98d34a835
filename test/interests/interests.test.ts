import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interestsOfQuery } from '../../src/routers/interests/interests.queries.js';
import { countRows, newUser, type TestUser } from '../factories/index.js';
import { expectIndexedRead } from '../factories/query-plan.js';
import { countForks } from '../setup/forks.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let forks: ReturnType<typeof countForks>;
beforeAll(async () => {
  t = await createTestApp();
  forks = countForks(t);
});
afterAll(() => t.close());

const url = '/api/v1/users/me/interests';
const add = (user: TestUser, interestTag: unknown) => t.app.inject({ method: 'POST', url, headers: user.headers, payload: { interestTag } });
const list = async (user: TestUser) => (await t.app.inject({ method: 'GET', url, headers: user.headers })).json() as string[];
const rowsOf = (user: TestUser) => countRows(t, 'user_interest', 'user_id = $1', [user.id]);

describe('interests: authentication', () => {
  it('every operation needs a token', async () => {
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url, payload: { interestTag: 'x' } })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'DELETE', url: `${url}/x` })).statusCode).toBe(401);
  });
});

describe('GET|POST /api/v1/users/me/interests', () => {
  it('starts empty, adds a normalized tag with 201 and answers the list', async () => {
    const user = await newUser(t);
    expect(await list(user)).toEqual([]);
    const res = await add(user, '  Hiking Trails ');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(['hiking trails']);
    const second = await add(user, 'Ação-Social 2');
    expect(second.statusCode).toBe(201);
    expect(second.json()).toEqual(['hiking trails', 'ação-social 2']);
    expect(await list(user)).toEqual(['hiking trails', 'ação-social 2']);
  });

  it('does not add a duplicate: 200 with the unchanged list', async () => {
    const user = await newUser(t);
    await add(user, 'gardening');
    const again = await add(user, ' GARDENING');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(['gardening']);
    expect(await rowsOf(user)).toBe(1);
  });

  it('is 400 for empty, too long, or disallowed characters, writing nothing', async () => {
    const user = await newUser(t);
    for (const bad of ['', '   ', 'a'.repeat(51), 'rock&roll', '<b>x</b>', 'tab\there', 42, null]) {
      const res = await add(user, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'interestTag' }] });
    }
    const missing = await t.app.inject({ method: 'POST', url, headers: user.headers, payload: {} });
    expect(missing.statusCode).toBe(400);
    expect(await rowsOf(user)).toBe(0);
    const fifty = await add(user, `  ${'B'.repeat(50)}  `);
    expect(fifty.statusCode).toBe(201);
  });

  it('refuses the 11th tag with 400; a duplicate at the limit is still 200', async () => {
    const user = await newUser(t);
    for (let i = 1; i <= 10; i++) expect((await add(user, `tag ${i}`)).statusCode).toBe(201);
    const eleventh = await add(user, 'tag 11');
    expect(eleventh.statusCode).toBe(400);
    expect(eleventh.json()).toMatchObject({ code: 'INTEREST_LIMIT_REACHED', errors: [{ field: 'interestTag' }] });
    expect(await rowsOf(user)).toBe(10);
    expect((await add(user, 'TAG 3')).statusCode).toBe(200);
  });

  it('holds the limit under concurrent additions', async () => {
    const user = await newUser(t);
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => add(user, `concurrent ${i}`)));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 400)).toHaveLength(6);
    expect(await rowsOf(user)).toBe(10);
  });

  it('adds the same tag concurrently only once', async () => {
    const user = await newUser(t);
    const results = await Promise.all(Array.from({ length: 6 }, () => add(user, 'cycling')));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(await rowsOf(user)).toBe(1);
  });

  it('keeps users apart', async () => {
    const a = await newUser(t);
    const b = await newUser(t);
    await add(a, 'music');
    expect(await list(b)).toEqual([]);
  });

  it('the list reads on the pool: no fork', async () => {
    const user = await newUser(t);
    await forks.expectReadsWithoutFork(user, [[url, (b) => expect(b).toEqual([])]]);
    await add(user, 'swimming');
    await add(user, 'Archery');
    await forks.expectReadsWithoutFork(user, [[url, (b) => expect(b).toEqual(['swimming', 'archery'])]]);
  });

  it('works over tRPC too', async () => {
    const user = await newUser(t);
    const res = await t.app.inject({ method: 'POST', url: '/trpc/interests.add', headers: user.headers, payload: { interestTag: 'Chess' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ result: { data: ['chess'] } });
  });
});

describe('DELETE /api/v1/users/me/interests/{tag}', () => {
  it('removes the tag (normalized, URL-encoded) with 204, and is 204 when absent', async () => {
    const user = await newUser(t);
    await add(user, 'hiking trails');
    await add(user, 'café');
    const removed = await t.app.inject({ method: 'DELETE', url: `${url}/${encodeURIComponent('Hiking Trails')}`, headers: user.headers });
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe('');
    expect(await list(user)).toEqual(['café']);
    const absent = await t.app.inject({ method: 'DELETE', url: `${url}/${encodeURIComponent('hiking trails')}`, headers: user.headers });
    expect(absent.statusCode).toBe(204);
    expect(await list(user)).toEqual(['café']);
  });

  it("only removes the caller's own tag", async () => {
    const owner = await newUser(t);
    const other = await newUser(t);
    await add(owner, 'birds');
    expect((await t.app.inject({ method: 'DELETE', url: `${url}/birds`, headers: other.headers })).statusCode).toBe(204);
    expect(await list(owner)).toEqual(['birds']);
  });

  it('is 204 for a tag that could never exist (spec: 204 even when absent), removing nothing', async () => {
    const user = await newUser(t);
    await add(user, 'art');
    const res = await t.app.inject({ method: 'DELETE', url: `${url}/${encodeURIComponent('art!')}`, headers: user.headers });
    expect(res.statusCode).toBe(204);
    const long = await t.app.inject({ method: 'DELETE', url: `${url}/${'x'.repeat(60)}`, headers: user.headers });
    expect(long.statusCode).toBe(204);
    expect(await rowsOf(user)).toBe(1);
  });
});

describe('the list of interests uses an index (EXPLAIN on 20000 tags)', () => {
  it("reads a user's tags through the (user_id, tag) unique index, never scanning the table", async () => {
    // 2000 users with 10 tags each.
    await t.sql(`
      insert into app_user (id, created_at_utc, display_name, auth_provider, external_id, identity_verification_status)
      select gen_random_uuid(), now(), 'Interested ' || i, 'test', 'index-interested-' || i, 'Unverified' from generate_series(1, 2000) as i`);
    await t.sql(`
      insert into user_interest (id, created_at_utc, user_id, tag)
      select gen_random_uuid(), now() - make_interval(mins => k), u.id, 'tag ' || k
        from app_user u, generate_series(1, 10) as k where u.external_id like 'index-interested-%'`);
    await t.sql('vacuum analyze user_interest');
    const [user] = await t.sql<{ id: string }>(`select id from app_user where external_id = 'index-interested-1000'`);
    await expectIndexedRead(t, interestsOfQuery(user!.id), ['user_interest'], /^user_interest_user_id_tag_unique$/);
  });
});
