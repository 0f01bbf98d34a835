import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSystemConfig } from '../../src/db/seed/system-config.js';
import { SYSTEM_CONFIG_DEFAULTS } from '../../src/routers/system-config/system-config.defaults.js';
import { readConfigNumber } from '../../src/routers/system-config/system-config.queries.js';
import { countRows, newAdmin, newUser, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let admin: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  await seedSystemConfig(t.deps.orm.em.fork());
  admin = await newAdmin(t);
});
afterAll(() => t.close());

const base = '/api/v1/admin/system-config';
const put = (user: TestUser, payload: Record<string, unknown>) => t.app.inject({ method: 'PUT', url: base, headers: user.headers, payload });
const auditRows = (key: string) => countRows(t, 'audit_entry', `action = 'system-config.updated' and subject_id = $1`, [key]);
const valueOf = async (key: string) => (await t.sql<{ value: string }>('select value from system_config where key = $1', [key]))[0]?.value;

describe('seedSystemConfig', () => {
  it('seeds the keys the code reads, idempotently, never overwriting a changed value', async () => {
    const keys = SYSTEM_CONFIG_DEFAULTS.map((d) => d.key);
    expect(keys).toEqual(expect.arrayContaining(['JoinRequests:MaxCreationsPerWindow', 'JoinRequests:WindowHours', 'Notifications:DispatchBatchSize']));
    expect(await countRows(t, 'system_config', 'key = any($1)', [keys])).toBe(keys.length);
    expect(await valueOf('JoinRequests:MaxCreationsPerWindow')).toBe('3');
    await t.sql(`update system_config set value = '7' where key = 'Notifications:DispatchBatchSize'`);
    await Promise.all([seedSystemConfig(t.deps.orm.em.fork()), seedSystemConfig(t.deps.orm.em.fork())]);
    expect(await countRows(t, 'system_config', 'key = any($1)', [keys])).toBe(keys.length);
    expect(await valueOf('Notifications:DispatchBatchSize')).toBe('7');
    await t.sql(`update system_config set value = '100' where key = 'Notifications:DispatchBatchSize'`);
  });
});

describe('readConfigNumber', () => {
  it('reads a seeded value and falls back for a missing or non-numeric one', async () => {
    const em = t.deps.orm.em.fork();
    expect(await readConfigNumber(em, 'JoinRequests:WindowHours', 99)).toBe(24);
    expect(await readConfigNumber(em, 'Nothing:Here', 42)).toBe(42);
    await t.sql(`insert into system_config (key, value, created_at_utc, updated_at_utc) values ('Test:NotANumber', 'abc', now(), now())`);
    expect(await readConfigNumber(em, 'Test:NotANumber', 8)).toBe(8);
  });
});

