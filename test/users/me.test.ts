import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { newIdentity, socialLogin, bearer } from '../auth/login.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('GET /api/v1/users/me', () => {
  it('answers the profile with every field, optional ones null', async () => {
    const login = (await socialLogin(t, newIdentity({ displayName: 'Maria <b>Silva</b>' }))).json();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(login.token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: login.user.id,
      displayName: 'Maria Silva',
      email: null,
      identityVerificationStatus: 'Unverified',
      twoFactorEnabled: false,
      permissions: [],
    });
  });

  it('lists system permissions and the identity status', async () => {
    const user = await newUser(t, { permissions: ['SYSTEM_ADMIN', 'FINANCIAL_MANAGER'], identity: 'Verified' });
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: user.headers });
    expect(res.json()).toMatchObject({ id: user.id, identityVerificationStatus: 'Verified', permissions: ['FINANCIAL_MANAGER', 'SYSTEM_ADMIN'] });
  });

  it('is 401 without a token', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/me' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
