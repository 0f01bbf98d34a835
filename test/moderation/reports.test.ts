import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSystemConfig } from '../../src/db/seed/system-config.js';
import { runReportThreshold } from '../../src/routers/reports/report-threshold.job.js';
import { newPost } from '../factories/content.js';
import { countRows, newCurator, newModerator, newResident, newTerritory, newUser, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  // No job workers here: these tests run the report-threshold job themselves, at the moments they choose (the job
  // a crossing report sends at once, and the schedule, are tested in threshold-sanction.test.ts).
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  await seedSystemConfig(t.deps.orm.em.fork());
});
afterAll(() => t.close());

const reportPost = (user: TestUser, postId: string, payload: Record<string, unknown> = { reason: 'Spam' }) =>
  t.app.inject({ method: 'POST', url: `/api/v1/reports/posts/${postId}`, headers: user.headers, payload });
const reportUser = (user: TestUser, userId: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/v1/reports/users/${userId}`, headers: { ...user.headers, ...headers }, payload });
const list = (user: TestUser, query: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: `/api/v1/reports${query}`, headers: { ...user.headers, ...headers } });
const reportsOf = (targetId: string) => countRows(t, 'report', 'target_id = $1', [targetId]);
const casesOf = (targetId: string) => countRows(t, 'work_item', `type = 'MODERATION_CASE' and payload->>'targetId' = $1`, [targetId]);
const setConfig = (key: string, value: string) => t.sql(`update system_config set value = $2 where key = $1`, [key, value]);
/** The job's sweep over every target; given a target, only that one (other tests' targets share the database). */
const runJob = (target?: { territoryId: string; targetType: 'POST' | 'USER'; targetId: string }) =>
  runReportThreshold(t.deps.orm.em.fork(), new Date(), target);
const complete = (user: TestUser, territoryId: string, workItemId: string, outcome: string) =>
  t.app.inject({
    method: 'POST',
    url: `/api/v1/territories/${territoryId}/work-items/${workItemId}/complete`,
    headers: user.headers,
    payload: { outcome },
  });

describe('POST /api/v1/reports/posts/{postId}', () => {
  it('files a report (201), notifies the curators and opens a MODERATION_CASE; a repeat within the window is 200 with the same report', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const author = await newResident(t, territory);
    const reporter = await newUser(t);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });

    const res = await reportPost(reporter, postId, { reason: 'Spam <b>link</b>', details: 'Posted three times' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.any(String),
      targetType: 'POST',
      targetId: postId,
      territoryId: territory.id,
      reason: 'Spam link',
      details: 'Posted three times',
      status: 'OPEN',
      createdAtUtc: expect.any(String),
    });
    const outbox = await t.sql<{ recipient_user_ids: string[] }>(
      `select recipient_user_ids from outbox_message where type = 'REPORT_CREATED' and data->>'reportId' = $1`,
      [body.id],
    );
    expect(outbox).toHaveLength(1);
    expect(outbox[0]!.recipient_user_ids).toEqual([curator.id]);
    const cases = await t.sql<{ subject_type: string; subject_id: string; territory_id: string; status: string }>(
      `select subject_type, subject_id, territory_id, status from work_item where type = 'MODERATION_CASE' and subject_id = $1`,
      [body.id],
    );
    expect(cases).toEqual([{ subject_type: 'Report', subject_id: body.id, territory_id: territory.id, status: 'PENDING' }]);

    const again = await reportPost(reporter, postId, { reason: 'Another reason' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(body);
    expect(await reportsOf(postId)).toBe(1);
    expect(await casesOf(postId)).toBe(1);
    expect(await countRows(t, 'outbox_message', `type = 'REPORT_CREATED' and data->>'targetId' = $1`, [postId])).toBe(1);
  });

  it('deduplicates within Reports:DedupWindowHours only (read from system config)', async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const reporter = await newUser(t);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const first = await reportPost(reporter, postId);
    expect(first.statusCode).toBe(201);
    // 25 hours later: outside the default 24-hour window, a new report.
    await t.sql(`update report set created_at_utc = now() - interval '25 hours' where id = $1`, [first.json().id]);
    const second = await reportPost(reporter, postId);
    expect(second.statusCode).toBe(201);
    expect(second.json().id).not.toBe(first.json().id);
    // A 48-hour window makes the older report count again... the newest one is answered.
    await setConfig('Reports:DedupWindowHours', '48');
    try {
      const third = await reportPost(reporter, postId);
      expect(third.statusCode).toBe(200);
      expect(third.json().id).toBe(second.json().id);
      await t.sql(`update report set created_at_utc = now() - interval '2 hours' where target_id = $1`, [postId]);
      await setConfig('Reports:DedupWindowHours', '1');
      expect((await reportPost(reporter, postId)).statusCode).toBe(201);
    } finally {
      await setConfig('Reports:DedupWindowHours', '24');
    }
    expect(await reportsOf(postId)).toBe(3);
  });

  it('concurrent repeats by the same person write one report', async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const reporter = await newUser(t);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const answers = await Promise.all([reportPost(reporter, postId), reportPost(reporter, postId), reportPost(reporter, postId)]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 201]);
    expect(await reportsOf(postId)).toBe(1);
  });

  it('a post of someone the reporter blocked is still reportable (block, then report)', async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const reporter = await newUser(t);
    const blocked = await t.app.inject({ method: 'POST', url: `/api/v1/users/${author.id}/block`, headers: reporter.headers });
    expect(blocked.statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/feed/${postId}`, headers: reporter.headers })).statusCode).toBe(404);
    const res = await reportPost(reporter, postId);
    expect(res.statusCode, res.body).toBe(201);
    expect(await countRows(t, 'report', 'target_id = $1 and reporter_user_id = $2', [postId, reporter.id])).toBe(1);
  });

  it("is 400 for one's own post or a bad body, 404 for an unknown or hidden post, 401 without a token; nothing written", async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const reporter = await newUser(t);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const hiddenId = await newPost(t, { territoryId: territory.id, authorUserId: author.id, status: 'HIDDEN' });

    const own = await reportPost(author, postId);
    expect(own.statusCode).toBe(400);
    expect(own.json()).toMatchObject({ code: 'CANNOT_REPORT_SELF' });
    for (const payload of [{}, { reason: '' }, { reason: 'x'.repeat(301) }, { reason: 'ok', details: 'x'.repeat(2001) }, { reason: 42 }]) {
      const res = await reportPost(reporter, postId, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect((await reportPost(reporter, 'not-a-uuid')).statusCode).toBe(400);
    const unknown = await reportPost(reporter, UNKNOWN_ID);
    expect(unknown.statusCode).toBe(404);
    expect((await reportPost(reporter, hiddenId)).statusCode).toBe(404);
    const anonymous = await t.app.inject({ method: 'POST', url: `/api/v1/reports/posts/${postId}`, payload: { reason: 'Spam' } });
    expect(anonymous.statusCode).toBe(401);
    expect(await countRows(t, 'report', 'territory_id = $1', [territory.id])).toBe(0);
    expect(await countRows(t, 'work_item', 'territory_id = $1', [territory.id])).toBe(0);
  });
});

