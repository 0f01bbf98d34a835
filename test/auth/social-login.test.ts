import { REGISTRATION_REFUSED } from '../../src/routers/auth/auth.service.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemoData } from '../../src/db/seed/demo.js';
import { countRows } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { bearer, newCpf, newIdentity, socialLogin } from './login.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await seedDemoData(t.deps.orm.em.fork(), t.deps.config);
});
afterAll(() => t.close());

describe('POST /api/v1/auth/social', () => {
  it('signs up a new user with a punctuated CPF and answers tokens that work', async () => {
    const cpf = newCpf();
    const punctuated = `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`;
    const identity = newIdentity({ cpf: punctuated, foreignDocument: undefined, email: 'ana@example.com', phoneNumber: '+55 11 91234-5678' });
    const res = await socialLogin(t, identity);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      twoFactorRequired: false,
      user: { displayName: identity.displayName, email: 'ana@example.com', identityVerificationStatus: 'Unverified', twoFactorEnabled: false },
      expiresInSeconds: 3600,
    });
    expect(typeof body.token).toBe('string');
    expect(body.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [row] = await t.sql<{ cpf: string; auth_provider: string; phone_number: string }>(
      'select cpf, auth_provider, phone_number from app_user where id = $1',
      [body.user.id],
    );
    expect(row).toEqual({ cpf, auth_provider: 'google', phone_number: '+55 11 91234-5678' });
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(body.token) });
    expect(me.statusCode).toBe(200);
    expect(me.json().id).toBe(body.user.id);
  });

  it('signs up with a foreign document, and email null when not given', async () => {
    const res = await socialLogin(t, newIdentity());
    expect(res.statusCode).toBe(200);
    expect(res.json().user.email).toBeNull();
  });

  it('finds a returning user by provider (case-insensitive) and externalId, without documents', async () => {
    const identity = newIdentity();
    const first = (await socialLogin(t, identity)).json();
    const again = await socialLogin(t, { authProvider: 'GOOGLE', externalId: identity.externalId, displayName: 'Other name' });
    expect(again.statusCode).toBe(200);
    expect(again.json().user.id).toBe(first.user.id);
    expect(await countRows(t, 'app_user', 'external_id = $1', [identity.externalId])).toBe(1);
  });

  it('refuses a new user without exactly one of cpf or foreignDocument, or with a bad CPF, writing nothing', async () => {
    const before = await countRows(t, 'app_user');
    const neither = await socialLogin(t, newIdentity({ foreignDocument: undefined }));
    expect(neither.statusCode).toBe(400);
    expect(neither.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'cpf' }] });
    const both = await socialLogin(t, newIdentity({ cpf: newCpf() }));
    expect(both.statusCode).toBe(400);
    const badDigits = await socialLogin(t, newIdentity({ foreignDocument: undefined, cpf: '529.982.247-24' }));
    expect(badDigits.statusCode).toBe(400);
    expect(badDigits.json().errors[0].field).toBe('cpf');
    const repeated = await socialLogin(t, newIdentity({ foreignDocument: undefined, cpf: '111.111.111-11' }));
    expect(repeated.statusCode).toBe(400);
    const noName = await socialLogin(t, newIdentity({ displayName: '' }));
    expect(noName.statusCode).toBe(400);
    const badEmail = await socialLogin(t, newIdentity({ email: 'not-an-email' }));
    expect(badEmail.statusCode).toBe(400);
    const noProvider = await socialLogin(t, newIdentity({ authProvider: '' }));
    expect(noProvider.statusCode).toBe(400);
    expect(await countRows(t, 'app_user')).toBe(before);
  });

  it('answers a generic 409 when the CPF belongs to another account (no registration oracle, finding 12)', async () => {
    const cpf = newCpf();
    expect((await socialLogin(t, newIdentity({ foreignDocument: undefined, cpf }))).statusCode).toBe(200);
    const before = await countRows(t, 'app_user');
    const res = await socialLogin(t, newIdentity({ foreignDocument: undefined, cpf }));
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'REGISTRATION_REFUSED', detail: REGISTRATION_REFUSED });
    expect(res.body).not.toContain('CPF');
    expect(await countRows(t, 'app_user')).toBe(before);
  });

  it('logs the seeded demo users in without a CPF', async () => {
    const res = await socialLogin(t, { authProvider: 'demo', externalId: 'admin', displayName: 'Demo Admin' });
    expect(res.statusCode).toBe(200);
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(res.json().token) });
    expect(me.json()).toMatchObject({ displayName: 'Demo Admin', permissions: ['SYSTEM_ADMIN'] });
    const visitor = await socialLogin(t, { authProvider: 'demo', externalId: 'visitor', displayName: 'Demo Visitor' });
    expect(visitor.statusCode).toBe(200);
  });

  it('refuses a deleted account with 401', async () => {
    const identity = newIdentity();
    const first = (await socialLogin(t, identity)).json();
    await t.sql('update app_user set deleted_at_utc = now() where id = $1', [first.user.id]);
    const res = await socialLogin(t, identity);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('survives concurrent first logins of the same identity: one user, every call 200', async () => {
    const identity = newIdentity({ foreignDocument: undefined, cpf: newCpf() });
    const results = await Promise.all(Array.from({ length: 6 }, () => socialLogin(t, identity)));
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(results.map((r) => r.json().user.id)).size).toBe(1);
    expect(await countRows(t, 'app_user', 'external_id = $1', [identity.externalId])).toBe(1);
  });

  it('rejects a body that is not an object', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/social', payload: '[1]', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
  });
});

