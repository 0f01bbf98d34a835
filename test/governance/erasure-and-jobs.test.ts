import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '../../src/jobs/registry.js';
import { accountErasers } from '../../src/platform/account-erasure.js';
import { clock } from '../../src/platform/clock.js';
import { newId } from '../../src/platform/ids.js';
import { reportThresholdJob } from '../../src/routers/reports/report-threshold.job.js';
import { votingsScheduleJob } from '../../src/routers/votings/votings-schedule.job.js';
import { newPost } from '../factories/content.js';
import { countRows, newCurator, newResident, newTerritory, newUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function erase(userId: string) {
  await t.deps.orm.em.fork().transactional(async (em) => {
    for (const domain of ['reports', 'votes']) {
      await accountErasers().get(domain)!({ em: em as EntityManager, userId, at: new Date(), storage: t.deps.storage, afterCommit: () => undefined });
    }
  });
}

describe('jobs and account erasure', () => {
  it('lists report-threshold and votings-schedule among the jobs; the threshold job takes one target or none', async () => {
    expect(QUEUE_NAMES).toEqual(expect.arrayContaining(['report-threshold', 'votings-schedule']));
    expect(() => reportThresholdJob.payload.parse({ targetType: 'ITEM' })).toThrow();
    const territory = await newTerritory(t);
    const author = await newResident(t, territory);
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: author.id });
    for (let i = 0; i < 3; i++) {
      const reporter = await newUser(t);
      const res = await t.app.inject({ method: 'POST', url: `/api/v1/reports/posts/${postId}`, headers: reporter.headers, payload: { reason: 'Spam' } });
      expect(res.statusCode).toBe(201);
    }
    const ctx = { em: t.deps.orm.em.fork(), storage: t.deps.storage, clock };
    const payload = reportThresholdJob.payload.parse({ territoryId: territory.id, targetType: 'POST', targetId: postId });
    await Promise.all([reportThresholdJob.handle(ctx, payload), reportThresholdJob.handle({ ...ctx, em: t.deps.orm.em.fork() }, payload)]);
    expect(await countRows(t, 'report_sanction', 'target_id = $1', [postId])).toBe(1);
    await votingsScheduleJob.handle(ctx, votingsScheduleJob.payload.parse({}));
  });

  it("erasure keeps a person's reports without naming them and deletes their votes", async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const me = await newResident(t, territory);
    const target = await newResident(t, territory);
    await t.app.inject({
      method: 'POST',
      url: `/api/v1/reports/users/${target.id}`,
      headers: me.headers,
      payload: { reason: 'Rude', territoryId: territory.id },
    });
    const votingId = newId();
    await t.sql(
      `insert into voting (id, created_at_utc, territory_id, created_by_user_id, type, title, options, visibility, status, payload)
       values ($1, now(), $2, $3, 'ThemePrioritization', 'First?', '{Parks,Lights}', 'AllMembers', 'Open', '{}')`,
      [votingId, territory.id, curator.id],
    );
    const vote = await t.app.inject({
      method: 'POST',
      url: `/api/v1/territories/${territory.id}/votings/${votingId}/vote`,
      headers: me.headers,
      payload: { selectedOption: 'Parks' },
    });
    expect(vote.statusCode).toBe(204);
    await erase(me.id);
    expect(await countRows(t, 'report', 'target_id = $1', [target.id])).toBe(1);
    expect(await countRows(t, 'report', 'reporter_user_id = $1', [me.id])).toBe(0);
    expect(await countRows(t, 'vote', 'user_id = $1', [me.id])).toBe(0);
  });
});