describe('POST /api/v1/reports/users/{userId}', () => {
  it("files a report in the body's territory or the session's selection (201); a repeat is 200", async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const target = await newResident(t, territory);
    const reporter = await newResident(t, territory);
    const res = await reportUser(reporter, target.id, { reason: 'Harassment', territoryId: territory.id });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      targetType: 'USER',
      targetId: target.id,
      territoryId: territory.id,
      reason: 'Harassment',
      details: null,
      status: 'OPEN',
    });
    expect(await countRows(t, 'outbox_message', `type = 'REPORT_CREATED' and $1 = any(recipient_user_ids)`, [curator.id])).toBe(1);

    const other = await newUser(t);
    const select = await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/selection',
      headers: { ...other.headers, 'x-session-id': 'reports-session' },
      payload: { territoryId: territory.id },
    });
    expect(select.statusCode).toBe(200);
    const bySession = await reportUser(other, target.id, { reason: 'Spam' }, { 'x-session-id': 'reports-session' });
    expect(bySession.statusCode).toBe(201);
    expect(bySession.json()).toMatchObject({ territoryId: territory.id });
    const repeat = await reportUser(other, target.id, { reason: 'Spam' }, { 'x-session-id': 'reports-session' });
    expect(repeat.statusCode).toBe(200);
    expect(await reportsOf(target.id)).toBe(2);
  });

  it('reads the territory from the query too (the spec: "may receive territoryId"); the body wins', async () => {
    const [territory, other] = [await newTerritory(t), await newTerritory(t)];
    const target = await newResident(t, territory);
    const reporter = await newResident(t, territory);
    const url = (territoryId: string) => `/api/v1/reports/users/${target.id}?territoryId=${territoryId}`;
    const byQuery = await t.app.inject({ method: 'POST', url: url(territory.id), headers: reporter.headers, payload: { reason: 'Spam' } });
    expect(byQuery.statusCode).toBe(201);
    expect(byQuery.json()).toMatchObject({ territoryId: territory.id, targetId: target.id });
    const second = await newResident(t, other);
    const bodyWins = await t.app.inject({
      method: 'POST',
      url: url('not-a-uuid'),
      headers: second.headers,
      payload: { reason: 'Threats', territoryId: other.id },
    });
    expect(bodyWins.statusCode).toBe(201);
    expect(bodyWins.json()).toMatchObject({ territoryId: other.id });
    const third = await newResident(t, territory);
    const malformed = await t.app.inject({ method: 'POST', url: url('not-a-uuid'), headers: third.headers, payload: { reason: 'Spam' } });
    expect(malformed.statusCode).toBe(400);
    expect(await reportsOf(target.id)).toBe(2);
  });

  it('is 400 without a territory or for oneself, 404 for an unknown user or territory, 401; nothing written', async () => {
    const territory = await newTerritory(t);
    const target = await newResident(t, territory);
    const reporter = await newUser(t);
    const none = await reportUser(reporter, target.id, { reason: 'Spam' });
    expect(none.statusCode).toBe(400);
    expect(none.json()).toMatchObject({ code: 'NO_TERRITORY_SELECTED' });
    const self = await reportUser(reporter, reporter.id, { reason: 'Spam', territoryId: territory.id });
    expect(self.statusCode).toBe(400);
    expect(self.json()).toMatchObject({ code: 'CANNOT_REPORT_SELF' });
    expect((await reportUser(reporter, UNKNOWN_ID, { reason: 'Spam', territoryId: territory.id })).statusCode).toBe(404);
    expect((await reportUser(reporter, target.id, { reason: 'Spam', territoryId: UNKNOWN_ID })).statusCode).toBe(404);
    expect((await reportUser(reporter, target.id, { reason: '', territoryId: territory.id })).statusCode).toBe(400);
    const anonymous = await t.app.inject({ method: 'POST', url: `/api/v1/reports/users/${target.id}`, payload: { reason: 'Spam', territoryId: territory.id } });
    expect(anonymous.statusCode).toBe(401);
    expect(await reportsOf(target.id)).toBe(0);
    expect(await countRows(t, 'report', 'reporter_user_id = $1', [reporter.id])).toBe(0);
  });
});

