import { afterEach, describe, expect, it, vi } from 'vitest';
import { bearerToken, cachedTokenCheck, type JwtSettings, signAccessToken, signUserToken, verifyAccessTokenCached } from '../../src/platform/jwt.js';
import { newId } from '../../src/platform/ids.js';

// The verified-token cache and the Authorization header's parse that reads it: no database involved.
const settings: JwtSettings = { signingKey: 'k'.repeat(64), issuer: 'territory-platform', audience: 'territory-platform', expiresInSeconds: 900 };
const sign = async (s = settings) => (await signUserToken(s, { userId: newId(), sessionId: newId(), authenticatedAt: new Date() })).token;

afterEach(() => {
  vi.useRealTimers();
});

describe('bearerToken', () => {
  it('takes the token of "Bearer <token>", the scheme in any case and any whitespace after it', async () => {
    const token = await sign();
    expect(bearerToken(`Bearer ${token}`)).toBe(token);
    expect(bearerToken(`bearer \t ${token}`)).toBe(token);
    expect(bearerToken(`BEARER ${token}`)).toBe(token);
  });

  it('refuses other schemes, an empty token and a token with whitespace, before and after the token is verified', async () => {
    const token = await sign();
    for (const round of ['unknown', 'verified']) {
      if (round === 'verified') expect((await verifyAccessTokenCached(settings, token)).ok).toBe(true);
      expect(bearerToken(`Token ${token}`), round).toBeNull();
      expect(bearerToken('Bearer '), round).toBeNull();
      expect(bearerToken(`Bearer ${token} x`), round).toBeNull();
      expect(bearerToken(`Bearer ${token}\t`), round).toBeNull();
    }
    // Here it is a known token (the lookup path), and the same as the pattern's capture.
    expect(bearerToken(`Bearer ${token}`)).toBe(token);
  });

  it('does not take a verified token holding whitespace as it stands (X-User-Token verifies what it is sent)', async () => {
    const token = await sign();
    // The signature is base64url, decoded whitespace and all: the token still verifies.
    const spaced = `${token.slice(0, -5)} ${token.slice(-5)}`;
    expect((await verifyAccessTokenCached(settings, spaced)).ok).toBe(true);
    expect(cachedTokenCheck(settings, spaced)?.ok).toBe(true);
    expect(bearerToken(`Bearer ${spaced}`)).toBeNull();
  });
});

describe('cachedTokenCheck', () => {
  it('answers only what verifyAccessTokenCached verified, for the same settings, audience and typ', async () => {
    const token = await sign();
    expect(cachedTokenCheck(settings, token)).toBeUndefined();
    const check = await verifyAccessTokenCached(settings, token);
    expect(check.ok).toBe(true);
    expect(cachedTokenCheck(settings, token)).toBe(check);
    expect(cachedTokenCheck({ ...settings }, token)).toBe(check);
    expect(cachedTokenCheck({ ...settings, signingKey: 'x'.repeat(64) }, token)).toBeUndefined();
    expect(cachedTokenCheck({ ...settings, issuer: 'elsewhere' }, token)).toBeUndefined();
    expect(cachedTokenCheck({ ...settings, expiresInSeconds: 60 }, token)).toBeUndefined();
    expect(cachedTokenCheck(settings, token, 'another-audience')).toBeUndefined();
    expect(cachedTokenCheck(settings, token, settings.audience, 'client+jwt')).toBeUndefined();
  });

  it('never answers a token that only ends like a verified one', async () => {
    const token = await sign();
    await verifyAccessTokenCached(settings, token);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    // The same signature (so the same end) on another payload: a forgery, refused by verification.
    const forged = `${header}.${payload.slice(0, -2)}${payload.slice(-2) === 'fQ' ? 'fX' : 'fQ'}.${signature}`;
    expect(forged.slice(-30)).toBe(token.slice(-30));
    expect(cachedTokenCheck(settings, forged)).toBeUndefined();
    expect((await verifyAccessTokenCached(settings, forged)).ok).toBe(false);
    // The genuine token is still known.
    expect(cachedTokenCheck(settings, token)?.ok).toBe(true);
  });

  it('forgets a token once it expires', async () => {
    const { token } = await signAccessToken({ ...settings, expiresInSeconds: 60 }, newId(), { sid: newId(), auth_time: Math.floor(Date.now() / 1000) });
    const short = { ...settings, expiresInSeconds: 60 };
    expect((await verifyAccessTokenCached(short, token)).ok).toBe(true);
    expect(cachedTokenCheck(short, token)?.ok).toBe(true);
    // Past `exp` and the 30 s of clock tolerance that verification allows.
    vi.useFakeTimers({ now: Date.now() + 95_000, toFake: ['Date'] });
    expect(cachedTokenCheck(short, token)).toBeUndefined();
    expect(await verifyAccessTokenCached(short, token)).toMatchObject({ ok: false });
  });
});
