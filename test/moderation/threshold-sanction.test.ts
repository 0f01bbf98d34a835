/**
 * The automatic sanction as a user meets it (DESIGN 14, issue 12): the report that brings a target to the threshold
 * sends the report-threshold job in its own transaction, so the sanction follows at once (not at the next run of
 * the one-minute schedule); it is applied once per target and territory; a hidden post stays visible to its author
 * and the territory's curators and moderators only. The job workers run (unlike test/moderation/reports.test.ts);
 * waiting for them is a bounded poll on a condition.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSystemConfig } from '../../src/db/seed/system-config.js';
import { runReportThreshold, sendThresholdJob } from '../../src/routers/reports/report-threshold.job.js';
import { newMapEntity, newPost } from '../factories/content.js';
import { countRows, newAdmin, newCurator, newModerator, newResident, newTerritory, newUser, newVisitor, type TestUser } from '../factories/index.js';
import { clientToken, v2 } from '../journeys/helpers.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await seedSystemConfig(t.deps.orm.em.fork());
});
afterAll(() => t.close());

/** Polls `probe` until it answers something truthy; fails after `timeoutMs` (a job worker polls every 2 s). */
async function until<T>(what: string, probe: () => Promise<T | false | null | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

const reportPost = (user: TestUser, postId: string) =>
  t.app.inject({ method: 'POST', url: `/api/v1/reports/posts/${postId}`, headers: user.headers, payload: { reason: 'Spam' } });
const reportUser = (user: TestUser, userId: string, territoryId: string) =>
  t.app.inject({ method: 'POST', url: `/api/v1/reports/users/${userId}`, headers: user.headers, payload: { reason: 'Abuse', territoryId } });
const setConfig = (key: string, value: string) => t.sql(`update system_config set value = $2 where key = $1`, [key, value]);
const postStatus = async (postId: string) => (await t.sql<{ status: string }>('select status from post where id = $1', [postId]))[0]!.status;
/** The report-threshold jobs sent for a target (pg-boss's own table), and how many of them are finished. */
async function jobsOf(targetId: string) {
  const [row] = await t.sql<{ sent: number; done: number }>(
    `select count(*)::int as sent, (count(*) filter (where state = 'completed'))::int as done
       from pgboss.job where name = 'report-threshold' and data->>'targetId' = $1`,
    [targetId],
  );
  return row!;
}
const sanctionsOf = (targetId: string) => countRows(t, 'report_sanction', 'target_id = $1', [targetId]);
const sanctionAudits = (targetId: string) => countRows(t, 'audit_entry', `action = 'report.sanction_applied' and subject_id = $1`, [targetId]);
const runJob = (target: { territoryId: string; targetType: 'POST' | 'USER'; targetId: string }) => runReportThreshold(t.deps.orm.em.fork(), new Date(), target);
const newReporters = (n: number) => Promise.all(Array.from({ length: n }, () => newUser(t)));

describe('the report that reaches the threshold sends the sanction job at once', () => {
  it('three concurrent reports of a post: one job, sent in the crossing report transaction; the post is hidden once', async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const target = { territoryId: territory.id, targetType: 'POST' as const, targetId: postId };

    const answers = await Promise.all((await newReporters(3)).map((r) => reportPost(r, postId)));
    expect(answers.map((a) => a.statusCode)).toEqual([201, 201, 201]);
    // The reports are serialised on the target: exactly the one that saw the third reporter sent the job, and it
    // was committed with that report (it exists as soon as the answers do).
    expect((await jobsOf(postId)).sent).toBe(1);
    await until('the post to be hidden', async () => (await postStatus(postId)) === 'HIDDEN');
    await until('the job to complete', async () => (await jobsOf(postId)).done === 1);
    expect(await sanctionsOf(postId)).toBe(1);
    expect(await sanctionAudits(postId)).toBe(1);

    // A re-run, sequential or concurrent, applies nothing new.
    expect(await runJob(target)).toBe(0);
    expect((await Promise.all([runJob(target), runJob(target), runJob(target)])).reduce((a, b) => a + b, 0)).toBe(0);
    expect(await sanctionsOf(postId)).toBe(1);
    expect(await sanctionAudits(postId)).toBe(1);
    expect(await countRows(t, 'report', `target_id = $1 and status = 'ACTIONED'`, [postId])).toBe(3);
  });

  it('with a threshold of 1, three concurrent reports that each cross it restrict the user once', async () => {
    const territory = await newTerritory(t);
    const target = await newResident(t, territory);
    await setConfig('Reports:ThresholdReporters', '1');
    try {
      const answers = await Promise.all((await newReporters(3)).map((r) => reportUser(r, target.id, territory.id)));
      expect(answers.map((a) => a.statusCode)).toEqual([201, 201, 201]);
      await until('the restriction', async () => (await countRows(t, 'posting_restriction', 'user_id = $1', [target.id])) > 0);
      // Every crossing report may send (the singleton key folds sends of one slot); every job has run.
      const sent = (await jobsOf(target.id)).sent;
      expect(sent).toBeGreaterThanOrEqual(1);
      await until('every job to complete', async () => (await jobsOf(target.id)).done === sent);
    } finally {
      await setConfig('Reports:ThresholdReporters', '3');
    }
    expect(await sanctionsOf(target.id)).toBe(1);
    expect(await sanctionAudits(target.id)).toBe(1);
    expect(await countRows(t, 'posting_restriction', 'user_id = $1', [target.id])).toBe(1);
    const refused = await t.app.inject({
      method: 'POST',
      url: '/api/v1/feed',
      headers: target.headers,
      payload: { territoryId: territory.id, title: 'Hi', content: 'There' },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'POSTING_RESTRICTED' });
  });

  it('below the threshold nothing is sent; a process without a job runner sends nothing (the schedule does it)', async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    for (const reporter of await newReporters(2)) expect((await reportPost(reporter, postId)).statusCode).toBe(201);
    expect((await jobsOf(postId)).sent).toBe(0);
    const target = { territoryId: territory.id, targetType: 'POST' as const, targetId: postId };
    const stopped = { boss: t.deps.jobs.boss, isRunning: () => false };
    expect(await t.deps.orm.em.fork().transactional((tx) => sendThresholdJob(tx, stopped, target))).toBe(false);
    expect(await t.deps.orm.em.fork().transactional((tx) => sendThresholdJob(tx, null, target))).toBe(false);
    // A send rolled back with its transaction leaves no job.
    await expect(
      t.deps.orm.em.fork().transactional(async (tx) => {
        expect(await sendThresholdJob(tx, t.deps.jobs, target)).toBe(true);
        throw new Error('the report failed');
      }),
    ).rejects.toThrow('the report failed');
    expect((await jobsOf(postId)).sent).toBe(0);
    expect(await postStatus(postId)).toBe('PUBLISHED');
  });
});

