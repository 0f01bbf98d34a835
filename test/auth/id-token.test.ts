import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { newIdentity, socialLogin } from './login.js';

const ISSUER = 'https://id.acme.test';
const AUDIENCE = 'territory-app';

/** A stand-in identity provider: serves its public keys as a JWKS document over HTTP, like a real one. */
let jwksServer: Server;
let providerKey: CryptoKey;
let strangerKey: CryptoKey;
let t: TestApp;

beforeAll(async () => {
  const provider = await generateKeyPair('RS256');
  providerKey = provider.privateKey;
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  const jwk = { ...(await exportJWK(provider.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwksServer = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  const port = (jwksServer.address() as AddressInfo).port;
  t = await createTestApp({
    AUTH__TRUSTPROVIDERCLAIMS: 'false',
    AUTH__PROVIDERS: `acme|${ISSUER}|${AUDIENCE}|http://127.0.0.1:${port}/jwks`,
    JOBS__ENABLED: 'false',
  });
});
afterAll(async () => {
  await t.close();
  jwksServer.close();
});

const idToken = (sub: string, opts: { key?: CryptoKey; audience?: string; issuer?: string; expiresIn?: string } = {}) =>
  new SignJWT({ email: 'someone@acme.test' })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setSubject(sub)
    .setIssuer(opts.issuer ?? ISSUER)
    .setAudience(opts.audience ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(opts.expiresIn ?? '5m')
    .sign(opts.key ?? providerKey);

describe('POST /api/v1/auth/social with provider token verification (trust mode off)', () => {
  it('accepts a token signed by the provider whose sub is the externalId', async () => {
    const identity = newIdentity({ authProvider: 'ACME' });
    const res = await socialLogin(t, { ...identity, idToken: await idToken(identity.externalId) });
    expect(res.statusCode).toBe(200);
    const [row] = await t.sql<{ auth_provider: string; external_id: string }>('select auth_provider, external_id from app_user where id = $1', [
      res.json().user.id,
    ]);
    expect(row).toEqual({ auth_provider: 'acme', external_id: identity.externalId });
  });

  it('refuses missing, forged, foreign-audience, expired and mismatched tokens, writing nothing', async () => {
    const before = await countRows(t, 'app_user');
    const identity = newIdentity({ authProvider: 'acme' });
    const missing = await socialLogin(t, identity);
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors[0].field).toBe('idToken');
    const forged = await socialLogin(t, { ...identity, idToken: await idToken(identity.externalId, { key: strangerKey }) });
    expect(forged.statusCode).toBe(401);
    const audience = await socialLogin(t, { ...identity, idToken: await idToken(identity.externalId, { audience: 'someone-else' }) });
    expect(audience.statusCode).toBe(401);
    const issuer = await socialLogin(t, { ...identity, idToken: await idToken(identity.externalId, { issuer: 'https://evil.test' }) });
    expect(issuer.statusCode).toBe(401);
    const expired = await socialLogin(t, { ...identity, idToken: await idToken(identity.externalId, { expiresIn: '-1m' }) });
    expect(expired.statusCode).toBe(401);
    const mismatch = await socialLogin(t, { ...identity, idToken: await idToken('somebody-else') });
    expect(mismatch.statusCode).toBe(401);
    const garbage = await socialLogin(t, { ...identity, idToken: 'not-a-jwt' });
    expect(garbage.statusCode).toBe(401);
    expect(await countRows(t, 'app_user')).toBe(before);
  });

  it('answers 400 for a provider that is not configured', async () => {
    const identity = newIdentity({ authProvider: 'google' });
    const res = await socialLogin(t, { ...identity, idToken: await idToken(identity.externalId) });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('UNKNOWN_AUTH_PROVIDER');
  });
});
