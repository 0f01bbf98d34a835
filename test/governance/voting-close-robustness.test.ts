/**
 * A voting's result must be applicable when it is accepted, and a voting that cannot be applied or closed must not
 * get stuck nor hold back others: creation checks every option a ModerationRule voting would apply; a voting stored
 * before that check closes with its outcome recorded and nothing applied (audited); the votings-schedule job closes
 * each due voting on its own, so one failing voting is reported and retried without stopping the rest.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { votingsScheduleJob } from '../../src/routers/votings/votings-schedule.job.js';
import { optionRuleConfig } from '../../src/routers/votings/votings.service.js';
import { countRows, newCurator, newResident, newTerritory, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
// Job workers on: the last test runs the schedule through pg-boss itself.
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const base = (territoryId: string) => `/api/v1/territories/${territoryId}/votings`;
const post = (user: TestUser, url: string, payload?: Record<string, unknown>) => t.app.inject({ method: 'POST', url, headers: user.headers, payload });
const get = (user: TestUser, url: string) => t.app.inject({ method: 'GET', url, headers: user.headers });
const statusOf = async (id: string) => (await t.sql<{ status: string }>('select status from voting where id = $1', [id]))[0]!.status;
const audits = (action: string, id: string) => countRows(t, 'audit_entry', 'action = $1 and subject_id = $2', [action, id]);
const runAt = (at: Date) => votingsScheduleJob.handle({ em: t.deps.orm.em.fork(), storage: t.deps.storage, clock: { now: () => at } }, {});

/** An Open voting written straight to the table, as one created before creation checked its options or payload. */
async function legacyVoting(territory: TestTerritory, creator: TestUser, over: { type: string; options: string[]; payload?: object; endsAtUtc?: Date }) {
  const id = newId();
  await t.sql(
    `insert into voting (id, created_at_utc, territory_id, created_by_user_id, type, title, options, visibility, status, payload, ends_at_utc, opened_at_utc)
     values ($1, now(), $2, $3, $4, 'Legacy', $5::text[], 'AllMembers', 'Open', $6::jsonb, $7, now())`,
    [id, territory.id, creator.id, over.type, over.options, JSON.stringify(over.payload ?? {}), over.endsAtUtc ?? null],
  );
  return id;
}

async function openedVoting(user: TestUser, territoryId: string, body: Record<string, unknown>) {
  const created = await post(user, base(territoryId), { title: 'Pick', visibility: 'AllMembers', ...body });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as string;
  expect((await post(user, `${base(territoryId)}/${id}/open`)).statusCode).toBe(200);
  return id;
}

/** The territory's tag changes are refused by the database (standing for any write the database refuses). */
async function refuseTags(territoryId: string) {
  const fn = `refuse_tags_${territoryId.replace(/-/g, '')}`;
  await t.sql(`create function ${fn}() returns trigger language plpgsql as $$
    begin if new.id = '${territoryId}' and new.tags is distinct from old.tags then raise exception 'tags unavailable'; end if; return new; end $$`);
  await t.sql(`create trigger ${fn} before update on territory for each row execute function ${fn}()`);
  return async () => {
    await t.sql(`drop trigger ${fn} on territory`);
    await t.sql(`drop function ${fn}()`);
  };
}

describe('creating a ModerationRule voting', () => {
  it('refuses an option that names no word under the rule close applies (400 naming the option, nothing written)', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const cases: [string[], string][] = [
      [[', ', 'spam'], 'options.0'],
      [['spam', ' , ,, '], 'options.1'],
      // Sanitizing leaves only the comma: still no word.
      [['spam', 'scam', '<b></b>,'], 'options.2'],
    ];
    for (const [options, field] of cases) {
      const res = await post(curator, base(territory.id), { type: 'ModerationRule', title: 'Words', options });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field, message: expect.stringContaining('at least one word') }] });
    }
    expect(await countRows(t, 'voting', 'territory_id = $1', [territory.id])).toBe(0);
    expect(await countRows(t, 'audit_entry', `territory_id = $1 and action = 'voting.created'`, [territory.id])).toBe(0);

    // The same split as the close: commas separate, blanks are dropped.
    expect(optionRuleConfig(' spam ,, scam ,')).toEqual({ words: ['spam', 'scam'] });
    expect((await post(curator, base(territory.id), { type: 'ModerationRule', title: 'Words', options: ['spam, scam', 'fraud'] })).statusCode).toBe(201);
    // With a `ruleJson` proposal the options are only answers (the first adopts it): they need no words.
    const proposal = await post(curator, base(territory.id), {
      type: 'ModerationRule',
      title: 'Adopt?',
      options: [',', 'No'],
      payload: { ruleJson: { ruleType: 'ProhibitedWords', config: { words: ['spam'] } } },
    });
    expect(proposal.statusCode, proposal.body).toBe(201);
  });
});

