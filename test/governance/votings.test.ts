import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runVotingsSchedule } from '../../src/routers/votings/votings.service.js';
import { countRows, newCurator, newModerator, newResident, newTerritory, newUser, newVisitor, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { countForks } from '../setup/forks.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let forks: ReturnType<typeof countForks>;
beforeAll(async () => {
  t = await createTestApp();
  forks = countForks(t);
});
afterAll(() => t.close());

const base = (territoryId: string) => `/api/v1/territories/${territoryId}/votings`;
const create = (user: TestUser, territoryId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: base(territoryId), headers: user.headers, payload });
const post = (user: TestUser, url: string, payload?: Record<string, unknown>) => t.app.inject({ method: 'POST', url, headers: user.headers, payload });
const get = (user: TestUser, url: string) => t.app.inject({ method: 'GET', url, headers: user.headers });
const votingBody = (over: Record<string, unknown> = {}) => ({
  type: 'ThemePrioritization',
  title: 'What first?',
  description: 'Pick one',
  options: ['Parks', 'Lighting', 'Sidewalks'],
  visibility: 'AllMembers',
  ...over,
});

async function openVoting(user: TestUser, territoryId: string, over: Record<string, unknown> = {}) {
  const created = await create(user, territoryId, votingBody(over));
  if (created.statusCode !== 201) throw new Error(`create failed: ${created.body}`);
  const id = created.json().id as string;
  const opened = await post(user, `${base(territoryId)}/${id}/open`);
  if (opened.statusCode !== 200) throw new Error(`open failed: ${opened.body}`);
  return id;
}

