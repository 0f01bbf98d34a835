import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/platform/clock.js';
import { countRows, newUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { bearer, newIdentity, socialLogin } from './login.js';

let t: TestApp;
// The server reads time through `clock`; tests move it forward instead of sleeping (TOTP steps are 30 s).
let offsetMs = 0;
beforeAll(async () => {
  t = await createTestApp();
  vi.spyOn(clock, 'now').mockImplementation(() => new Date(Date.now() + offsetMs));
});
afterAll(async () => {
  vi.restoreAllMocks();
  await t.close();
});

const advance = (seconds: number) => {
  offsetMs += seconds * 1000;
};
/** The authenticator app's code at the server's current time. */
const codeNow = (secret: string) => generate({ secret, epoch: Math.floor(clock.now().getTime() / 1000) });

const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload, headers });

interface Enrolled {
  identity: ReturnType<typeof newIdentity>;
  userId: string;
  headers: Record<string, string>;
  secret: string;
  /** The code that confirmed the setup: its time step is used up. */
  confirmCode: string;
  recoveryCodes: string[];
}

/** Signs up, sets up and confirms 2FA; the confirming code's step is then used up. */
async function enroll(): Promise<Enrolled> {
  const identity = newIdentity();
  const login = (await socialLogin(t, identity)).json();
  const headers = bearer(login.token);
  const setup = (await post('/api/v1/auth/2fa/setup', {}, headers)).json();
  const confirmCode = await codeNow(setup.secret);
  const confirm = await post('/api/v1/auth/2fa/confirm', { code: confirmCode }, headers);
  expect(confirm.statusCode).toBe(200);
  return { identity, userId: login.user.id, headers, secret: setup.secret, confirmCode, recoveryCodes: confirm.json().recoveryCodes };
}

async function challenge(identity: Enrolled['identity']): Promise<string> {
  const res = await socialLogin(t, identity);
  expect(res.statusCode).toBe(200);
  return res.json().challengeId;
}

describe('2FA setup and confirm', () => {
  it('setup answers a secret, an otpauth URI, a PNG QR code and a manual key; the secret stays pending', async () => {
    const user = await newUser(t);
    const res = await post('/api/v1/auth/2fa/setup', {}, user.headers);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.secret).toMatch(/^[A-Z2-7]{16,}$/);
    expect(body.qrCodeUri).toMatch(/^otpauth:\/\/totp\//);
    expect(body.qrCodeUri).toContain(`secret=${body.secret}`);
    expect(body.qrCodeDataUrl).toMatch(/^data:image\/png;base64,/);
    expect(body.manualEntryKey.replace(/ /g, '')).toBe(body.secret);
    const [row] = await t.sql<{ two_factor_enabled: boolean; two_factor_pending_secret: string }>(
      'select two_factor_enabled, two_factor_pending_secret from app_user where id = $1',
      [user.id],
    );
    expect(row).toEqual({ two_factor_enabled: false, two_factor_pending_secret: body.secret });
  });

  it('confirm with a wrong code is 400 and enables nothing; a valid code enables 2FA with 10 hashed recovery codes', async () => {
    const user = await newUser(t);
    const { secret } = (await post('/api/v1/auth/2fa/setup', {}, user.headers)).json();
    const wrong = await post('/api/v1/auth/2fa/confirm', { code: '000000' === (await codeNow(secret)) ? '111111' : '000000' }, user.headers);
    expect(wrong.statusCode).toBe(400);
    expect(await countRows(t, 'recovery_code', 'user_id = $1', [user.id])).toBe(0);
    expect(await countRows(t, 'app_user', 'id = $1 and two_factor_enabled', [user.id])).toBe(0);
    const malformed = await post('/api/v1/auth/2fa/confirm', { code: '12ab' }, user.headers);
    expect(malformed.statusCode).toBe(400);

    const ok = await post('/api/v1/auth/2fa/confirm', { code: await codeNow(secret) }, user.headers);
    expect(ok.statusCode).toBe(200);
    const codes: string[] = ok.json().recoveryCodes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const stored = await t.sql<{ code_hash: string }>('select code_hash from recovery_code where user_id = $1', [user.id]);
    expect(stored).toHaveLength(10);
    expect(stored.some((r) => codes.includes(r.code_hash))).toBe(false);
    expect(await countRows(t, 'audit_entry', `action = 'auth.2fa_enabled' and subject_id = $1`, [user.id])).toBe(1);

    const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: user.headers });
    expect(me.json().twoFactorEnabled).toBe(true);
    expect((await post('/api/v1/auth/2fa/setup', {}, user.headers)).statusCode).toBe(409);
    expect((await post('/api/v1/auth/2fa/confirm', { code: '123456' }, user.headers)).statusCode).toBe(409);
  });

  it('confirm before setup is 400; both need a token', async () => {
    const user = await newUser(t);
    const res = await post('/api/v1/auth/2fa/confirm', { code: '123456' }, user.headers);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('TWO_FACTOR_SETUP_REQUIRED');
    expect((await post('/api/v1/auth/2fa/setup', {})).statusCode).toBe(401);
    expect((await post('/api/v1/auth/2fa/confirm', { code: '123456' })).statusCode).toBe(401);
  });
});