describe('a voting stored with a result that is no valid change', () => {
  it('closes by hand: outcome recorded (Approved, winner), nothing applied, audited', async () => {
    const territory = await newTerritory(t, { flags: ['CHATENABLED'] });
    const curator = await newCurator(t, territory);
    const voters = [await newResident(t, territory), await newResident(t, territory)];
    const legacy = [
      { type: 'ModerationRule', options: [',', 'spam'] },
      { type: 'ModerationRule', options: ['Adopt', 'Reject'], payload: { ruleJson: { ruleType: 'ContentType', config: { allowedTypes: ['VIDEO'] } } } },
      { type: 'FeatureFlag', options: ['Enable', 'Keep'], payload: { flag: 'NOPE', enable: true } },
    ];
    for (const over of legacy) {
      const id = await legacyVoting(territory, curator, over);
      const winner = over.options[0]!;
      for (const voter of voters) expect((await post(voter, `${base(territory.id)}/${id}/vote`, { selectedOption: winner })).statusCode).toBe(204);

      const closed = await post(curator, `${base(territory.id)}/${id}/close`);
      expect(closed.statusCode, closed.body).toBe(200);
      expect(closed.json()).toMatchObject({ status: 'Approved', winner, createdRuleId: null, closedAtUtc: expect.any(String) });
      expect((await get(curator, `${base(territory.id)}/${id}/results`)).json()).toMatchObject({ status: 'Approved', totalVotes: 2, winner });
      expect(await audits('voting.closed', id)).toBe(1);
      const [why] = await t.sql<{ actor_user_id: string; data: { winner: string; reason: string } }>(
        `select actor_user_id, data from audit_entry where action = 'voting.result_not_applied' and subject_id = $1`,
        [id],
      );
      expect(why).toMatchObject({ actor_user_id: curator.id, data: { winner, reason: expect.any(String) } });
    }
    expect(await countRows(t, 'territory_moderation_rule', 'territory_id = $1', [territory.id])).toBe(0);
    expect((await t.sql<{ enabled_flags: string[] }>('select enabled_flags from territory where id = $1', [territory.id]))[0]!.enabled_flags).toEqual([
      'CHATENABLED',
    ]);
  });

  it('closes by the votings-schedule job at its endsAtUtc, nothing applied, audited', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const ends = new Date('2033-05-01T12:00:00.000Z');
    const id = await legacyVoting(territory, curator, { type: 'ModerationRule', options: [', ', 'spam'], endsAtUtc: ends });
    for (let i = 0; i < 2; i++)
      expect((await post(await newResident(t, territory), `${base(territory.id)}/${id}/vote`, { selectedOption: ', ' })).statusCode).toBe(204);
    expect((await post(await newResident(t, territory), `${base(territory.id)}/${id}/vote`, { selectedOption: 'spam' })).statusCode).toBe(204);

    await runAt(ends);
    expect(await statusOf(id)).toBe('Approved');
    expect((await t.sql<{ winner: string }>('select winner from voting where id = $1', [id]))[0]!.winner).toBe(', ');
    expect(await countRows(t, 'territory_moderation_rule', 'territory_id = $1', [territory.id])).toBe(0);
    expect(await countRows(t, 'audit_entry', `action = 'voting.result_not_applied' and subject_id = $1 and actor_user_id is null`, [id])).toBe(1);
    expect(await audits('voting.closed', id)).toBe(1);
  });
});

