import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newCurator, newResident, newTerritory, type TestTerritory } from '../factories/index.js';
import { newPost } from '../factories/content.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { clientToken, expectV2Error, v2 } from './helpers.js';

/**
 * A journey passes some fields to the v1 services under their v1 names; a refusal names the field the client sent
 * (DESIGN section 15: 400 INVALID_REQUEST with details {field, message}).
 */
let t: TestApp;
let territory: TestTerritory;
let client: string;
beforeAll(async () => {
  t = await createTestApp({ JOBS__ENABLED: 'false' });
  const admin = await newAdmin(t);
  territory = await newTerritory(t);
  client = await clientToken(t, admin);
});
afterAll(() => t.close());

describe('GET /api/v2/journeys/events/territory-events', () => {
  it('toUtc before fromUtc: details name toUtc and fromUtc, as v1 names endDate and startDate', async () => {
    const user = await newResident(t, territory);
    const range = 'fromUtc=2030-01-01T00:00:00Z&toUtc=2029-01-01T00:00:00Z';
    const res = await v2(t, 'GET', `/events/territory-events?territoryId=${territory.id}&${range}`, { client, user });
    const body = expectV2Error(res, 400, 'INVALID_REQUEST');
    expect(body.details).toEqual({ field: 'toUtc', message: 'must not be before fromUtc' });
    expect(body.error).toBe('toUtc: must not be before fromUtc');

    // The v1 listing keeps its own names.
    const v1 = await t.app.inject({
      method: 'GET',
      url: `/api/v1/events?territoryId=${territory.id}&startDate=2030-01-01T00:00:00Z&endDate=2029-01-01T00:00:00Z`,
      headers: user.headers,
    });
    expect(v1.statusCode).toBe(400);
    expect(v1.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'endDate', message: 'must not be before startDate' }] });
  });
});

describe('POST /api/v2/journeys/feed/interact', () => {
  it('a COMMENT with a prohibited word: details name comment, the quoted word is kept; nothing is written', async () => {
    const curator = await newCurator(t, territory);
    const rule = await t.app.inject({
      method: 'POST',
      url: `/api/v1/territories/${territory.id}/moderation-rules`,
      headers: curator.headers,
      payload: { name: 'Words', ruleType: 'ProhibitedWords', config: { words: ['content'] } },
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const user = await newResident(t, territory, { verified: true });
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: user.id });

    const res = await v2(t, 'POST', '/feed/interact', { client, user, payload: { postId, action: 'COMMENT', comment: 'such content' } });
    const body = expectV2Error(res, 400, 'INVALID_REQUEST');
    expect(body.details).toEqual({ field: 'comment', message: 'Words: the comment contains the prohibited word "content".' });
    expect(body.error).toBe('Moderation rule "Words" (ProhibitedWords) was violated: the comment contains the prohibited word "content".');
    expect(await countRows(t, 'post_comment', 'post_id = $1', [postId])).toBe(0);
    expect(await countRows(t, 'post_interaction_count', 'post_id = $1 and comment_count > 0', [postId])).toBe(0);

    // A clean comment still goes through.
    const ok = await v2(t, 'POST', '/feed/interact', { client, user, payload: { postId, action: 'COMMENT', comment: 'Nice' } });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ counts: { comments: 1 }, userInteractions: { commented: true } });
  });
});