describe('login with 2FA', () => {
  it('social login answers the marker and no token; verify with a fresh code answers tokens', async () => {
    const user = await enroll();
    const res = await socialLogin(t, user.identity);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ twoFactorRequired: true, challengeId: expect.any(String), marker: `2FA_REQUIRED:${body.challengeId}` });
    expect(await countRows(t, 'two_factor_challenge', "id = $1 and expires_at_utc > now() + interval '4 minutes'", [body.challengeId])).toBe(1);

    advance(30);
    const verify = await post('/api/v1/auth/2fa/verify', { challengeId: body.challengeId, code: await codeNow(user.secret) });
    expect(verify.statusCode).toBe(200);
    const login = verify.json();
    expect(login).toMatchObject({ twoFactorRequired: false, user: { id: user.userId, twoFactorEnabled: true }, expiresInSeconds: 3600 });
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(login.token) });
    expect(me.statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: login.refreshToken } })).statusCode).toBe(200);

    // Single use: the completed challenge is dead even with another valid code.
    advance(30);
    const again = await post('/api/v1/auth/2fa/verify', { challengeId: body.challengeId, code: await codeNow(user.secret) });
    expect(again.statusCode).toBe(401);
  });

  it('never accepts a TOTP time step twice', async () => {
    const user = await enroll();
    // The step that confirmed the setup is used up.
    const first = await challenge(user.identity);
    const replayOfConfirm = await post('/api/v1/auth/2fa/verify', { challengeId: first, code: user.confirmCode });
    expect(replayOfConfirm.statusCode).toBe(401);

    advance(30);
    const code = await codeNow(user.secret);
    expect((await post('/api/v1/auth/2fa/verify', { challengeId: first, code })).statusCode).toBe(200);
    const second = await challenge(user.identity);
    const replay = await post('/api/v1/auth/2fa/verify', { challengeId: second, code });
    expect(replay.statusCode).toBe(401);
    expect(replay.headers['www-authenticate']).toBe('Bearer');
  });

  it('a challenge dies after 5 attempts, even for a right code', async () => {
    const user = await enroll();
    const challengeId = await challenge(user.identity);
    advance(30);
    const right = await codeNow(user.secret);
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      const res = await post('/api/v1/auth/2fa/verify', { challengeId, code: wrong });
      expect(res.statusCode).toBe(401);
    }
    expect((await post('/api/v1/auth/2fa/verify', { challengeId, code: right })).statusCode).toBe(401);
    const [row] = await t.sql<{ attempts: number; consumed_at_utc: Date | null }>('select attempts, consumed_at_utc from two_factor_challenge where id = $1', [
      challengeId,
    ]);
    expect(row).toEqual({ attempts: 5, consumed_at_utc: null });
    // A new login gets a new challenge, and the right code still works there.
    expect((await post('/api/v1/auth/2fa/verify', { challengeId: await challenge(user.identity), code: right })).statusCode).toBe(200);
  });

  it('a challenge expires after 5 minutes', async () => {
    const user = await enroll();
    const challengeId = await challenge(user.identity);
    advance(5 * 60 + 1);
    const res = await post('/api/v1/auth/2fa/verify', { challengeId, code: await codeNow(user.secret) });
    expect(res.statusCode).toBe(401);
  });

  it('unknown challenge 401, malformed challenge or code 400', async () => {
    expect((await post('/api/v1/auth/2fa/verify', { challengeId: UNKNOWN_ID, code: '123456' })).statusCode).toBe(401);
    expect((await post('/api/v1/auth/2fa/verify', { challengeId: 'nope', code: '123456' })).statusCode).toBe(400);
    const user = await enroll();
    const challengeId = await challenge(user.identity);
    const bad = await post('/api/v1/auth/2fa/verify', { challengeId, code: 'abcdef' });
    expect(bad.statusCode).toBe(400);
    expect(await countRows(t, 'two_factor_challenge', 'id = $1 and attempts = 0', [challengeId])).toBe(1);
  });
});