describe('GET /api/v1/admin/system-config', () => {
  it('lists the entries for a SYSTEM_ADMIN', async () => {
    const res = await t.app.inject({ method: 'GET', url: base, headers: admin.headers });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { key: string }[];
    expect(body.map((e) => e.key)).toEqual(expect.arrayContaining(SYSTEM_CONFIG_DEFAULTS.map((d) => d.key)));
    expect(body.find((e) => e.key === 'Notifications:DispatchBatchSize')).toEqual({
      key: 'Notifications:DispatchBatchSize',
      value: '100',
      category: 'Notifications',
      description: expect.any(String),
      updatedAtUtc: expect.stringMatching(/Z$/),
      updatedByUserId: null,
    });
  });

  it('is 401 without a token and 403 for a non-admin', async () => {
    expect((await t.app.inject({ method: 'GET', url: base })).statusCode).toBe(401);
    const user = await newUser(t);
    const res = await t.app.inject({ method: 'GET', url: base, headers: user.headers });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('GET /api/v1/admin/system-config/{key}', () => {
  it('answers one entry, 404 when missing, 400 when malformed', async () => {
    const res = await t.app.inject({ method: 'GET', url: `${base}/JoinRequests:WindowHours`, headers: admin.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ key: 'JoinRequests:WindowHours', value: '24', category: 'JoinRequests' });
    const encoded = await t.app.inject({ method: 'GET', url: `${base}/${encodeURIComponent('JoinRequests:WindowHours')}`, headers: admin.headers });
    expect(encoded.statusCode).toBe(200);
    const missing = await t.app.inject({ method: 'GET', url: `${base}/No:Such.Key`, headers: admin.headers });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'NOT_FOUND' });
    const malformed = await t.app.inject({ method: 'GET', url: `${base}/${encodeURIComponent('bad key!')}`, headers: admin.headers });
    expect(malformed.statusCode).toBe(400);
  });

  it('is 401 without a token and 403 for a non-admin', async () => {
    expect((await t.app.inject({ method: 'GET', url: `${base}/JoinRequests:WindowHours` })).statusCode).toBe(401);
    const user = await newUser(t);
    expect((await t.app.inject({ method: 'GET', url: `${base}/JoinRequests:WindowHours`, headers: user.headers })).statusCode).toBe(403);
  });
});

describe('PUT /api/v1/admin/system-config', () => {
  it('creates a new entry, audited', async () => {
    const res = await put(admin, { key: 'Feed:Motd', value: 'Welcome', category: 'Feed', description: 'Message of the day' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      key: 'Feed:Motd',
      value: 'Welcome',
      category: 'Feed',
      description: 'Message of the day',
      updatedAtUtc: expect.stringMatching(/Z$/),
      updatedByUserId: admin.id,
    });
    expect(await auditRows('Feed:Motd')).toBe(1);
    const audit = await t.sql<{ actor_user_id: string; data: Record<string, unknown> }>(
      `select actor_user_id, data from audit_entry where action = 'system-config.updated' and subject_id = 'Feed:Motd'`,
    );
    expect(audit[0]).toEqual({ actor_user_id: admin.id, data: { key: 'Feed:Motd', previousValue: null, value: 'Welcome' } });
  });

  it('updates a seeded key, keeping category and description when omitted; the code reads the new value', async () => {
    const res = await put(admin, { key: 'JoinRequests:WindowHours', value: '12' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      key: 'JoinRequests:WindowHours',
      value: '12',
      category: 'JoinRequests',
      description: expect.stringContaining('window'),
    });
    expect(await readConfigNumber(t.deps.orm.em.fork(), 'JoinRequests:WindowHours', 24)).toBe(12);
    const audit = await t.sql<{ data: Record<string, unknown> }>(
      `select data from audit_entry where action = 'system-config.updated' and subject_id = 'JoinRequests:WindowHours'`,
    );
    expect(audit.map((a) => a.data)).toEqual([{ key: 'JoinRequests:WindowHours', previousValue: '24', value: '12' }]);
    await put(admin, { key: 'JoinRequests:WindowHours', value: '24' });
  });

  it('refuses a non-numeric or out-of-range value for a key the code reads, writing nothing', async () => {
    for (const value of ['abc', '1.5', '-1', '0', '100000000', '']) {
      const res = await put(admin, { key: 'Notifications:DispatchBatchSize', value });
      expect(res.statusCode, value).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'value' }] });
    }
    expect(await valueOf('Notifications:DispatchBatchSize')).toBe('100');
    expect(await auditRows('Notifications:DispatchBatchSize')).toBe(0);
  });

  it('is 400 for a malformed body, writing nothing', async () => {
    const before = await countRows(t, 'system_config');
    for (const payload of [{ value: '1' }, { key: 'A:B' }, { key: 'has space', value: '1' }, { key: 'A:B', value: 5 }, { key: 'x'.repeat(201), value: '1' }]) {
      expect((await put(admin, payload)).statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect(await countRows(t, 'system_config')).toBe(before);
  });

  it('is 401 without a token and 403 for a non-admin, writing nothing', async () => {
    const before = await countRows(t, 'system_config');
    expect((await t.app.inject({ method: 'PUT', url: base, payload: { key: 'X:Y', value: '1' } })).statusCode).toBe(401);
    const user = await newUser(t);
    const res = await put(user, { key: 'JoinRequests:WindowHours', value: '1' });
    expect(res.statusCode).toBe(403);
    expect(await valueOf('JoinRequests:WindowHours')).toBe('24');
    expect(await countRows(t, 'system_config')).toBe(before);
  });

  it('lets concurrent creations of the same key both succeed', async () => {
    const [a, b] = await Promise.all([put(admin, { key: 'Race:Key', value: 'a' }), put(admin, { key: 'Race:Key', value: 'b' })]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(await countRows(t, 'system_config', `key = 'Race:Key'`)).toBe(1);
    expect(await auditRows('Race:Key')).toBe(2);
  });
});
