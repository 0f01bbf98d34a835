import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUserToken } from '../../src/platform/jwt.js';
import { countRows, newUser, UNKNOWN_ID, testSession } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { bearer, newIdentity, socialLogin } from './login.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const me = (headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers });
const refresh = (refreshToken: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken } });

describe('bearer tokens on a protected operation', () => {
  it('401 without a token, with WWW-Authenticate: Bearer and a problem body', async () => {
    const res = await me();
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 401, code: 'UNAUTHORIZED', instance: '/api/v1/users/me' });
  });

  it('401 for a malformed header or token', async () => {
    expect((await me({ authorization: 'Token abc' })).statusCode).toBe(401);
    expect((await me({ authorization: 'Bearer' })).statusCode).toBe(401);
    expect((await me(bearer('not.a.jwt'))).statusCode).toBe(401);
  });

  it('401 for an expired token', async () => {
    const user = await newUser(t);
    const { token } = await signUserToken({ ...t.deps.config.jwt, expiresInSeconds: -60 }, testSession(user.id));
    const res = await me(bearer(token));
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toBe('The token has expired.');
  });

  it('401 for a token signed with another key, or for another issuer/audience', async () => {
    const user = await newUser(t);
    const other = await signUserToken({ ...t.deps.config.jwt, signingKey: 'another-signing-key-of-at-least-32-chars!' }, testSession(user.id));
    expect((await me(bearer(other.token))).statusCode).toBe(401);
    const issuer = await signUserToken({ ...t.deps.config.jwt, issuer: 'someone-else' }, testSession(user.id));
    expect((await me(bearer(issuer.token))).statusCode).toBe(401);
    const audience = await signUserToken({ ...t.deps.config.jwt, audience: 'someone-else' }, testSession(user.id));
    expect((await me(bearer(audience.token))).statusCode).toBe(401);
  });

  it('401 for a token of a deleted user or of no user at all', async () => {
    const user = await newUser(t);
    await t.sql('update app_user set deleted_at_utc = now() where id = $1', [user.id]);
    expect((await me(user.headers)).statusCode).toBe(401);
    const ghost = await signUserToken(t.deps.config.jwt, testSession(UNKNOWN_ID));
    expect((await me(bearer(ghost.token))).statusCode).toBe(401);
    const notUuid = await signUserToken(t.deps.config.jwt, testSession('admin'));
    expect((await me(bearer(notUuid.token))).statusCode).toBe(401);
  });

  it('a valid token passes and carries sub, iss, aud, iat, nbf, exp, jti, and its session (sid, auth_time)', async () => {
    const login = (await socialLogin(t, newIdentity())).json();
    expect((await me(bearer(login.token))).statusCode).toBe(200);
    const claims = JSON.parse(Buffer.from(login.token.split('.')[1], 'base64url').toString());
    expect(Object.keys(claims).sort()).toEqual(['aud', 'auth_time', 'exp', 'iat', 'iss', 'jti', 'nbf', 'sid', 'sub']);
    const [family] = await t.sql<{ family_id: string }>('select family_id from refresh_token where user_id = $1', [login.user.id]);
    expect(claims.sid).toBe(family!.family_id);
    expect(Math.abs(claims.auth_time - claims.iat)).toBeLessThanOrEqual(1);
    expect(claims.sub).toBe(login.user.id);
    expect(claims.exp - claims.iat).toBe(3600);
  });
});

describe('POST /api/v1/auth/refresh', () => {
  it('rotates: a new access and refresh token; the refresh token is stored only hashed', async () => {
    const login = (await socialLogin(t, newIdentity())).json();
    const res = await refresh(login.refreshToken);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ twoFactorRequired: false, user: { id: login.user.id }, expiresInSeconds: 3600 });
    expect(body.refreshToken).not.toBe(login.refreshToken);
    expect((await me(bearer(body.token))).statusCode).toBe(200);
    expect(await countRows(t, 'refresh_token', 'token_hash = $1 or token_hash = $2', [login.refreshToken, body.refreshToken])).toBe(0);
    const rows = await t.sql<{ family_id: string; consumed: boolean; expires_days: number }>(
      `select family_id, consumed_at_utc is not null as consumed,
              round(extract(epoch from expires_at_utc - created_at_utc) / 86400)::int as expires_days
         from refresh_token where user_id = $1 order by created_at_utc`,
      [login.user.id],
    );
    expect(rows.map((r) => r.consumed)).toEqual([true, false]);
    expect(new Set(rows.map((r) => r.family_id)).size).toBe(1);
    expect(rows[0]?.expires_days).toBe(30);
  });

  it('reuse of a consumed token revokes the whole family (401), including the newest token', async () => {
    const identity = newIdentity();
    const login = (await socialLogin(t, identity)).json();
    const second = (await refresh(login.refreshToken)).json();
    const reuse = await refresh(login.refreshToken);
    expect(reuse.statusCode).toBe(401);
    expect((await refresh(second.refreshToken)).statusCode).toBe(401);
    expect(await countRows(t, 'refresh_token', 'user_id = $1 and revoked_at_utc is null', [login.user.id])).toBe(0);
    expect(await countRows(t, 'audit_entry', `action = 'auth.refresh_token_reused' and subject_id = $1`, [login.user.id])).toBeGreaterThan(0);
    // Another login (another family) is untouched.
    const other = (await socialLogin(t, identity)).json();
    expect((await refresh(other.refreshToken)).statusCode).toBe(200);
  });

  it('concurrent uses of one token: at most one succeeds', async () => {
    const login = (await socialLogin(t, newIdentity())).json();
    const results = await Promise.all(Array.from({ length: 4 }, () => refresh(login.refreshToken)));
    const ok = results.filter((r) => r.statusCode === 200);
    expect(ok.length).toBeLessThanOrEqual(1);
    expect(results.every((r) => r.statusCode === 200 || r.statusCode === 401)).toBe(true);
  });

  it('401 for an unknown or expired token, or one of a deleted user; 400 for a missing one', async () => {
    expect((await refresh('x'.repeat(43))).statusCode).toBe(401);
    const login = (await socialLogin(t, newIdentity())).json();
    await t.sql(`update refresh_token set expires_at_utc = now() - interval '1 minute' where user_id = $1`, [login.user.id]);
    expect((await refresh(login.refreshToken)).statusCode).toBe(401);
    const deleted = (await socialLogin(t, newIdentity())).json();
    await t.sql('update app_user set deleted_at_utc = now() where id = $1', [deleted.user.id]);
    expect((await refresh(deleted.refreshToken)).statusCode).toBe(401);
    const before = await countRows(t, 'refresh_token');
    const missing = await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: {} });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors[0].field).toBe('refreshToken');
    expect(await countRows(t, 'refresh_token')).toBe(before);
  });
});