describe('POST /api/v1/auth/2fa/recover', () => {
  it('logs in with a recovery code, which is then used up', async () => {
    const user = await enroll();
    const code = user.recoveryCodes[0]!;
    const res = await post('/api/v1/auth/2fa/recover', { challengeId: await challenge(user.identity), recoveryCode: code.toLowerCase() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ twoFactorRequired: false, user: { id: user.userId } });
    expect(await countRows(t, 'recovery_code', 'user_id = $1 and used_at_utc is not null', [user.userId])).toBe(1);

    const reuse = await post('/api/v1/auth/2fa/recover', { challengeId: await challenge(user.identity), recoveryCode: code });
    expect(reuse.statusCode).toBe(401);
    const wrong = await post('/api/v1/auth/2fa/recover', { challengeId: await challenge(user.identity), recoveryCode: 'AAAAA-AAAAA' });
    expect(wrong.statusCode).toBe(401);
    const missing = await post('/api/v1/auth/2fa/recover', { challengeId: await challenge(user.identity) });
    expect(missing.statusCode).toBe(400);
    expect(await countRows(t, 'recovery_code', 'user_id = $1 and used_at_utc is not null', [user.userId])).toBe(1);
  });
});

describe('POST /api/v1/auth/2fa/disable', () => {
  it('needs a token; needs exactly one valid proof (400 otherwise, still enabled)', async () => {
    const user = await enroll();
    expect((await post('/api/v1/auth/2fa/disable', { code: '123456' })).statusCode).toBe(401);
    expect((await post('/api/v1/auth/2fa/disable', {}, user.headers)).statusCode).toBe(400);
    expect((await post('/api/v1/auth/2fa/disable', { code: '123456', recoveryCode: user.recoveryCodes[0] }, user.headers)).statusCode).toBe(400);
    advance(30);
    const right = await codeNow(user.secret);
    expect((await post('/api/v1/auth/2fa/disable', { code: right === '000000' ? '111111' : '000000' }, user.headers)).statusCode).toBe(400);
    expect((await post('/api/v1/auth/2fa/disable', { recoveryCode: 'AAAAA-AAAAA' }, user.headers)).statusCode).toBe(400);
    expect(await countRows(t, 'app_user', 'id = $1 and two_factor_enabled', [user.userId])).toBe(1);
    expect(await countRows(t, 'recovery_code', 'user_id = $1', [user.userId])).toBe(10);
  });

  it('with a TOTP code: disables, discards secret and recovery codes; login gives tokens again', async () => {
    const user = await enroll();
    advance(30);
    const res = await post('/api/v1/auth/2fa/disable', { code: await codeNow(user.secret) }, user.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ twoFactorEnabled: false });
    const [row] = await t.sql<{ two_factor_enabled: boolean; two_factor_secret: string | null }>(
      'select two_factor_enabled, two_factor_secret from app_user where id = $1',
      [user.userId],
    );
    expect(row).toEqual({ two_factor_enabled: false, two_factor_secret: null });
    expect(await countRows(t, 'recovery_code', 'user_id = $1', [user.userId])).toBe(0);
    expect(await countRows(t, 'audit_entry', `action = 'auth.2fa_disabled' and subject_id = $1`, [user.userId])).toBe(1);
    const login = await socialLogin(t, user.identity);
    expect(login.json()).toMatchObject({ twoFactorRequired: false, user: { twoFactorEnabled: false } });
    expect((await post('/api/v1/auth/2fa/disable', { code: '123456' }, user.headers)).statusCode).toBe(409);
  });

  it('with a recovery code', async () => {
    const user = await enroll();
    const res = await post('/api/v1/auth/2fa/disable', { recoveryCode: user.recoveryCodes[3] }, user.headers);
    expect(res.statusCode).toBe(200);
    expect(await countRows(t, 'app_user', 'id = $1 and two_factor_enabled', [user.userId])).toBe(0);
  });
});
