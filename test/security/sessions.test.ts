import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { countRows } from '../factories/index.js';
import { bearer, newIdentity, socialLogin } from '../auth/login.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const post = (url: string, payload?: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) });
async function tokenIssuedSecondsAgo(userId: string, seconds: number) {
  const { jwt } = t.deps.config;
  const iat = Math.floor(Date.now() / 1000) - seconds;
  return new SignJWT({ sid: newId(), auth_time: iat })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setSubject(userId)
    .setIssuer(jwt.issuer)
    .setAudience(jwt.audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 600)
    .setJti(newId())
    .sign(new TextEncoder().encode(jwt.signingKey));
}

const me = async (token: string) => (await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) })).statusCode;

describe('sessions can be ended (finding 7, in part)', () => {
  it('logout ends one session: its refresh token no longer renews; other sessions go on', async () => {
    const identity = newIdentity();
    const first = (await socialLogin(t, identity)).json();
    const second = (await socialLogin(t, identity)).json();
    const out = await post('/api/v1/auth/logout', { refreshToken: first.refreshToken });
    expect(out.statusCode).toBe(204);
    expect((await post('/api/v1/auth/refresh', { refreshToken: first.refreshToken })).statusCode).toBe(401);
    expect((await post('/api/v1/auth/refresh', { refreshToken: second.refreshToken })).statusCode).toBe(200);
    // Idempotent, and an unknown token is no oracle.
    expect((await post('/api/v1/auth/logout', { refreshToken: first.refreshToken })).statusCode).toBe(204);
    expect((await post('/api/v1/auth/logout', { refreshToken: 'not-a-token' })).statusCode).toBe(204);
    expect((await post('/api/v1/auth/logout', {})).statusCode).toBe(400);
  });

  it('sign-out everywhere ends every session at once, access tokens included', async () => {
    const identity = newIdentity();
    const first = (await socialLogin(t, identity)).json();
    const second = (await socialLogin(t, identity)).json();
    // An access token of that user issued a few seconds ago (`iat` has whole seconds, so one issued in the very
    // second of the sign-out would still count).
    const earlier = await tokenIssuedSecondsAgo(first.user.id, 5);
    expect(await me(earlier)).toBe(200);
    const out = await post('/api/v1/auth/sign-out-everywhere', undefined, bearer(first.token));
    expect(out.statusCode).toBe(204);
    expect(await countRows(t, 'refresh_token', 'user_id = $1 and revoked_at_utc is null', [first.user.id])).toBe(0);
    expect((await post('/api/v1/auth/refresh', { refreshToken: second.refreshToken })).statusCode).toBe(401);
    expect(await me(earlier)).toBe(401);
    expect(await countRows(t, 'audit_entry', "action = 'auth.signed_out_everywhere' and subject_id = $1", [first.user.id])).toBe(1);
    // A new login works again at once.
    const again = (await socialLogin(t, identity)).json();
    expect(again.token).toBeTruthy();
  });

  it('sign-out everywhere needs a signed-in caller', async () => {
    expect((await post('/api/v1/auth/sign-out-everywhere')).statusCode).toBe(401);
  });
});