describe('GET /api/v1/reports (+ /paged)', () => {
  it("lists the territory's reports newest first, filtered, for curators and moderators; 403 for others, 400 for bad filters, 401", async () => {
    const territory = await newTerritory(t);
    const other = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const moderator = await newModerator(t, territory);
    const resident = await newResident(t, territory);
    const author = await newResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const a = (await reportPost(await newUser(t), postId)).json();
    const b = (await reportUser(await newUser(t), author.id, { reason: 'Rude', territoryId: territory.id })).json();
    await reportUser(await newUser(t), author.id, { reason: 'Elsewhere', territoryId: other.id });

    const all = await list(curator, `?territoryId=${territory.id}`);
    expect(all.statusCode).toBe(200);
    expect(all.json().map((r: { id: string }) => r.id)).toEqual([b.id, a.id]);
    const posts = await list(moderator, `?territoryId=${territory.id}&targetType=POST&status=OPEN`);
    expect(posts.json()).toEqual([a]);
    expect((await list(moderator, `?territoryId=${territory.id}&status=DISMISSED`)).json()).toEqual([]);
    expect((await list(curator, `?territoryId=${territory.id}&skip=1&take=1`)).json()).toEqual([a]);

    const paged = await list(curator, `/paged?territoryId=${territory.id}&pageSize=1&pageNumber=2`);
    expect(paged.statusCode).toBe(200);
    expect(paged.json()).toEqual({
      items: [a],
      pageNumber: 2,
      pageSize: 1,
      totalCount: 2,
      totalPages: 2,
      hasPreviousPage: true,
      hasNextPage: false,
    });

    for (const path of ['', '/paged']) {
      expect((await list(resident, `${path}?territoryId=${territory.id}`)).statusCode).toBe(403);
      expect((await list(curator, `${path}?territoryId=${other.id}`)).statusCode).toBe(403);
      expect((await list(curator, `${path}?territoryId=${territory.id}&targetType=ITEM`)).statusCode).toBe(400);
      expect((await list(curator, `${path}?territoryId=${UNKNOWN_ID}`)).statusCode).toBe(404);
      expect((await list(curator, path)).statusCode).toBe(404);
      expect((await t.app.inject({ method: 'GET', url: `/api/v1/reports${path}?territoryId=${territory.id}` })).statusCode).toBe(401);
    }
  });
});