describe('the votings-schedule job closes each due voting on its own', () => {
  it("closes another territory's due voting while one fails; the failing one is logged, retried on the next run, closed once fixed", async () => {
    const a = await newTerritory(t);
    const b = await newTerritory(t);
    const curatorA = await newCurator(t, a);
    const residentB = await newResident(t, b);
    const ends = new Date('2034-02-01T08:00:00.000Z');
    // The older voting (handled first) is the one that fails.
    const failing = await openedVoting(curatorA, a.id, {
      type: 'TerritoryCharacterization',
      options: ['Riverside', 'Hillside'],
      endsAtUtc: ends.toISOString(),
    });
    expect((await post(curatorA, `${base(a.id)}/${failing}/vote`, { selectedOption: 'Hillside' })).statusCode).toBe(204);
    const other = await openedVoting(residentB, b.id, { type: 'ThemePrioritization', options: ['Parks', 'Lights'], endsAtUtc: ends.toISOString() });
    expect((await post(residentB, `${base(b.id)}/${other}/vote`, { selectedOption: 'Parks' })).statusCode).toBe(204);

    const allowTags = await refuseTags(a.id);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      await expect(runAt(ends)).rejects.toThrow(failing);
      expect(logged.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringContaining(`voting ${failing} (territory ${a.id}) was not moved`)]);
      expect(await statusOf(other)).toBe('Approved');
      expect(await statusOf(failing)).toBe('Open');
      expect(await audits('voting.closed', failing)).toBe(0);

      // The next run tries it again (it is still due) and reports it again: never silently dropped.
      logged.mockClear();
      await expect(runAt(new Date(ends.getTime() + 60_000))).rejects.toThrow(failing);
      expect(logged).toHaveBeenCalledTimes(1);
      expect(await statusOf(failing)).toBe('Open');
    } finally {
      logged.mockRestore();
      await allowTags();
    }
    await runAt(new Date(ends.getTime() + 120_000));
    expect(await statusOf(failing)).toBe('Approved');
    expect((await t.sql<{ tags: string[] }>('select tags from territory where id = $1', [a.id]))[0]!.tags).toEqual(['hillside']);
    expect(await audits('voting.closed', failing)).toBe(1);
    expect(await audits('voting.closed', other)).toBe(1);
  });

  it('run by pg-boss: the failing voting fails the job with its id (the operators see it), the others are closed', async () => {
    const a = await newTerritory(t);
    const b = await newTerritory(t);
    const curatorA = await newCurator(t, a);
    const residentB = await newResident(t, b);
    const failing = await openedVoting(curatorA, a.id, { type: 'TerritoryCharacterization', options: ['Riverside', 'Hillside'] });
    expect((await post(curatorA, `${base(a.id)}/${failing}/vote`, { selectedOption: 'Riverside' })).statusCode).toBe(204);
    const other = await openedVoting(residentB, b.id, { type: 'ThemePrioritization', options: ['Parks', 'Lights'] });
    expect((await post(residentB, `${base(b.id)}/${other}/vote`, { selectedOption: 'Lights' })).statusCode).toBe(204);
    // Both ended a moment ago, by the wall clock the worker runs on.
    await t.sql(`update voting set ends_at_utc = now() - interval '1 second' where id = any($1::uuid[])`, [[failing, other]]);

    const allowTags = await refuseTags(a.id);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const jobId = await t.deps.jobs.boss.send(votingsScheduleJob.queue, {}, { retryLimit: 0 });
      let job: { state: string; output: { message?: string } | null } | undefined;
      for (let i = 0; i < 100 && !['failed', 'completed'].includes(job?.state ?? ''); i++) {
        await new Promise((r) => setTimeout(r, 200));
        [job] = await t.sql('select state::text as state, output from pgboss.job where id = $1', [jobId]);
      }
      expect(job?.state).toBe('failed');
      expect(job?.output?.message).toContain(failing);
      expect(job?.output?.message).not.toContain(other);
      expect(await statusOf(other)).toBe('Approved');
      expect(await statusOf(failing)).toBe('Open');
    } finally {
      logged.mockRestore();
      await allowTags();
    }
  });
});
