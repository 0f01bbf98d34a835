import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newCurator, newModerator, newResident, newTerritory, newUser, newVisitor, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const base = (territoryId: string) => `/api/v1/territories/${territoryId}/moderation-rules`;
const create = (user: TestUser, territoryId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: base(territoryId), headers: user.headers, payload });
const rulesIn = (territoryId: string) => countRows(t, 'territory_moderation_rule', 'territory_id = $1', [territoryId]);

describe('moderation rules', () => {
  it('a curator creates (201 + Location), lists, changes and deletes rules; members read them', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const visitor = await newVisitor(t, territory);
    const res = await create(curator, territory.id, { name: 'No <b>slurs</b>', ruleType: 'ProhibitedWords', config: { words: ['badword', ' other '] } });
    expect(res.statusCode).toBe(201);
    const rule = res.json();
    expect(rule).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      name: 'No slurs',
      ruleType: 'ProhibitedWords',
      config: { words: ['badword', 'other'] },
      isActive: true,
      createdByVotingId: null,
      createdAtUtc: expect.any(String),
    });
    expect(res.headers.location).toBe(`${base(territory.id)}/${rule.id}`);
    expect(await countRows(t, 'audit_entry', `action = 'moderation_rule.created' and subject_id = $1`, [rule.id])).toBe(1);

    const behavior = await create(curator, territory.id, {
      name: 'Be kind',
      ruleType: 'Behavior',
      config: { guidelines: 'Be kind to neighbours.' },
      isActive: false,
    });
    expect(behavior.statusCode).toBe(201);
    const listed = await t.app.inject({ method: 'GET', url: base(territory.id), headers: visitor.headers });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual([rule, behavior.json()]);

    const patched = await t.app.inject({
      method: 'PATCH',
      url: `${base(territory.id)}/${rule.id}`,
      headers: curator.headers,
      payload: { isActive: false, config: { words: ['worse'] } },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toEqual({ ...rule, isActive: false, config: { words: ['worse'] } });

    const deleted = await t.app.inject({ method: 'DELETE', url: `${base(territory.id)}/${rule.id}`, headers: curator.headers });
    expect(deleted.statusCode).toBe(204);
    expect(await rulesIn(territory.id)).toBe(1);
    expect((await t.app.inject({ method: 'DELETE', url: `${base(territory.id)}/${rule.id}`, headers: curator.headers })).statusCode).toBe(404);
  });

  it('validates the config of every rule type (400, nothing written)', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const bad: Record<string, unknown>[] = [
      { name: 'x', ruleType: 'ProhibitedWords', config: {} },
      { name: 'x', ruleType: 'ProhibitedWords', config: { words: [] } },
      { name: 'x', ruleType: 'ProhibitedWords', config: { words: ['ok'], extra: 1 } },
      { name: 'x', ruleType: 'ContentType', config: { allowedTypes: ['VIDEO'] } },
      { name: 'x', ruleType: 'MarketplacePolicy', config: { words: 'no' } },
      { name: 'x', ruleType: 'EventPolicy', config: { words: [''] } },
      { name: 'x', ruleType: 'Behavior', config: { guidelines: '' } },
      { name: 'x', ruleType: 'Unknown', config: {} },
      { name: '', ruleType: 'Behavior', config: { guidelines: 'ok' } },
      { name: 'x', ruleType: 'Behavior', config: 'text' },
    ];
    for (const payload of bad) {
      const res = await create(curator, territory.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(await rulesIn(territory.id)).toBe(0);
    const ok = [
      { name: 'Types', ruleType: 'ContentType', config: { allowedTypes: ['POST', 'EVENT'] } },
      { name: 'Market', ruleType: 'MarketplacePolicy', config: { words: ['fake'], blockedCategories: ['weapons'] } },
      { name: 'Events', ruleType: 'EventPolicy', config: { words: ['rave'] } },
    ];
    for (const payload of ok) expect((await create(curator, territory.id, payload)).statusCode).toBe(201);
    // PATCH validates the config against the rule's own type.
    const [rule] = await t.sql<{ id: string }>(`select id from territory_moderation_rule where territory_id = $1 and rule_type = 'EventPolicy'`, [
      territory.id,
    ]);
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `${base(territory.id)}/${rule!.id}`,
      headers: curator.headers,
      payload: { config: { guidelines: 'x' } },
    });
    expect(patch.statusCode).toBe(400);
    expect(await countRows(t, 'territory_moderation_rule', `id = $1 and config = '{"words": ["rave"]}'::jsonb`, [rule!.id])).toBe(1);
  });

  it("is 403 for non-curators writing and non-members reading, 404 for unknown ids or another territory's rule, 401", async () => {
    const territory = await newTerritory(t);
    const other = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const otherCurator = await newCurator(t, other);
    const moderator = await newModerator(t, territory);
    const resident = await newResident(t, territory);
    const stranger = await newUser(t);
    const rule = (await create(curator, territory.id, { name: 'Words', ruleType: 'ProhibitedWords', config: { words: ['x'] } })).json();
    const payload = { name: 'Words', ruleType: 'ProhibitedWords', config: { words: ['y'] } };
    for (const user of [resident, moderator, otherCurator]) {
      expect((await create(user, territory.id, payload)).statusCode).toBe(403);
      expect(
        (await t.app.inject({ method: 'PATCH', url: `${base(territory.id)}/${rule.id}`, headers: user.headers, payload: { isActive: false } })).statusCode,
      ).toBe(403);
      expect((await t.app.inject({ method: 'DELETE', url: `${base(territory.id)}/${rule.id}`, headers: user.headers })).statusCode).toBe(403);
    }
    expect((await t.app.inject({ method: 'GET', url: base(territory.id), headers: moderator.headers })).statusCode).toBe(200);
    const strangerList = await t.app.inject({ method: 'GET', url: base(territory.id), headers: stranger.headers });
    expect(strangerList.statusCode).toBe(403);
    expect(
      (await t.app.inject({ method: 'PATCH', url: `${base(other.id)}/${rule.id}`, headers: otherCurator.headers, payload: { isActive: false } })).statusCode,
    ).toBe(404);
    expect(
      (await t.app.inject({ method: 'PATCH', url: `${base(territory.id)}/${UNKNOWN_ID}`, headers: curator.headers, payload: { isActive: false } })).statusCode,
    ).toBe(404);
    expect((await create(curator, UNKNOWN_ID, payload)).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: base(territory.id) })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: base(territory.id), payload })).statusCode).toBe(401);
    expect(await rulesIn(territory.id)).toBe(1);
    expect(await countRows(t, 'territory_moderation_rule', 'id = $1 and is_active', [rule.id])).toBe(1);
  });

  it('rules act on content: ProhibitedWords on posts, ContentType on post types, EventPolicy on events only', async () => {
    const territory = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const curator = await newCurator(t, territory);
    const resident = await newResident(t, territory);
    await create(curator, territory.id, { name: 'Words', ruleType: 'ProhibitedWords', config: { words: ['scam'] } });
    await create(curator, territory.id, { name: 'Types', ruleType: 'ContentType', config: { allowedTypes: ['POST', 'EVENT'] } });
    await create(curator, territory.id, { name: 'Events', ruleType: 'EventPolicy', config: { words: ['party'] } });
    const post = (payload: Record<string, unknown>) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/feed',
        headers: resident.headers,
        payload: { territoryId: territory.id, title: 'Hi', content: 'Hello', ...payload },
      });
    const words = await post({ content: 'a scam here' });
    expect(words.statusCode).toBe(400);
    expect(words.json()).toMatchObject({ code: 'MODERATION_RULE_VIOLATION' });
    expect((await post({ type: 'ALERT' })).statusCode).toBe(400);
    // EventPolicy words are fine in posts...
    expect((await post({ content: 'party tonight' })).statusCode).toBe(201);
    // ...but not in events.
    const event = (title: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/events',
        headers: resident.headers,
        payload: { territoryId: territory.id, title, startsAtUtc: new Date(Date.now() + 86_400_000).toISOString(), latitude: -23.55, longitude: -46.63 },
      });
    const refused = await event('Street party');
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'MODERATION_RULE_VIOLATION' });
    expect((await event('Street cleaning')).statusCode).toBe(201);
  });
});