describe('threshold sanction (report-threshold job)', () => {
  it('hides a post reported by Reports:ThresholdReporters distinct people, exactly once even when the job runs twice or concurrently', async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const reporters = [await newUser(t), await newUser(t), await newUser(t)];
    const target = { territoryId: territory.id, targetType: 'POST' as const, targetId: postId };
    await reportPost(reporters[0]!, postId);
    await reportPost(reporters[0]!, postId); // a repeat: still one reporter
    await reportPost(reporters[1]!, postId);
    expect(await runJob(target)).toBe(0);
    expect((await t.sql<{ status: string }>('select status from post where id = $1', [postId]))[0]!.status).toBe('PUBLISHED');

    await reportPost(reporters[2]!, postId);
    const applied = await Promise.all([runJob(target), runJob(target), runJob(target)]);
    expect(applied.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await runJob(target)).toBe(0);
    expect(await countRows(t, 'report_sanction', 'target_id = $1', [postId])).toBe(1);
    expect((await t.sql<{ status: string }>('select status from post where id = $1', [postId]))[0]!.status).toBe('HIDDEN');
    // The target's reports are actioned and their cases closed.
    expect(await countRows(t, 'report', `target_id = $1 and status = 'ACTIONED'`, [postId])).toBe(3);
    expect(await countRows(t, 'work_item', `type = 'MODERATION_CASE' and status = 'PENDING' and payload->>'targetId' = $1`, [postId])).toBe(0);
    // Gone from the feed for other readers.
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/feed/${postId}`, headers: reporters[0]!.headers })).statusCode).toBe(404);
  });

  it('a moderator cannot decide a report about themselves or their post (403 OWN_REQUEST, the report stays OPEN); another moderator can', async () => {
    const territory = await newTerritory(t);
    const moderator = await newModerator(t, territory);
    const caseOf = async (reportId: string) =>
      (await t.sql<{ id: string }>(`select id from work_item where type = 'MODERATION_CASE' and subject_id = $1`, [reportId]))[0]!.id;
    const complete = (user: TestUser, caseId: string) =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1/territories/${territory.id}/work-items/${caseId}/complete`,
        headers: user.headers,
        payload: { outcome: 'REJECTED' },
      });
    const aboutThem = await reportUser(await newUser(t), moderator.id, { reason: 'Abuse', territoryId: territory.id });
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: moderator.id });
    const aboutTheirPost = await reportPost(await newUser(t), postId);
    for (const report of [aboutThem, aboutTheirPost]) {
      const refused = await complete(moderator, await caseOf(report.json().id));
      expect(refused.statusCode).toBe(403);
      expect(refused.json().code).toBe('OWN_REQUEST');
      expect(await t.sql('select status from report where id = $1', [report.json().id])).toEqual([{ status: 'OPEN' }]);
    }
    expect((await complete(await newModerator(t, territory), await caseOf(aboutThem.json().id))).statusCode).toBe(200);
  });

  it('does not count reports a moderator dismissed: the sanction never overrides that decision', async () => {
    const territory = await newTerritory(t);
    const moderator = await newModerator(t, territory);
    const author = await newResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const target = { territoryId: territory.id, targetType: 'POST' as const, targetId: postId };
    for (let i = 0; i < 2; i++) {
      const report = await reportPost(await newUser(t), postId);
      const [moderationCase] = await t.sql<{ id: string }>(`select id from work_item where type = 'MODERATION_CASE' and subject_id = $1`, [report.json().id]);
      const done = await t.app.inject({
        method: 'POST',
        url: `/api/v1/territories/${territory.id}/work-items/${moderationCase!.id}/complete`,
        headers: moderator.headers,
        payload: { outcome: 'REJECTED' },
      });
      expect(done.statusCode).toBe(200);
    }
    expect(await countRows(t, 'report', `target_id = $1 and status = 'DISMISSED'`, [postId])).toBe(2);
    await reportPost(await newUser(t), postId);
    expect(await runJob(target)).toBe(0);
    expect((await t.sql<{ status: string }>('select status from post where id = $1', [postId]))[0]!.status).toBe('PUBLISHED');
    // Three reporters the moderator has not ruled on yet do.
    await reportPost(await newUser(t), postId);
    await reportPost(await newUser(t), postId);
    expect(await runJob(target)).toBe(1);
    expect((await t.sql<{ status: string }>('select status from post where id = $1', [postId]))[0]!.status).toBe('HIDDEN');
  });

  it('counts only reports within Reports:ThresholdWindowDays and follows Reports:ThresholdReporters', async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const target = { territoryId: territory.id, targetType: 'POST' as const, targetId: postId };
    for (let i = 0; i < 3; i++) await reportPost(await newUser(t), postId);
    await t.sql(`update report set created_at_utc = now() - interval '8 days' where target_id = $1`, [postId]);
    expect(await runJob(target)).toBe(0);
    await setConfig('Reports:ThresholdWindowDays', '10');
    try {
      expect(await runJob(target)).toBe(1);
    } finally {
      await setConfig('Reports:ThresholdWindowDays', '7');
    }

    const second = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const secondTarget = { territoryId: territory.id, targetType: 'POST' as const, targetId: second };
    await reportPost(await newUser(t), second);
    expect(await runJob(secondTarget)).toBe(0);
    await setConfig('Reports:ThresholdReporters', '1');
    try {
      expect(await runJob(secondTarget)).toBe(1);
    } finally {
      await setConfig('Reports:ThresholdReporters', '3');
    }
    expect((await t.sql<{ status: string }>('select status from post where id = $1', [second]))[0]!.status).toBe('HIDDEN');
  });

  it('restricts a reported user from posting in that territory only, with 403 POSTING_RESTRICTED until it ends', async () => {
    const territory = await newTerritory(t);
    const elsewhere = await newTerritory(t);
    const target = await newResident(t, territory);
    await t.sql(
      `insert into territory_membership (id, created_at_utc, territory_id, user_id, role, capabilities) values (gen_random_uuid(), now(), $1, $2, 'RESIDENT', '{}')`,
      [elsewhere.id, target.id],
    );
    for (let i = 0; i < 3; i++) await reportUser(await newUser(t), target.id, { reason: 'Abuse', territoryId: territory.id });
    await Promise.all([runJob(), runJob()]);
    expect(await countRows(t, 'posting_restriction', 'user_id = $1', [target.id])).toBe(1);
    const [restriction] = await t.sql<{ days: number }>(
      `select round(extract(epoch from ends_at_utc - created_at_utc) / 86400)::int as days from posting_restriction where user_id = $1`,
      [target.id],
    );
    expect(restriction!.days).toBe(7);

    const post = (territoryId: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/feed', headers: target.headers, payload: { territoryId, title: 'Hello', content: 'World' } });
    const refused = await post(territory.id);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'POSTING_RESTRICTED' });
    expect(await countRows(t, 'post', 'author_user_id = $1 and territory_id = $2', [target.id, territory.id])).toBe(0);
    expect((await post(elsewhere.id)).statusCode).toBe(201);

    await t.sql(`update posting_restriction set ends_at_utc = now() - interval '1 second' where user_id = $1`, [target.id]);
    expect((await post(territory.id)).statusCode).toBe(201);
  });
});

