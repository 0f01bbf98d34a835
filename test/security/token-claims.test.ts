import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { newUser, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  user = await newUser(t);
});
afterAll(() => t.close());

const now = () => Math.floor(Date.now() / 1000);

/** A token signed with the real key and issuer, shaped by the test: only its claims and header vary. */
async function forge(opts: { typ?: string; iat?: number | null; exp?: number | null; jti?: string | null; sub?: string; session?: Record<string, unknown> }) {
  const { jwt } = t.deps.config;
  let token = new SignJWT(opts.session ?? { sid: newId(), auth_time: now() })
    .setProtectedHeader({ alg: 'HS256', typ: opts.typ ?? 'at+jwt' })
    .setSubject(opts.sub ?? user.id)
    .setIssuer(jwt.issuer)
    .setAudience(jwt.audience);
  if (opts.iat !== null) token = token.setIssuedAt(opts.iat ?? now());
  if (opts.exp !== null) token = token.setExpirationTime(opts.exp ?? now() + 600);
  if (opts.jti !== null) token = token.setJti(opts.jti ?? newId());
  return token.sign(new TextEncoder().encode(jwt.signingKey));
}

const me = async (token: string) => (await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { authorization: `Bearer ${token}` } })).statusCode;

describe('user access tokens carry every claim we issue (finding 15)', () => {
  it('a well-formed token is accepted', async () => {
    expect(await me(await forge({}))).toBe(200);
  });

  it('a token without exp, iat or jti is refused', async () => {
    expect(await me(await forge({ exp: null }))).toBe(401);
    expect(await me(await forge({ iat: null }))).toBe(401);
    expect(await me(await forge({ jti: null }))).toBe(401);
  });

  it('a token without its session (sid, auth_time), or with malformed ones, is refused', async () => {
    expect(await me(await forge({ session: {} }))).toBe(401);
    expect(await me(await forge({ session: { sid: newId() } }))).toBe(401);
    expect(await me(await forge({ session: { auth_time: now() } }))).toBe(401);
    expect(await me(await forge({ session: { sid: 'not-a-session', auth_time: now() } }))).toBe(401);
    expect(await me(await forge({ session: { sid: newId(), auth_time: 'yesterday' } }))).toBe(401);
  });

  it('a token issued in the future, or living longer than the configured lifetime, is refused', async () => {
    expect(await me(await forge({ iat: now() + 3600 }))).toBe(401);
    expect(await me(await forge({ exp: now() + 30 * 86_400 }))).toBe(401);
  });

  it('a token of another type (a plain JWT, a client-credentials token) is refused', async () => {
    expect(await me(await forge({ typ: 'JWT' }))).toBe(401);
    expect(await me(await forge({ typ: 'client+jwt' }))).toBe(401);
  });
});
