import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireCsrf } from '../../src/http/csrf.js';
import type { TestApp } from '../setup/test-app.js';
import { createAppWith } from './support.js';

let t: TestApp;
let calls = 0;
beforeAll(async () => {
  t = await createAppWith({}, (app) => {
    // A route that opts in to CSRF validation; routes that do not opt in are unaffected.
    app.post('/test/csrf-protected', { preHandler: requireCsrf }, async () => ({ ok: ++calls }));
    app.post('/test/csrf-free', async () => ({ ok: true }));
  });
});
afterAll(() => t.close());

async function issue() {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/csrf-token' });
  expect(res.statusCode).toBe(200);
  const cookie = res.cookies.find((c) => c.name === '__Host-CSRF');
  return { res, cookie, token: (res.json() as { token: string }).token };
}

describe('GET /api/v1/csrf-token', () => {
  it('returns a token and sets the __Host-CSRF cookie (HttpOnly, Secure, SameSite=Strict, Path=/)', async () => {
    const { res, cookie, token } = await issue();
    expect(res.json()).toEqual({ token: expect.any(String), headerName: 'X-CSRF-Token' });
    expect(token.length).toBeGreaterThan(20);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(cookie).toMatchObject({ path: '/', httpOnly: true, secure: true, sameSite: 'Strict' });
    expect(cookie?.domain).toBeUndefined();
    // The cookie holds the secret, not the token itself.
    expect(cookie?.value).not.toBe(token);
  });

  it('keeps the browser secret when it already has one', async () => {
    const first = await issue();
    const again = await t.app.inject({ method: 'GET', url: '/api/v1/csrf-token', cookies: { '__Host-CSRF': first.cookie!.value } });
    expect(again.cookies.find((c) => c.name === '__Host-CSRF')).toBeUndefined();
    const token = (again.json() as { token: string }).token;
    const ok = await t.app.inject({
      method: 'POST',
      url: '/test/csrf-protected',
      cookies: { '__Host-CSRF': first.cookie!.value },
      headers: { 'x-csrf-token': token },
    });
    expect(ok.statusCode).toBe(200);
  });
});

describe('requireCsrf on an opted-in route', () => {
  it('accepts the token with its cookie', async () => {
    const { cookie, token } = await issue();
    const before = calls;
    const res = await t.app.inject({
      method: 'POST',
      url: '/test/csrf-protected',
      cookies: { '__Host-CSRF': cookie!.value },
      headers: { 'X-CSRF-Token': token },
      payload: {},
    });
    expect(res.statusCode).toBe(200);
    expect(calls).toBe(before + 1);
  });

  const forbiddenCases: [
    string,
    (s: { cookie: string; token: string; other: string }) => { cookies?: Record<string, string>; headers?: Record<string, string> },
  ][] = [
    ['no header', (s) => ({ cookies: { '__Host-CSRF': s.cookie } })],
    ['no cookie', (s) => ({ headers: { 'x-csrf-token': s.token } })],
    ['a token of another browser', (s) => ({ cookies: { '__Host-CSRF': s.cookie }, headers: { 'x-csrf-token': s.other } })],
    ['a tampered token', (s) => ({ cookies: { '__Host-CSRF': s.cookie }, headers: { 'x-csrf-token': `${s.token.slice(0, -2)}xx` } })],
    ['the cookie value as the token', (s) => ({ cookies: { '__Host-CSRF': s.cookie }, headers: { 'x-csrf-token': s.cookie } })],
  ];
  it.each(forbiddenCases)('answers 403 problem CSRF_TOKEN_INVALID with %s, without running the handler', async (_name, build) => {
    const mine = await issue();
    const theirs = await issue();
    const before = calls;
    const res = await t.app.inject({
      method: 'POST',
      url: '/test/csrf-protected',
      ...build({ cookie: mine.cookie!.value, token: mine.token, other: theirs.token }),
    });
    expect(res.statusCode).toBe(403);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 403, title: 'Forbidden', code: 'CSRF_TOKEN_INVALID', instance: '/test/csrf-protected' });
    expect(calls).toBe(before);
  });

  it('a token in the body does not count: only the header', async () => {
    const { cookie, token } = await issue();
    const res = await t.app.inject({ method: 'POST', url: '/test/csrf-protected', cookies: { '__Host-CSRF': cookie!.value }, payload: { _csrf: token } });
    expect(res.statusCode).toBe(403);
  });

  it('routes that do not opt in need no token', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/test/csrf-free', payload: {} });
    expect(res.statusCode).toBe(200);
  });
});