describe('moderation case decision (territory work queue)', () => {
  async function caseOf(reportId: string) {
    const [row] = await t.sql<{ id: string }>(`select id from work_item where type = 'MODERATION_CASE' and subject_id = $1`, [reportId]);
    return row!.id;
  }

  it('APPROVED hides the post and actions the report; REJECTED dismisses; a repeat is 409', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const moderator = await newModerator(t, territory);
    const author = await newResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const first = (await reportPost(await newUser(t), postId)).json();
    const second = (await reportPost(await newUser(t), postId)).json();

    const approved = await complete(moderator, territory.id, await caseOf(first.id), 'APPROVED');
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({ type: 'MODERATION_CASE', status: 'COMPLETED', outcome: 'APPROVED' });
    expect((await t.sql<{ status: string }>('select status from post where id = $1', [postId]))[0]!.status).toBe('HIDDEN');
    expect(await countRows(t, 'report', `target_id = $1 and status = 'ACTIONED'`, [postId])).toBe(2);
    // The other report's case was closed with it.
    expect((await t.sql<{ status: string }>('select status from work_item where id = $1', [await caseOf(second.id)]))[0]!.status).toBe('CANCELLED');
    expect((await complete(curator, territory.id, await caseOf(second.id), 'REJECTED')).statusCode).toBe(409);

    const target = await newResident(t, territory);
    const userReport = (await reportUser(await newUser(t), target.id, { reason: 'Rude', territoryId: territory.id })).json();
    const dismissed = await complete(curator, territory.id, await caseOf(userReport.id), 'REJECTED');
    expect(dismissed.statusCode).toBe(200);
    expect((await t.sql<{ status: string }>('select status from report where id = $1', [userReport.id]))[0]!.status).toBe('DISMISSED');
    expect(await countRows(t, 'posting_restriction', 'user_id = $1', [target.id])).toBe(0);
  });

  it('APPROVED on a user report restricts the user; a resident may not decide (403)', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const resident = await newResident(t, territory);
    const target = await newResident(t, territory);
    const report = (await reportUser(await newUser(t), target.id, { reason: 'Threats', territoryId: territory.id })).json();
    const workItemId = await caseOf(report.id);
    expect((await complete(resident, territory.id, workItemId, 'APPROVED')).statusCode).toBe(403);
    expect(await countRows(t, 'posting_restriction', 'user_id = $1', [target.id])).toBe(0);
    expect((await complete(curator, territory.id, workItemId, 'APPROVED')).statusCode).toBe(200);
    expect(await countRows(t, 'posting_restriction', 'user_id = $1 and territory_id = $2 and ends_at_utc > now()', [target.id, territory.id])).toBe(1);
    expect((await t.sql<{ status: string }>('select status from report where id = $1', [report.id]))[0]!.status).toBe('ACTIONED');
  });
});
