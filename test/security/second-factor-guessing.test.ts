import type { EntityManager } from '@mikro-orm/postgresql';
import { dispatchOutbox } from '../../src/routers/notifications/outbox-dispatch.job.js';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clock } from '../../src/platform/clock.js';
import { countRows } from '../factories/index.js';
import { bearer, newIdentity, socialLogin } from '../auth/login.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload, headers });
const codeNow = (secret: string) => generate({ secret, epoch: Math.floor(clock.now().getTime() / 1000) });

/** A user with 2FA on, and a session token (what a thief of the access token holds). */
async function enrolled() {
  const identity = newIdentity();
  const login = (await socialLogin(t, identity)).json();
  const headers = bearer(login.token);
  const setup = (await post('/api/v1/auth/2fa/setup', {}, headers)).json();
  const confirmed = await post('/api/v1/auth/2fa/confirm', { code: await codeNow(setup.secret) }, headers);
  expect(confirmed.statusCode).toBe(200);
  return { identity, userId: login.user.id as string, headers, secret: setup.secret as string, recoveryCodes: confirmed.json().recoveryCodes as string[] };
}

/** A six-digit code that is not the current one. */
const wrongCode = async (secret: string) => ((await codeNow(secret)) === '000000' ? '111111' : '000000');

describe('second-factor guessing is bounded per user (finding 1)', () => {
  it('2FA disable: after 10 wrong codes even the right one is refused (429) and 2FA stays on', async () => {
    const user = await enrolled();
    // A security alert is delivered whatever the preference says: the API refuses to switch it off (400), and one
    // stored off (by an earlier version) is ignored.
    const off = await t.app.inject({
      method: 'PUT',
      url: '/api/v1/users/me/preferences/notifications',
      headers: user.headers,
      payload: { SECURITY_ALERT: false },
    });
    expect(off.statusCode).toBe(400);
    await t.sql(
      `insert into user_preferences (user_id, created_at_utc, updated_at_utc, notifications) values ($1, now(), now(), '{"SECURITY_ALERT": false}')
       on conflict (user_id) do update set notifications = excluded.notifications`,
      [user.userId],
    );
    const wrong = await wrongCode(user.secret);
    for (let i = 0; i < 10; i++) expect((await post('/api/v1/auth/2fa/disable', { code: wrong }, user.headers)).statusCode).toBe(400);
    const locked = await post('/api/v1/auth/2fa/disable', { code: await codeNow(user.secret) }, user.headers);
    expect(locked.statusCode).toBe(429);
    expect(locked.headers['retry-after']).toBe('60');
    expect(await countRows(t, 'app_user', 'id = $1 and two_factor_enabled', [user.userId])).toBe(1);
    // The person is told, once per lock.
    expect((await post('/api/v1/auth/2fa/disable', { code: await codeNow(user.secret) }, user.headers)).statusCode).toBe(429);
    await dispatchOutbox(t.deps.orm.em.fork() as EntityManager);
    expect(await countRows(t, 'notification', "type = 'SECURITY_ALERT' and user_id = $1", [user.userId])).toBe(1);
  });

  it('a burst of 40 parallel guesses gets at most 10 checked', async () => {
    const user = await enrolled();
    const wrong = await wrongCode(user.secret);
    const answers = await Promise.all(Array.from({ length: 40 }, () => post('/api/v1/auth/2fa/disable', { code: wrong }, user.headers)));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 400).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(30);
  });

  it('fresh login challenges share the same count: guessing does not restart with a new challenge', async () => {
    const user = await enrolled();
    const wrong = await wrongCode(user.secret);
    let checked = 0;
    for (let round = 0; round < 4; round++) {
      const challengeId = (await socialLogin(t, user.identity)).json().challengeId as string;
      for (let i = 0; i < 4; i++) {
        const res = await post('/api/v1/auth/2fa/verify', { challengeId, code: wrong });
        if (res.statusCode === 401) checked++;
        else expect(res.statusCode).toBe(429);
      }
    }
    expect(checked).toBe(10);
  });

  it('a right code clears the count', async () => {
    const user = await enrolled();
    const wrong = await wrongCode(user.secret);
    for (let i = 0; i < 9; i++) await post('/api/v1/auth/2fa/disable', { code: wrong }, user.headers);
    const challengeId = (await socialLogin(t, user.identity)).json().challengeId as string;
    // The confirm code's time step is used up: the next step's code, as the authenticator shows it 30 s later.
    const next = generate({ secret: user.secret, epoch: Math.floor(clock.now().getTime() / 1000) + 30 });
    expect((await post('/api/v1/auth/2fa/verify', { challengeId, code: await next })).statusCode).toBe(200);
    expect(await countRows(t, 'credential_attempt', 'subject_key = $1', [`second-factor:${user.userId}`])).toBe(0);
  });
});

describe('changing the second factor ends the sessions opened before (finding 7, in part)', () => {
  it('sessions opened before 2FA was enabled end (refresh and access tokens); the one that proved the factor goes on', async () => {
    const identity = newIdentity();
    const earlier = (await socialLogin(t, identity)).json();
    const login = (await socialLogin(t, identity)).json();
    const headers = bearer(login.token);
    const setup = (await post('/api/v1/auth/2fa/setup', {}, headers)).json();
    expect((await post('/api/v1/auth/2fa/confirm', { code: await codeNow(setup.secret) }, headers)).statusCode).toBe(200);
    expect((await post('/api/v1/auth/refresh', { refreshToken: earlier.refreshToken })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(earlier.token) })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers })).statusCode).toBe(200);
    expect((await post('/api/v1/auth/refresh', { refreshToken: login.refreshToken })).statusCode).toBe(200);
  });

  it('disabling 2FA ends the other sessions too', async () => {
    const user = await enrolled();
    const challengeId = (await socialLogin(t, user.identity)).json().challengeId as string;
    const next = await generate({ secret: user.secret, epoch: Math.floor(clock.now().getTime() / 1000) + 30 });
    const session = (await post('/api/v1/auth/2fa/verify', { challengeId, code: next })).json();
    // \`user.headers\` belongs to the session that enabled 2FA: another session than \`session\`.
    expect((await post('/api/v1/auth/2fa/disable', { recoveryCode: user.recoveryCodes[0] }, user.headers)).statusCode).toBe(200);
    expect((await post('/api/v1/auth/refresh', { refreshToken: session.refreshToken })).statusCode).toBe(401);
  });
});
