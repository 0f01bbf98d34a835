import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, newAdmin, newUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const url = (userId: string, permission: string) => `/api/v1/admin/users/${userId}/permissions/${permission}`;
const put = (userId: string, permission: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'PUT', url: url(userId, permission), headers });
const del = (userId: string, permission: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'DELETE', url: url(userId, permission), headers });
const audits = (userId: string, action: string) => countRows(t, 'audit_entry', 'subject_id = $1 and action = $2', [userId, action]);

describe('PUT /api/v1/admin/users/{userId}/permissions/{permission}', () => {
  it('grants, idempotently, with one audit row', async () => {
    const admin = await newAdmin(t);
    const user = await newUser(t);
    const res = await put(user.id, 'SYSTEM_ADMIN', admin.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ userId: user.id, permissions: ['SYSTEM_ADMIN'] });
    const again = await put(user.id, 'SYSTEM_ADMIN', admin.headers);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ userId: user.id, permissions: ['SYSTEM_ADMIN'] });
    expect(await countRows(t, 'user_permission', 'user_id = $1', [user.id])).toBe(1);
    expect(await audits(user.id, 'permission.granted')).toBe(1);
    const [row] = await t.sql<{ granted_by_user_id: string }>('select granted_by_user_id from user_permission where user_id = $1', [user.id]);
    expect(row?.granted_by_user_id).toBe(admin.id);
  });

  it('accepts the SystemAdmin/FinancialManager spellings, case-insensitively', async () => {
    const admin = await newAdmin(t);
    const user = await newUser(t);
    expect((await put(user.id, 'FinancialManager', admin.headers)).json().permissions).toEqual(['FINANCIAL_MANAGER']);
    expect((await put(user.id, 'systemadmin', admin.headers)).json().permissions).toEqual(['FINANCIAL_MANAGER', 'SYSTEM_ADMIN']);
    expect((await put(user.id, 'financial_manager', admin.headers)).statusCode).toBe(200);
    expect(await countRows(t, 'user_permission', 'user_id = $1', [user.id])).toBe(2);
  });

  it('401 without a token, 403 for a non-admin, 400 for an unknown permission or malformed id, nothing written', async () => {
    const admin = await newAdmin(t);
    const user = await newUser(t);
    const financial = await newUser(t, { permissions: ['FINANCIAL_MANAGER'] });
    const before = await countRows(t, 'user_permission');
    expect((await put(user.id, 'SYSTEM_ADMIN')).statusCode).toBe(401);
    expect((await put(user.id, 'SYSTEM_ADMIN', user.headers)).statusCode).toBe(403);
    expect((await put(user.id, 'SYSTEM_ADMIN', financial.headers)).statusCode).toBe(403);
    const unknown = await put(user.id, 'ROOT', admin.headers);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'permission' }] });
    expect((await put('not-a-uuid', 'SYSTEM_ADMIN', admin.headers)).statusCode).toBe(400);
    expect(await countRows(t, 'user_permission')).toBe(before);
    expect(await countRows(t, 'audit_entry', `subject_id = $1`, [user.id])).toBe(0);
  });

  it('404 for an unknown or deleted user', async () => {
    const admin = await newAdmin(t);
    const res = await put(UNKNOWN_ID, 'SYSTEM_ADMIN', admin.headers);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('NOT_FOUND');
    const gone = await newUser(t);
    await t.sql('update app_user set deleted_at_utc = now() where id = $1', [gone.id]);
    expect((await put(gone.id, 'SYSTEM_ADMIN', admin.headers)).statusCode).toBe(404);
  });
});

describe('DELETE /api/v1/admin/users/{userId}/permissions/{permission}', () => {
  it('revokes, idempotently (204), with one audit row', async () => {
    const admin = await newAdmin(t);
    const user = await newUser(t, { permissions: ['FINANCIAL_MANAGER'] });
    const res = await del(user.id, 'FinancialManager', admin.headers);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await del(user.id, 'FINANCIAL_MANAGER', admin.headers)).statusCode).toBe(204);
    expect(await countRows(t, 'user_permission', 'user_id = $1', [user.id])).toBe(0);
    expect(await audits(user.id, 'permission.revoked')).toBe(1);
  });

  it('401, 403, 400 and 404 like PUT, nothing removed', async () => {
    const admin = await newAdmin(t);
    const user = await newUser(t, { permissions: ['FINANCIAL_MANAGER'] });
    expect((await del(user.id, 'FINANCIAL_MANAGER')).statusCode).toBe(401);
    expect((await del(user.id, 'FINANCIAL_MANAGER', user.headers)).statusCode).toBe(403);
    expect((await del(user.id, 'MANAGER', admin.headers)).statusCode).toBe(400);
    expect((await del(UNKNOWN_ID, 'FINANCIAL_MANAGER', admin.headers)).statusCode).toBe(404);
    expect(await countRows(t, 'user_permission', 'user_id = $1', [user.id])).toBe(1);
  });

  it('takes effect on the next request of the affected user', async () => {
    const admin = await newAdmin(t);
    const deputy = await newUser(t);
    const target = await newUser(t);
    expect((await put(target.id, 'FINANCIAL_MANAGER', deputy.headers)).statusCode).toBe(403);
    await put(deputy.id, 'SYSTEM_ADMIN', admin.headers);
    expect((await put(target.id, 'FINANCIAL_MANAGER', deputy.headers)).statusCode).toBe(200);
    await del(deputy.id, 'SYSTEM_ADMIN', admin.headers);
    expect((await put(target.id, 'SYSTEM_ADMIN', deputy.headers)).statusCode).toBe(403);
    const me = await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: deputy.headers });
    expect(me.json().permissions).toEqual([]);
  });

  it('refuses to revoke the last SYSTEM_ADMIN (409); with another admin it is allowed', async () => {
    await t.sql(`delete from user_permission where permission = 'SYSTEM_ADMIN'`);
    const only = await newAdmin(t);
    const res = await del(only.id, 'SYSTEM_ADMIN', only.headers);
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('LAST_SYSTEM_ADMIN');
    expect(await countRows(t, 'user_permission', `user_id = $1 and permission = 'SYSTEM_ADMIN'`, [only.id])).toBe(1);
    const second = await newAdmin(t);
    expect((await del(only.id, 'SYSTEM_ADMIN', only.headers)).statusCode).toBe(204);
    expect((await del(second.id, 'SYSTEM_ADMIN', second.headers)).statusCode).toBe(409);
  });
});
