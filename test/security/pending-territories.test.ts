import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdmin, newTerritory, newUser, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let suggester: TestUser;
let pending: TestTerritory;
beforeAll(async () => {
  t = await createTestApp();
  suggester = await newUser(t);
  pending = await newTerritory(t, { status: 'PENDING' });
  await t.sql('update territory set suggested_by_user_id = $1 where id = $2', [suggester.id, pending.id]);
});
afterAll(() => t.close());

const call = (method: 'GET' | 'PUT', url: string, user: TestUser, payload?: unknown) =>
  t.app.inject({ method, url, headers: user.headers, ...(payload ? { payload: payload as Record<string, unknown> } : {}) });

describe("someone else's PENDING territory cannot be told apart from a missing one (finding 13)", () => {
  it('features and media configuration answer 404 to a stranger, as for an unknown id', async () => {
    const stranger = await newUser(t);
    expect((await call('PUT', `/api/v1/territories/${pending.id}/features`, stranger, { enabledFlags: ['ALERTPOSTS'] })).statusCode).toBe(404);
    expect((await call('GET', `/api/v1/territories/${pending.id}/media-config`, stranger)).statusCode).toBe(404);
    expect((await call('PUT', `/api/v1/territories/${pending.id}/media-config`, stranger, { posts: { maxMediaCount: 1 } })).statusCode).toBe(404);
  });

  it('its suggester and system admins still see it', async () => {
    expect((await call('GET', `/api/v1/territories/${pending.id}/media-config`, suggester)).statusCode).toBe(200);
    const admin = await newAdmin(t);
    expect((await call('GET', `/api/v1/territories/${pending.id}/media-config`, admin)).statusCode).toBe(200);
    expect((await call('PUT', `/api/v1/territories/${pending.id}/features`, admin, { enabledFlags: ['ALERTPOSTS'] })).statusCode).toBe(200);
  });
});