describe('votings', () => {
  it('a resident proposes (201 Draft), opens, members vote once (204), the creator closes (Approved) and reads the results', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const visitor = await newVisitor(t, territory);
    const other = await newResident(t, territory);
    const res = await create(resident, territory.id, votingBody({ endsAtUtc: '2099-01-01T00:00:00Z' }));
    expect(res.statusCode).toBe(201);
    const voting = res.json();
    expect(voting).toMatchObject({
      territoryId: territory.id,
      createdByUserId: resident.id,
      type: 'ThemePrioritization',
      title: 'What first?',
      description: 'Pick one',
      options: ['Parks', 'Lighting', 'Sidewalks'],
      visibility: 'AllMembers',
      status: 'Draft',
      startsAtUtc: null,
      endsAtUtc: '2099-01-01T00:00:00.000Z',
      payload: {},
      openedAtUtc: null,
      closedAtUtc: null,
      winner: null,
      createdRuleId: null,
    });
    expect(res.headers.location).toBe(`${base(territory.id)}/${voting.id}`);
    const url = `${base(territory.id)}/${voting.id}`;

    // A Draft is its creator's (and curators'): others get 404; voting in it is 404 too.
    expect((await get(visitor, url)).statusCode).toBe(404);
    expect((await get(visitor, base(territory.id))).json()).toEqual([]);
    expect((await post(visitor, `${url}/open`)).statusCode).toBe(404);

    const opened = await post(resident, `${url}/open`);
    expect(opened.statusCode).toBe(200);
    expect(opened.json()).toMatchObject({ status: 'Open', openedAtUtc: expect.any(String) });
    expect((await post(resident, `${url}/open`)).statusCode).toBe(409);
    expect((await get(visitor, `${url}/results`)).statusCode).toBe(409);

    const v1 = await post(visitor, `${url}/vote`, { selectedOption: 'Lighting' });
    expect(v1.statusCode).toBe(204);
    expect(v1.body).toBe('');
    expect((await post(other, `${url}/vote`, { selectedOption: 'Lighting' })).statusCode).toBe(204);
    expect((await post(resident, `${url}/vote`, { selectedOption: 'Parks' })).statusCode).toBe(204);
    const again = await post(visitor, `${url}/vote`, { selectedOption: 'Parks' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'ALREADY_VOTED' });
    const unknown = await post(other, `${url}/vote`, { selectedOption: 'lighting' });
    expect([400, 409]).toContain(unknown.statusCode);
    expect(await countRows(t, 'vote', 'voting_id = $1', [voting.id])).toBe(3);

    const listed = await get(visitor, `${base(territory.id)}?status=Open`);
    expect(listed.json().map((v: { id: string }) => v.id)).toEqual([voting.id]);
    // The filter takes any letter case (DESIGN 4); the answer keeps the canonical spelling.
    for (const status of ['open', 'OPEN', 'oPeN']) {
      const anyCase = await get(visitor, `${base(territory.id)}?status=${status}`);
      expect(anyCase.statusCode, status).toBe(200);
      expect(anyCase.json(), status).toEqual(listed.json());
    }
    expect(listed.json()[0]).toMatchObject({ status: 'Open' });

    expect((await post(visitor, `${url}/close`)).statusCode).toBe(403);
    const closed = await post(resident, `${url}/close`);
    expect(closed.statusCode).toBe(200);
    expect(closed.json()).toMatchObject({ status: 'Approved', winner: 'Lighting', closedAtUtc: expect.any(String) });
    expect((await post(resident, `${url}/close`)).statusCode).toBe(409);
    const late = await post(await newResident(t, territory), `${url}/vote`, { selectedOption: 'Parks' });
    expect(late.statusCode).toBe(409);
    expect(late.json()).toMatchObject({ code: 'VOTING_NOT_OPEN' });

    const results = await get(visitor, `${url}/results`);
    expect(results.statusCode).toBe(200);
    expect(results.json()).toEqual({
      votingId: voting.id,
      status: 'Approved',
      totalVotes: 3,
      results: { Parks: 1, Lighting: 2, Sidewalks: 0 },
      winner: 'Lighting',
    });
  });

  it("answers the results in the proposal's order of options, not the stored jsonb's key order", async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    // jsonb keeps keys shortest first: Parks, Lighting, Sidewalks.
    const options = ['Sidewalks', 'Lighting', 'Parks'];
    const id = await openVoting(curator, territory.id, { options });
    expect((await post(curator, `${base(territory.id)}/${id}/vote`, { selectedOption: 'Parks' })).statusCode).toBe(204);
    expect((await post(curator, `${base(territory.id)}/${id}/close`)).statusCode).toBe(200);
    const stored = await t.sql<{ results: Record<string, number> }>('select results from voting where id = $1', [id]);
    expect(Object.keys(stored[0]!.results)).not.toEqual(options);
    const results = await get(curator, `${base(territory.id)}/${id}/results`);
    expect(Object.keys(results.json().results)).toEqual(options);
  });

  it('an unknown option is 400 UNKNOWN_VOTING_OPTION; a tie or no votes is Rejected', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const a = await newResident(t, territory);
    const b = await newResident(t, territory);
    const id = await openVoting(curator, territory.id);
    const url = `${base(territory.id)}/${id}`;
    const unknown = await post(a, `${url}/vote`, { selectedOption: 'Bridges' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ code: 'UNKNOWN_VOTING_OPTION' });
    // The option is read as options are stored: blanks around it do not matter.
    expect((await post(a, `${url}/vote`, { selectedOption: ' Parks ' })).statusCode).toBe(204);
    await post(b, `${url}/vote`, { selectedOption: 'Sidewalks' });
    expect((await post(curator, `${url}/close`)).json()).toMatchObject({ status: 'Rejected', winner: 'Parks' });

    const empty = await openVoting(curator, territory.id);
    expect((await post(curator, `${base(territory.id)}/${empty}/close`)).json()).toMatchObject({ status: 'Rejected', winner: null });
    expect((await get(curator, `${base(territory.id)}/${empty}/results`)).json()).toMatchObject({
      totalVotes: 0,
      results: { Parks: 0, Lighting: 0, Sidewalks: 0 },
    });
  });

  it('who may propose: residents the resident types, curators all; others 403 with nothing written; bad bodies 400', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const resident = await newResident(t, territory);
    const visitor = await newVisitor(t, territory);
    for (const type of ['ThemePrioritization', 'TerritoryCharacterization', 'CommunityPolicy']) {
      expect((await create(resident, territory.id, votingBody({ type }))).statusCode).toBe(201);
      expect((await create(visitor, territory.id, votingBody({ type }))).statusCode).toBe(403);
    }
    const flag = votingBody({ type: 'FeatureFlag', payload: { flag: 'AlertPosts', enable: true } });
    const rule = votingBody({ type: 'ModerationRule', options: ['spam, scam', 'fraud'] });
    expect((await create(resident, territory.id, flag)).statusCode).toBe(403);
    expect((await create(resident, territory.id, rule)).statusCode).toBe(403);
    const flagVoting = await create(curator, territory.id, flag);
    expect(flagVoting.statusCode).toBe(201);
    expect(flagVoting.json().payload).toEqual({ flag: 'ALERTPOSTS', enable: true });
    expect((await create(curator, territory.id, rule)).statusCode).toBe(201);
    const before = await countRows(t, 'voting', 'territory_id = $1', [territory.id]);

    const bad = [
      votingBody({ options: ['Only one'] }),
      votingBody({ options: ['Same', 'Same'] }),
      votingBody({ options: Array.from({ length: 11 }, (_, i) => `o${i}`) }),
      votingBody({ options: ['ok', 'x'.repeat(101)] }),
      votingBody({ title: '' }),
      votingBody({ title: 'x'.repeat(201) }),
      votingBody({ description: 'x'.repeat(2001) }),
      votingBody({ type: 'Referendum' }),
      votingBody({ visibility: 'Everyone' }),
      votingBody({ startsAtUtc: '2099-01-02T00:00:00Z', endsAtUtc: '2099-01-01T00:00:00Z' }),
      votingBody({ endsAtUtc: '2001-01-01T00:00:00Z' }),
      votingBody({ startsAtUtc: '2020-01-01T00:00:00Z', endsAtUtc: '2020-01-02T00:00:00Z' }),
      votingBody({ options: ['__proto__', 'Other'] }),
      votingBody({ type: 'FeatureFlag', payload: { flag: 'NOPE', enable: true } }),
      votingBody({ type: 'FeatureFlag', payload: { flag: 'ALERTPOSTS' } }),
      votingBody({ type: 'ModerationRule', payload: { ruleJson: { ruleType: 'ProhibitedWords', config: { words: [] } } } }),
    ];
    for (const body of bad) {
      const res = await create(curator, territory.id, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    expect(await countRows(t, 'voting', 'territory_id = $1', [territory.id])).toBe(before);
    expect((await create(curator, UNKNOWN_ID, votingBody())).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url: base(territory.id), payload: votingBody() })).statusCode).toBe(401);
  });

  it('options are stored as written, whatever they spell: NULL, braces, quotes, backslashes, line breaks', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const visitor = await newVisitor(t, territory);
    const options = ['NULL', 'null', '{a}\nb', 'say "yes"', 'back\\slash', 'a,b'];
    const res = await create(resident, territory.id, votingBody({ options }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().options).toEqual(options);
    expect(await t.sql('select options from voting where id = $1', [res.json().id])).toEqual([{ options }]);
    expect((await post(resident, `${base(territory.id)}/${res.json().id}/open`)).statusCode).toBe(200);
    const list = await get(visitor, base(territory.id));
    expect(list.statusCode).toBe(200);
    expect(list.json().find((v: { id: string }) => v.id === res.json().id).options).toEqual(options);
    expect((await post(visitor, `${base(territory.id)}/${res.json().id}/vote`, { selectedOption: 'NULL' })).statusCode).toBe(204);
  });

  it('a CuratorsOnly voting is proposed by curators only (its creator could not see it otherwise): a resident 403, nothing written', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory);
    const curator = await newCurator(t, territory);
    const refused = await create(resident, territory.id, votingBody({ visibility: 'CuratorsOnly' }));
    expect(refused.statusCode).toBe(403);
    expect(await countRows(t, 'voting', 'territory_id = $1', [territory.id])).toBe(0);
    const made = await create(curator, territory.id, votingBody({ visibility: 'CuratorsOnly' }));
    expect(made.statusCode).toBe(201);
    expect((await get(curator, `${base(territory.id)}/${made.json().id}`)).statusCode).toBe(200);
  });

  it('visibility: CuratorsOnly is invisible (404) to non-curators; ResidentsOnly is visible to members but only residents vote (403)', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const resident = await newResident(t, territory);
    const visitor = await newVisitor(t, territory);
    const moderator = await newModerator(t, territory);
    const stranger = await newUser(t);
    const hidden = await openVoting(curator, territory.id, { visibility: 'CuratorsOnly' });
    const residents = await openVoting(curator, territory.id, { visibility: 'ResidentsOnly' });
    for (const user of [resident, visitor, moderator]) {
      expect((await get(user, `${base(territory.id)}/${hidden}`)).statusCode).toBe(404);
      expect((await post(user, `${base(territory.id)}/${hidden}/vote`, { selectedOption: 'Parks' })).statusCode).toBe(404);
      expect((await get(user, `${base(territory.id)}/${hidden}/results`)).statusCode).toBe(404);
      expect((await get(user, base(territory.id))).json().map((v: { id: string }) => v.id)).toEqual([residents]);
    }
    expect((await get(curator, base(territory.id))).json()).toHaveLength(2);
    expect((await post(curator, `${base(territory.id)}/${hidden}/vote`, { selectedOption: 'Parks' })).statusCode).toBe(204);
    expect((await get(visitor, `${base(territory.id)}/${residents}`)).statusCode).toBe(200);
    expect((await post(visitor, `${base(territory.id)}/${residents}/vote`, { selectedOption: 'Parks' })).statusCode).toBe(403);
    expect((await post(resident, `${base(territory.id)}/${residents}/vote`, { selectedOption: 'Parks' })).statusCode).toBe(204);
    // Non-members: 403; unknown voting or territory: 404; no token: 401.
    expect((await get(stranger, base(territory.id))).statusCode).toBe(403);
    expect((await get(curator, `${base(territory.id)}/${UNKNOWN_ID}`)).statusCode).toBe(404);
    expect((await get(curator, `${base(UNKNOWN_ID)}/${residents}`)).statusCode).toBe(404);
    const otherTerritory = await newTerritory(t);
    expect((await get(await newCurator(t, otherTerritory), `${base(otherTerritory.id)}/${residents}`)).statusCode).toBe(404);
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', `/${residents}`],
      ['POST', `/${residents}/open`],
      ['POST', `/${residents}/vote`],
      ['POST', `/${residents}/close`],
      ['GET', `/${residents}/results`],
    ] as const) {
      expect(
        (await t.app.inject({ method, url: `${base(territory.id)}${suffix}`, payload: method === 'POST' ? { selectedOption: 'Parks' } : undefined }))
          .statusCode,
      ).toBe(401);
    }
    expect(await countRows(t, 'vote', 'voting_id = $1', [residents])).toBe(1);
  });

  it('the list, a voting and its results read on the pool: no fork (results counted from the votes when none were recorded)', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const resident = await newResident(t, territory);
    const draft = (await create(resident, territory.id, votingBody({ title: 'Mine' }))).json().id as string;
    const closed = await openVoting(curator, territory.id);
    expect((await post(resident, `${base(territory.id)}/${closed}/vote`, { selectedOption: 'Lighting' })).statusCode).toBe(204);
    expect((await post(curator, `${base(territory.id)}/${closed}/close`)).statusCode).toBe(200);
    const recorded = await openVoting(curator, territory.id, { title: 'Recorded' });
    expect((await post(curator, `${base(territory.id)}/${recorded}/close`)).statusCode).toBe(200);
    await t.sql('update voting set results = null where id = $1', [closed]);
    const ids = (b: unknown) => (b as { id: string }[]).map((v) => v.id);
    await forks.expectReadsWithoutFork(resident, [
      [base(territory.id), (b) => expect(ids(b)).toEqual([recorded, closed, draft])],
      [`${base(territory.id)}?status=Draft`, (b) => expect(ids(b)).toEqual([draft])],
      [`${base(territory.id)}?skip=1&take=1`, (b) => expect(ids(b)).toEqual([closed])],
      [`${base(territory.id)}/${draft}`, (b) => expect(b).toMatchObject({ id: draft, status: 'Draft', title: 'Mine', payload: {}, startsAtUtc: null })],
      [
        `${base(territory.id)}/${closed}/results`,
        (b) => expect(b).toEqual({ votingId: closed, status: 'Approved', totalVotes: 1, results: { Parks: 0, Lighting: 1, Sidewalks: 0 }, winner: 'Lighting' }),
      ],
    ]);
    await forks.expectReadsWithoutFork(curator, [
      [`${base(territory.id)}/${recorded}/results`, (b) => expect(b).toMatchObject({ status: 'Rejected', totalVotes: 0, winner: null })],
    ]);
  });

  it('approved results act on the territory: tags, feature flags, moderation rules', async () => {
    const territory = await newTerritory(t, { tags: ['green'] });
    const curator = await newCurator(t, territory);
    const voter = await newResident(t, territory);
    async function decide(over: Record<string, unknown>, choice: string) {
      const id = await openVoting(curator, territory.id, over);
      expect((await post(voter, `${base(territory.id)}/${id}/vote`, { selectedOption: choice })).statusCode).toBe(204);
      const closed = await post(curator, `${base(territory.id)}/${id}/close`);
      expect(closed.json()).toMatchObject({ status: 'Approved', winner: choice });
      return closed.json();
    }
    await decide({ type: 'TerritoryCharacterization', options: ['Bohemian', 'Quiet'] }, 'Bohemian');
    const [row] = await t.sql<{ tags: string[]; enabled_flags: string[] }>('select tags, enabled_flags from territory where id = $1', [territory.id]);
    expect(row!.tags).toEqual(['green', 'bohemian']);

    await decide({ type: 'FeatureFlag', options: ['Enable', 'Keep off'], payload: { flag: 'ALERTPOSTS', enable: true } }, 'Enable');
    const features = await get(curator, `/api/v1/territories/${territory.id}/features`);
    expect(features.json().enabledFlags).toEqual(['ALERTPOSTS']);
    // The other option winning leaves the flag as it is.
    await decide({ type: 'FeatureFlag', options: ['Disable', 'Keep on'], payload: { flag: 'ALERTPOSTS', enable: false } }, 'Keep on');
    expect((await get(curator, `/api/v1/territories/${territory.id}/features`)).json().enabledFlags).toEqual(['ALERTPOSTS']);

    const words = await decide({ type: 'ModerationRule', options: ['spam, scam', 'fraud'] }, 'spam, scam');
    expect(words.createdRuleId).toEqual(expect.any(String));
    const rules = (await get(voter, `/api/v1/territories/${territory.id}/moderation-rules`)).json();
    expect(rules).toEqual([
      expect.objectContaining({
        id: words.createdRuleId,
        ruleType: 'ProhibitedWords',
        config: { words: ['spam', 'scam'] },
        createdByVotingId: words.id,
        isActive: true,
      }),
    ]);
    const json = await decide(
      {
        type: 'ModerationRule',
        options: ['Adopt', 'Reject'],
        payload: { ruleJson: { name: 'Posts only', ruleType: 'ContentType', config: { allowedTypes: ['POST'] } } },
      },
      'Adopt',
    );
    expect(await countRows(t, 'territory_moderation_rule', `id = $1 and rule_type = 'ContentType' and name = 'Posts only'`, [json.createdRuleId])).toBe(1);
    // ThemePrioritization is recorded only.
    await decide({}, 'Parks');
    expect(await countRows(t, 'territory_moderation_rule', 'territory_id = $1', [territory.id])).toBe(2);
  });

  it('the votings-schedule job opens Drafts at startsAtUtc and closes Open votings at endsAtUtc', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const voter = await newResident(t, territory);
    const starts = new Date(Date.now() + 60_000);
    const ends = new Date(Date.now() + 120_000);
    const id = (await create(curator, territory.id, votingBody({ startsAtUtc: starts.toISOString(), endsAtUtc: ends.toISOString() }))).json().id;
    const statusOf = async () => (await t.sql<{ status: string }>('select status from voting where id = $1', [id]))[0]!.status;
    await runVotingsSchedule(t.deps.orm.em.fork(), new Date());
    expect(await statusOf()).toBe('Draft');
    await Promise.all([
      runVotingsSchedule(t.deps.orm.em.fork(), new Date(starts.getTime() + 1)),
      runVotingsSchedule(t.deps.orm.em.fork(), new Date(starts.getTime() + 1)),
    ]);
    expect(await statusOf()).toBe('Open');
    expect((await post(voter, `${base(territory.id)}/${id}/vote`, { selectedOption: 'Sidewalks' })).statusCode).toBe(204);
    await runVotingsSchedule(t.deps.orm.em.fork(), new Date(ends.getTime() + 1));
    expect(await statusOf()).toBe('Approved');
    expect((await get(voter, `${base(territory.id)}/${id}/results`)).json()).toMatchObject({ winner: 'Sidewalks', totalVotes: 1 });
  });
});

