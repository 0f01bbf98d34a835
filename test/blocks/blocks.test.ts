import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedUserIdsOf } from '../../src/routers/blocks/blocks.queries.js';
import { countRows, newUser, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const PATHS = [(id: string) => `/api/v1/users/${id}/block`, (id: string) => `/api/v1/blocks/users/${id}`];
const blocks = (blocker: TestUser, blocked: string) => countRows(t, 'user_block', 'blocker_user_id = $1 and blocked_user_id = $2', [blocker.id, blocked]);
const audits = (action: string, actor: TestUser, subject: string) =>
  countRows(t, 'audit_entry', 'action = $1 and actor_user_id = $2 and subject_id = $3', [action, actor.id, subject]);

describe.each(PATHS.map((path) => [path(':userId'), path] as const))('%s', (_label, path) => {
  it('POST blocks (204), idempotently: one row and one audit entry however often; DELETE unblocks (204), also idempotently', async () => {
    const me = await newUser(t);
    const them = await newUser(t);
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ method: 'POST', url: path(them.id), headers: me.headers });
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
    }
    expect(await blocks(me, them.id)).toBe(1);
    expect(await audits('user.blocked', me, them.id)).toBe(1);
    // Blocking is one-way.
    expect(await blocks(them, me.id)).toBe(0);

    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ method: 'DELETE', url: path(them.id), headers: me.headers });
      expect(res.statusCode).toBe(204);
    }
    expect(await blocks(me, them.id)).toBe(0);
    expect(await audits('user.unblocked', me, them.id)).toBe(1);
  });

  it('is 400 for blocking yourself or a malformed id, 404 for an unknown user, 401 without a token; nothing written', async () => {
    const me = await newUser(t);
    const them = await newUser(t);
    for (const method of ['POST', 'DELETE'] as const) {
      const self = await t.app.inject({ method, url: path(me.id), headers: me.headers });
      expect(self.statusCode).toBe(400);
      expect(self.json()).toMatchObject({ code: 'CANNOT_BLOCK_SELF' });
      const malformed = await t.app.inject({ method, url: path('nope'), headers: me.headers });
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'userId' }] });
      const unknown = await t.app.inject({ method, url: path(UNKNOWN_ID), headers: me.headers });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND' });
      const anonymous = await t.app.inject({ method, url: path(them.id) });
      expect(anonymous.statusCode).toBe(401);
    }
    expect(await countRows(t, 'user_block', 'blocker_user_id = $1', [me.id])).toBe(0);
    expect(await countRows(t, 'audit_entry', "actor_user_id = $1 and action like 'user.%block%'", [me.id])).toBe(0);
  });
});

describe('blocks across both paths and blockedUserIdsOf', () => {
  it('the two paths act on the same block; blockedUserIdsOf lists whom the caller blocked', async () => {
    const me = await newUser(t);
    const a = await newUser(t);
    const b = await newUser(t);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/users/${a.id}/block`, headers: me.headers })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/blocks/users/${a.id}`, headers: me.headers })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/blocks/users/${b.id}`, headers: me.headers })).statusCode).toBe(204);
    expect(await blocks(me, a.id)).toBe(1);

    const em = t.deps.orm.em.fork() as EntityManager;
    expect((await blockedUserIdsOf(em, me.id)).sort()).toEqual([a.id, b.id].sort());
    expect(await blockedUserIdsOf(em, a.id)).toEqual([]);

    expect((await t.app.inject({ method: 'DELETE', url: `/api/v1/blocks/users/${a.id}`, headers: me.headers })).statusCode).toBe(204);
    expect(await blockedUserIdsOf(em, me.id)).toEqual([b.id]);
  });

  it('concurrent blocks of the same user write one row', async () => {
    const me = await newUser(t);
    const them = await newUser(t);
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => t.app.inject({ method: 'POST', url: PATHS[i % 2]!(them.id), headers: me.headers })));
    expect(results.map((r) => r.statusCode)).toEqual(Array(6).fill(204));
    expect(await blocks(me, them.id)).toBe(1);
    expect(await audits('user.blocked', me, them.id)).toBe(1);
  });
});