describe('once per target and territory', () => {
  it('a new wave of reports after the restriction ended sanctions nothing by itself; a moderator may restrict again', async () => {
    const territory = await newTerritory(t);
    const moderator = await newModerator(t, territory);
    const target = await newResident(t, territory);
    for (const reporter of await newReporters(3)) expect((await reportUser(reporter, target.id, territory.id)).statusCode).toBe(201);
    await until('the restriction', async () => (await countRows(t, 'posting_restriction', 'user_id = $1', [target.id])) > 0);
    await until('the job to complete', async () => (await jobsOf(target.id)).done === 1);

    // The restriction ended; three more people report the user within the window.
    await t.sql(`update posting_restriction set ends_at_utc = now() - interval '1 second' where user_id = $1`, [target.id]);
    const wave = await Promise.all((await newReporters(3)).map((r) => reportUser(r, target.id, territory.id)));
    expect(wave.map((a) => a.statusCode)).toEqual([201, 201, 201]);
    expect((await jobsOf(target.id)).sent).toBe(1);
    expect(await runJob({ territoryId: territory.id, targetType: 'USER', targetId: target.id })).toBe(0);
    expect(await sanctionsOf(target.id)).toBe(1);
    expect(await countRows(t, 'posting_restriction', 'user_id = $1', [target.id])).toBe(1);
    expect(await countRows(t, 'report', `target_id = $1 and status = 'OPEN'`, [target.id])).toBe(3);
    const post = () =>
      t.app.inject({ method: 'POST', url: '/api/v1/feed', headers: target.headers, payload: { territoryId: territory.id, title: 'Back', content: 'Again' } });
    expect((await post()).statusCode).toBe(201);

    // The new reports are moderation cases: a moderator's APPROVED restricts again.
    const [item] = await t.sql<{ id: string }>(
      `select w.id from work_item w join report r on r.id = w.subject_id
        where w.type = 'MODERATION_CASE' and w.status = 'PENDING' and r.target_id = $1 limit 1`,
      [target.id],
    );
    const decided = await t.app.inject({
      method: 'POST',
      url: `/api/v1/territories/${territory.id}/work-items/${item!.id}/complete`,
      headers: moderator.headers,
      payload: { outcome: 'APPROVED' },
    });
    expect(decided.statusCode).toBe(200);
    expect(await countRows(t, 'posting_restriction', 'user_id = $1 and ends_at_utc > now()', [target.id])).toBe(1);
    expect((await post()).statusCode).toBe(403);
    expect(await sanctionsOf(target.id)).toBe(1);
  });

  it('the database refuses a second sanction row of the same target and territory', async () => {
    const territory = await newTerritory(t);
    const target = await newResident(t, territory);
    const insert = () =>
      t.sql(
        `insert into report_sanction (id, created_at_utc, territory_id, target_type, target_id, source, reporter_count)
         values (gen_random_uuid(), now(), $1, 'USER', $2, 'THRESHOLD', 3)`,
        [territory.id, target.id],
      );
    await insert();
    await expect(insert()).rejects.toMatchObject({ code: '23505' });
    // Another territory is another key.
    const elsewhere = await newTerritory(t);
    await t.sql(
      `insert into report_sanction (id, created_at_utc, territory_id, target_type, target_id, source, reporter_count)
       values (gen_random_uuid(), now(), $1, 'USER', $2, 'THRESHOLD', 3)`,
      [elsewhere.id, target.id],
    );
    expect(await sanctionsOf(target.id)).toBe(2);
  });
});

