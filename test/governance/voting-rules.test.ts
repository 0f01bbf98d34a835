/**
 * The voting rules of issue 12 not covered by votings.test.ts: one vote per user under concurrency, the state machine
 * from every state, results applied in the close's own transaction, and the votings-schedule job on an injected
 * clock. No job workers: the schedule runs when a test runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOTING_STATUSES, VOTING_TRANSITIONS } from '../../src/entities/voting.entity.js';
import { votingsScheduleJob } from '../../src/routers/votings/votings-schedule.job.js';
import { countRows, newCurator, newResident, newTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
});
afterAll(() => t.close());

const base = (territoryId: string) => `/api/v1/territories/${territoryId}/votings`;
const post = (user: TestUser, url: string, payload?: Record<string, unknown>) => t.app.inject({ method: 'POST', url, headers: user.headers, payload });
const get = (user: TestUser, url: string) => t.app.inject({ method: 'GET', url, headers: user.headers });
const statusOf = async (id: string) => (await t.sql<{ status: string }>('select status from voting where id = $1', [id]))[0]!.status;
const closeAudits = (id: string) => countRows(t, 'audit_entry', `action = 'voting.closed' and subject_id = $1`, [id]);

async function draft(user: TestUser, territoryId: string, over: Record<string, unknown> = {}) {
  const res = await post(user, base(territoryId), {
    type: 'TerritoryCharacterization',
    title: 'Who are we?',
    description: 'Pick one',
    options: ['Riverside', 'Hillside'],
    visibility: 'AllMembers',
    ...over,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

async function opened(user: TestUser, territoryId: string, over: Record<string, unknown> = {}) {
  const id = await draft(user, territoryId, over);
  expect((await post(user, `${base(territoryId)}/${id}/open`)).statusCode).toBe(200);
  return id;
}

describe('one vote per user, enforced by the database', () => {
  it('20 concurrent votes by one user count once: one 204, the rest 409 ALREADY_VOTED', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const id = await opened(resident, territory.id);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(resident, `${base(territory.id)}/${id}/vote`, { selectedOption: i % 2 ? 'Riverside' : 'Hillside' })),
    );
    expect(answers.filter((a) => a.statusCode === 204)).toHaveLength(1);
    const refused = answers.filter((a) => a.statusCode !== 204);
    expect(refused).toHaveLength(19);
    for (const a of refused) expect(a.json()).toMatchObject({ status: 409, code: 'ALREADY_VOTED' });
    expect(await countRows(t, 'vote', 'voting_id = $1 and user_id = $2', [id, resident.id])).toBe(1);
    const closed = await post(resident, `${base(territory.id)}/${id}/close`);
    expect(closed.json()).toMatchObject({ status: 'Approved' });
    expect((await get(resident, `${base(territory.id)}/${id}/results`)).json()).toMatchObject({ totalVotes: 1 });
  });
});

describe('the state machine Draft -> Open -> Approved | Rejected', () => {
  it('refuses every other move from every state (409), whoever asks and however', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const voter = await newResident(t, territory);
    const url = (id: string) => `${base(territory.id)}/${id}`;
    const expectConflict = async (res: Awaited<ReturnType<typeof post>>, code: string) => {
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json()).toMatchObject({ code });
    };

    // Draft: no vote, no close, no results.
    const d = await draft(curator, territory.id);
    await expectConflict(await post(curator, `${url(d)}/vote`, { selectedOption: 'Riverside' }), 'VOTING_NOT_OPEN');
    await expectConflict(await post(curator, `${url(d)}/close`), 'VOTING_NOT_OPEN');
    expect((await get(curator, `${url(d)}/results`)).statusCode).toBe(409);
    expect(await statusOf(d)).toBe('Draft');

    // Open: not opened again, no results yet.
    const o = await opened(curator, territory.id);
    await expectConflict(await post(curator, `${url(o)}/open`), 'VOTING_NOT_DRAFT');
    expect((await get(voter, `${url(o)}/results`)).statusCode).toBe(409);

    // Approved and Rejected are final: no open, close or vote; the schedule leaves them alone.
    expect((await post(voter, `${url(o)}/vote`, { selectedOption: 'Riverside' })).statusCode).toBe(204);
    expect((await post(curator, `${url(o)}/close`)).json()).toMatchObject({ status: 'Approved' });
    const r = await opened(curator, territory.id);
    expect((await post(curator, `${url(r)}/close`)).json()).toMatchObject({ status: 'Rejected' });
    for (const id of [o, r]) {
      await expectConflict(await post(curator, `${url(id)}/open`), 'VOTING_NOT_DRAFT');
      await expectConflict(await post(curator, `${url(id)}/close`), 'VOTING_NOT_OPEN');
      await expectConflict(await post(await newResident(t, territory), `${url(id)}/vote`, { selectedOption: 'Hillside' }), 'VOTING_NOT_OPEN');
    }
    await t.sql(`update voting set starts_at_utc = now() - interval '1 hour', ends_at_utc = now() - interval '1 minute' where id = any($1::uuid[])`, [[o, r]]);
    const ctx = { em: t.deps.orm.em.fork(), storage: t.deps.storage, clock: { now: () => new Date() } };
    await votingsScheduleJob.handle(ctx, {});
    expect([await statusOf(o), await statusOf(r)]).toEqual(['Approved', 'Rejected']);
    expect(await closeAudits(o)).toBe(1);
  });
});

describe('the state machine in one place: VOTING_TRANSITIONS, held by the database too', () => {
  it('a raw UPDATE bypassing the service is refused for every move the table does not allow, and allowed otherwise', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const id = await draft(curator, territory.id);
    for (const from of VOTING_STATUSES) {
      for (const to of VOTING_STATUSES) {
        if (from === to) continue;
        // Put the row in `from` with the trigger off for this session only (as the superuser), then try the move.
        await t.sql(
          `begin; set local session_replication_role = replica; update voting set status = $1 where id = $2; commit;`
            .replace('$1', `'${from}'`)
            .replace('$2', `'${id}'`),
        );
        const allowed = VOTING_TRANSITIONS[to].includes(from);
        const moved = await t.sql('update voting set status = $1 where id = $2', [to, id]).then(
          () => true,
          (error: { code?: string }) => {
            expect(error.code).toBe('23514');
            return false;
          },
        );
        expect(`${from} -> ${to}: ${moved}`).toBe(`${from} -> ${to}: ${allowed}`);
      }
    }
  });
});

describe('results are applied in the same transaction as the close', () => {
  it('a failing effect leaves the voting Open with nothing applied; concurrent closes apply it once', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const id = await opened(curator, territory.id);
    expect((await post(curator, `${base(territory.id)}/${id}/vote`, { selectedOption: 'Hillside' })).statusCode).toBe(204);
    const tags = async () => (await t.sql<{ tags: string[] }>('select tags from territory where id = $1', [territory.id]))[0]!.tags;
    const before = await tags();

    // The territory refuses the tag change: the close fails as a whole.
    const fn = `refuse_tags_${territory.id.replace(/-/g, '')}`;
    await t.sql(`create function ${fn}() returns trigger language plpgsql as $$
      begin if new.id = '${territory.id}' and new.tags is distinct from old.tags then raise exception 'tags unavailable'; end if; return new; end $$`);
    await t.sql(`create trigger ${fn} before update on territory for each row execute function ${fn}()`);
    try {
      const failed = await post(curator, `${base(territory.id)}/${id}/close`);
      expect(failed.statusCode).toBeGreaterThanOrEqual(500);
    } finally {
      await t.sql(`drop trigger ${fn} on territory`);
      await t.sql(`drop function ${fn}()`);
    }
    expect(await statusOf(id)).toBe('Open');
    expect(await tags()).toEqual(before);
    expect(await closeAudits(id)).toBe(0);
    expect((await t.sql<{ winner: string | null }>('select winner from voting where id = $1', [id]))[0]!.winner).toBeNull();

    const closes = await Promise.all([1, 2, 3].map(() => post(curator, `${base(territory.id)}/${id}/close`)));
    expect(closes.map((c) => c.statusCode).sort()).toEqual([200, 409, 409]);
    expect(await statusOf(id)).toBe('Approved');
    expect((await tags()).filter((tag) => tag === 'hillside')).toEqual(['hillside']);
    expect(await closeAudits(id)).toBe(1);
  });
});

describe('the votings-schedule job on an injected clock', () => {
  it('opens a Draft at startsAtUtc and closes it at endsAtUtc, by the clock the job is given (not the wall clock)', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const voter = await newResident(t, territory);
    const starts = new Date('2031-03-01T10:00:00.000Z');
    const ends = new Date('2031-03-08T10:00:00.000Z');
    const id = await draft(curator, territory.id, { startsAtUtc: starts.toISOString(), endsAtUtc: ends.toISOString() });
    const runAt = (at: Date) => votingsScheduleJob.handle({ em: t.deps.orm.em.fork(), storage: t.deps.storage, clock: { now: () => at } }, {});

    await runAt(new Date(starts.getTime() - 1));
    expect(await statusOf(id)).toBe('Draft');
    await runAt(starts);
    expect(await statusOf(id)).toBe('Open');
    expect((await t.sql<{ opened: string }>('select opened_at_utc::text as opened from voting where id = $1', [id]))[0]!.opened).toMatch(/^2031-03-01/);
    // The wall clock is years before the end, yet the voting is open to votes until the job's clock passes it.
    expect((await post(voter, `${base(territory.id)}/${id}/vote`, { selectedOption: 'Riverside' })).statusCode).toBe(204);
    await runAt(new Date(ends.getTime() - 1));
    expect(await statusOf(id)).toBe('Open');
    await runAt(ends);
    expect(await statusOf(id)).toBe('Approved');
    expect(await closeAudits(id)).toBe(1);
    const audit = await t.sql<{ actor_user_id: string | null }>(`select actor_user_id from audit_entry where action = 'voting.closed' and subject_id = $1`, [
      id,
    ]);
    expect(audit).toEqual([{ actor_user_id: null }]);
  });
});
