import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  user = await newUser(t);
});
afterAll(() => t.close());

describe('bytes PostgreSQL refuses never make a 500 (finding 18)', () => {
  it('removing an interest whose path segment holds a NUL is a 204 (it can never exist)', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: '/api/v1/users/me/interests/a%00b', headers: user.headers });
    expect(res.statusCode).toBe(204);
  });

  it('a NUL in a search term is not a 500', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/territories/search?q=a%00b', headers: user.headers });
    expect(res.statusCode).toBeLessThan(500);
  });
});
