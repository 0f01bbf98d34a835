/**
 * Issue 12: every report, sanction, case decision, rule change and voting close is audited, with who did it (null
 * for the jobs), what it was about and where. No job workers: the threshold job runs when the test runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSystemConfig } from '../../src/db/seed/system-config.js';
import { runReportThreshold } from '../../src/routers/reports/report-threshold.job.js';
import { newPost } from '../factories/content.js';
import { newCurator, newModerator, newResident, newTerritory, newUser, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  await seedSystemConfig(t.deps.orm.em.fork());
});
afterAll(() => t.close());

interface AuditRow {
  action: string;
  actor_user_id: string | null;
  subject_type: string;
  subject_id: string;
  territory_id: string | null;
  data: Record<string, unknown> | null;
}
const auditsOf = (subjectId: string) =>
  t.sql<AuditRow>(
    `select action, actor_user_id, subject_type, subject_id::text, territory_id::text, data from audit_entry where subject_id = $1 order by created_at_utc, action`,
    [subjectId],
  );
const call = (user: TestUser, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
  t.app.inject({ method, url, headers: user.headers, ...(payload ? { payload } : {}) });

describe('the audit trail of moderation and governance', () => {
  it('reports and the threshold sanction', async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    const reporters = await Promise.all([newUser(t), newUser(t), newUser(t)]);
    const reportIds: string[] = [];
    for (const reporter of reporters) {
      const res = await call(reporter, 'POST', `/api/v1/reports/posts/${postId}`, { reason: 'Spam' });
      reportIds.push(res.json().id);
    }
    // A deduplicated repeat writes nothing, its audit included.
    expect((await call(reporters[0]!, 'POST', `/api/v1/reports/posts/${postId}`, { reason: 'Spam' })).statusCode).toBe(200);
    await runReportThreshold(t.deps.orm.em.fork(), new Date(), { territoryId: territory.id, targetType: 'POST', targetId: postId });

    const rows = await auditsOf(postId);
    expect(rows.filter((r) => r.action === 'report.created')).toEqual(
      reporters.map((r, i) => ({
        action: 'report.created',
        actor_user_id: r.id,
        subject_type: 'Post',
        subject_id: postId,
        territory_id: territory.id,
        data: { reportId: reportIds[i] },
      })),
    );
    expect(rows.filter((r) => r.action === 'report.sanction_applied')).toEqual([
      {
        action: 'report.sanction_applied',
        actor_user_id: null,
        subject_type: 'Post',
        subject_id: postId,
        territory_id: territory.id,
        data: { source: 'THRESHOLD', reporterCount: 3 },
      },
    ]);
  });

  it('a moderation case decision (and the sanction it applies)', async () => {
    const territory = await newTerritory(t);
    const moderator = await newModerator(t, territory);
    const target = await newResident(t, territory);
    const report = (await call(await newUser(t), 'POST', `/api/v1/reports/users/${target.id}`, { reason: 'Threats', territoryId: territory.id })).json();
    const [item] = await t.sql<{ id: string }>(`select id from work_item where type = 'MODERATION_CASE' and subject_id = $1`, [report.id]);
    const decided = await call(moderator, 'POST', `/api/v1/territories/${territory.id}/work-items/${item!.id}/complete`, { outcome: 'APPROVED' });
    expect(decided.statusCode).toBe(200);
    expect(await auditsOf(item!.id)).toEqual([
      {
        action: 'work_item.completed',
        actor_user_id: moderator.id,
        subject_type: 'WorkItem',
        subject_id: item!.id,
        territory_id: territory.id,
        data: expect.objectContaining({ type: 'MODERATION_CASE', outcome: 'APPROVED', subjectType: 'Report', subjectId: report.id }),
      },
    ]);
    expect((await auditsOf(target.id)).filter((r) => r.action === 'report.sanction_applied')).toEqual([
      expect.objectContaining({ actor_user_id: moderator.id, subject_type: 'User', data: { source: 'MODERATION_CASE', reporterCount: 0 } }),
    ]);
  });

  it('moderation rule changes: created, updated, deleted', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const url = `/api/v1/territories/${territory.id}/moderation-rules`;
    const created = await call(curator, 'POST', url, { name: 'No spam', ruleType: 'ProhibitedWords', config: { words: ['spam'] } });
    expect(created.statusCode).toBe(201);
    const ruleId = created.json().id as string;
    expect((await call(curator, 'PATCH', `${url}/${ruleId}`, { isActive: false })).statusCode).toBe(200);
    expect((await call(curator, 'DELETE', `${url}/${ruleId}`)).statusCode).toBe(204);
    const rows = await auditsOf(ruleId);
    expect(rows.map((r) => [r.action, r.actor_user_id, r.territory_id]).sort()).toEqual([
      ['moderation_rule.created', curator.id, territory.id],
      ['moderation_rule.deleted', curator.id, territory.id],
      ['moderation_rule.updated', curator.id, territory.id],
    ]);
    expect(rows.find((r) => r.action === 'moderation_rule.updated')!.data).toEqual({ fields: ['isActive'] });
  });

  it('a voting close, with its outcome', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const base = `/api/v1/territories/${territory.id}/votings`;
    const created = await call(curator, 'POST', base, {
      type: 'ThemePrioritization',
      title: 'First?',
      description: 'Pick',
      options: ['Parks', 'Lighting'],
      visibility: 'AllMembers',
    });
    const id = created.json().id as string;
    expect((await call(curator, 'POST', `${base}/${id}/open`)).statusCode).toBe(200);
    expect((await call(curator, 'POST', `${base}/${id}/vote`, { selectedOption: 'Lighting' })).statusCode).toBe(204);
    expect((await call(curator, 'POST', `${base}/${id}/close`)).statusCode).toBe(200);
    expect((await auditsOf(id)).filter((r) => r.action === 'voting.closed')).toEqual([
      {
        action: 'voting.closed',
        actor_user_id: curator.id,
        subject_type: 'Voting',
        subject_id: id,
        territory_id: territory.id,
        data: { status: 'Approved', winner: 'Lighting', totalVotes: 1 },
      },
    ]);
  });
});