describe('a hidden post', () => {
  it('disappears from feed lists, counts, map pins and journeys for everyone but its author and the territory curators and moderators', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const moderator = await newModerator(t, territory);
    const author = await newResident(t, territory);
    const resident = await newResident(t, territory);
    const visitor = await newVisitor(t, territory);
    const admin = await newAdmin(t);
    const entity = await newMapEntity(t, { territoryId: territory.id, createdByUserId: resident.id, status: 'VALIDATED' });
    const kept = await newPost(t, { territoryId: territory.id, authorUserId: resident.id, mapEntityId: entity, createdAt: new Date(Date.now() - 60_000) });
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id, mapEntityId: entity, title: 'Reported' });
    await Promise.all((await newReporters(3)).map((r) => reportPost(r, postId)));
    await until('the post to be hidden', async () => (await postStatus(postId)) === 'HIDDEN');

    const get = (user: TestUser, url: string) => t.app.inject({ method: 'GET', url, headers: user.headers });
    const client = await clientToken(t, admin, ['journeys:read']);
    async function whatSees(user: TestUser) {
      const feed = await get(user, `/api/v1/feed?territoryId=${territory.id}`);
      const paged = await get(user, `/api/v1/feed/paged?territoryId=${territory.id}`);
      const pins = await get(user, `/api/v1/map/pins/paged?territoryId=${territory.id}&types=post`);
      const journey = await v2(t, 'GET', `/feed/territory-feed?territoryId=${territory.id}`, { client, user });
      for (const res of [feed, paged, pins, journey]) expect(res.statusCode, res.body).toBe(200);
      const feedIds = feed.json().map((p: { id: string }) => p.id);
      const pagedIds = paged.json().items.map((p: { id: string }) => p.id);
      const pinIds = pins.json().items.map((p: { id: string }) => p.id);
      const journeyIds = journey.json().items.map((i: { post: { id: string } }) => i.post.id);
      // Lists and their counts agree, whoever reads.
      expect(pagedIds).toEqual(feedIds);
      expect(journeyIds).toEqual(feedIds);
      expect(paged.json().totalCount).toBe(feedIds.length);
      expect(journey.json().pagination.totalCount).toBe(feedIds.length);
      expect(pins.json().totalCount).toBe(pinIds.length);
      const one = await get(user, `/api/v1/feed/${postId}`);
      const comments = await get(user, `/api/v1/feed/${postId}/comments`);
      return { feedIds, pinIds, post: one.statusCode, comments: comments.statusCode, status: one.statusCode === 200 ? one.json().status : null };
    }

    for (const who of [author, curator, moderator]) {
      expect(await whatSees(who)).toEqual({ feedIds: [postId, kept], pinIds: [postId, kept], post: 200, comments: 200, status: 'HIDDEN' });
    }
    for (const who of [resident, visitor, await newUser(t)]) {
      expect(await whatSees(who)).toEqual({ feedIds: [kept], pinIds: [kept], post: 404, comments: 404, status: null });
    }
    // The author finds it among their posts too, marked HIDDEN.
    const mine = await get(author, `/api/v1/feed/me?territoryId=${territory.id}`);
    expect(mine.json().map((p: { id: string; status: string }) => [p.id, p.status])).toEqual([[postId, 'HIDDEN']]);
    // Seeing is read-only: nobody interacts with a hidden post any more, and it is not reported again.
    const like = await t.app.inject({ method: 'POST', url: `/api/v1/feed/${postId}/likes`, headers: author.headers });
    expect(like.statusCode).toBe(404);
    expect((await reportPost(moderator, postId)).statusCode).toBe(404);
    expect(await countRows(t, 'report', 'target_id = $1', [postId])).toBe(3);
  });
});