describe('BOOTSTRAP_ADMINS', () => {
  let b: TestApp;
  beforeAll(async () => {
    b = await createTestApp({ BOOTSTRAP_ADMINS: 'Google:Boss-1, github:other', JOBS__ENABLED: 'false' });
  });
  afterAll(() => b.close());

  it('grants SYSTEM_ADMIN on login, once and audited: the provider named in any case, the external id exactly', async () => {
    const identity = newIdentity({ externalId: 'Boss-1' });
    const first = await socialLogin(b, identity);
    expect(first.statusCode).toBe(200);
    await socialLogin(b, identity);
    const me = await b.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(first.json().token) });
    expect(me.json().permissions).toEqual(['SYSTEM_ADMIN']);
    const userId = first.json().user.id;
    expect(await countRows(b, 'user_permission', 'user_id = $1', [userId])).toBe(1);
    expect(await countRows(b, 'audit_entry', `action = 'permission.granted' and subject_id = $1`, [userId])).toBe(1);
    // Another account, and one whose id differs only in case (a provider's subject is case-sensitive): no admins.
    for (const other of [await socialLogin(b, newIdentity()), await socialLogin(b, newIdentity({ externalId: 'boss-1' }))]) {
      expect(other.statusCode).toBe(200);
      const otherMe = await b.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(other.json().token) });
      expect(otherMe.json().permissions).toEqual([]);
    }
  });
});

describe('rate limit of the auth bucket', () => {
  let r: TestApp;
  beforeAll(async () => {
    r = await createTestApp({ RateLimiting__Auth__PermitLimit: '5', JOBS__ENABLED: 'false' });
  });
  afterAll(() => r.close());

  it('allows 5 auth calls a minute per client, shared by login and refresh; the 6th is 429', async () => {
    const login = await socialLogin(r, newIdentity());
    expect(login.statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await socialLogin(r, newIdentity())).statusCode).toBe(200);
    const refresh = await r.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: login.json().refreshToken } });
    expect(refresh.statusCode).toBe(200);
    const limited = await socialLogin(r, newIdentity());
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.json()).toMatchObject({
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit exceeded. Please try again later.',
      instance: '/api/v1/auth/social',
    });
  });
});