describe('GET /api/v1/users/me/profile/governance', () => {
  it("answers the caller's own votes and moderation contributions; 401 without a token", async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const me = await newResident(t, territory);
    const empty = await get(me, '/api/v1/users/me/profile/governance');
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({
      userId: me.id,
      votingHistory: [],
      moderationContributions: { reportsFiled: 0, reportsActioned: 0, moderationRuleVotes: 0 },
    });

    const theme = await openVoting(curator, territory.id);
    const rule = await openVoting(curator, territory.id, { type: 'ModerationRule', options: ['spam', 'scam'], title: 'Words' });
    await post(me, `${base(territory.id)}/${theme}/vote`, { selectedOption: 'Parks' });
    await post(me, `${base(territory.id)}/${rule}/vote`, { selectedOption: 'scam' });
    await post(curator, `${base(territory.id)}/${theme}/vote`, { selectedOption: 'Lighting' });
    const target = await newResident(t, territory);
    await post(me, `/api/v1/reports/users/${target.id}`, { reason: 'Rude', territoryId: territory.id });

    const res = await get(me, '/api/v1/users/me/profile/governance');
    expect(res.json()).toEqual({
      userId: me.id,
      votingHistory: [
        {
          votingId: rule,
          territoryId: territory.id,
          votingTitle: 'Words',
          votingType: 'ModerationRule',
          selectedOption: 'scam',
          votedAtUtc: expect.any(String),
        },
        {
          votingId: theme,
          territoryId: territory.id,
          votingTitle: 'What first?',
          votingType: 'ThemePrioritization',
          selectedOption: 'Parks',
          votedAtUtc: expect.any(String),
        },
      ],
      moderationContributions: { reportsFiled: 1, reportsActioned: 0, moderationRuleVotes: 1 },
    });
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/users/me/profile/governance' })).statusCode).toBe(401);
  });

  it('reads on the pool: no fork', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const me = await newResident(t, territory);
    const rule = await openVoting(curator, territory.id, { type: 'ModerationRule', options: ['spam', 'scam'], title: 'Words' });
    expect((await post(me, `${base(territory.id)}/${rule}/vote`, { selectedOption: 'spam' })).statusCode).toBe(204);
    const target = await newResident(t, territory);
    expect((await post(me, `/api/v1/reports/users/${target.id}`, { reason: 'Rude', territoryId: territory.id })).statusCode).toBe(201);
    await forks.expectReadsWithoutFork(me, [
      [
        '/api/v1/users/me/profile/governance',
        (b) =>
          expect(b).toEqual({
            userId: me.id,
            votingHistory: [
              {
                votingId: rule,
                territoryId: territory.id,
                votingTitle: 'Words',
                votingType: 'ModerationRule',
                selectedOption: 'spam',
                votedAtUtc: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
              },
            ],
            moderationContributions: { reportsFiled: 1, reportsActioned: 0, moderationRuleVotes: 1 },
          }),
      ],
    ]);
  });
});
