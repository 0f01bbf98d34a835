import { SignJWT } from 'jose';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { releaseDeletedAccounts } from '../../src/routers/users/deleted-accounts.job.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { addMembership, commitDuring, countRows, newAdmin, newResident, newTerritory, newUser, type TestUser } from '../factories/index.js';
import { addToCart, checkout, listItem, openStore } from '../marketplace/money-helpers.js';
import { newPost } from '../factories/content.js';
import { bearer, newCpf, newIdentity, socialLogin } from '../auth/login.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * DELETE /api/v1/users/me: erasure with a step-up. Personal data goes or is anonymised, every session ends, what
 * other people need stays under an anonymous name, and the national id stays reserved for the retention period.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const del = (headers: Record<string, string>, query = '') => t.app.inject({ method: 'DELETE', url: `/api/v1/users/me${query}`, headers });
const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url, payload, headers });
const userRow = async (id: string) =>
  (
    await t.sql<{ display_name: string; email: string | null; cpf: string | null; deleted_at_utc: Date | null; external_id: string }>(
      'select display_name, email, cpf, deleted_at_utc, external_id from app_user where id = $1',
      [id],
    )
  )[0]!;

/** A token of a session whose sign-in was `minutes` ago (refreshes keep that time). */
async function signedInMinutesAgo(userId: string, minutes: number) {
  const { jwt } = t.deps.config;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sid: newId(), auth_time: now - minutes * 60 })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setSubject(userId)
    .setIssuer(jwt.issuer)
    .setAudience(jwt.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .setJti(newId())
    .sign(new TextEncoder().encode(jwt.signingKey));
}

describe('DELETE /api/v1/users/me', () => {
  it('401 without a token', async () => {
    expect((await del({})).statusCode).toBe(401);
  });

  it('403 STEP_UP_REQUIRED when the sign-in is older than 10 minutes, and nothing is deleted', async () => {
    const user = await newUser(t);
    const res = await del(bearer(await signedInMinutesAgo(user.id, 11)));
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('STEP_UP_REQUIRED');
    expect((await userRow(user.id)).deleted_at_utc).toBeNull();
  });

  it('400 for a malformed proof, nothing deleted', async () => {
    const user = await newUser(t);
    const res = await del(user.headers, '?code=12&recoveryCode=AAAAA-BBBBB');
    expect(res.statusCode).toBe(400);
    expect((await userRow(user.id)).deleted_at_utc).toBeNull();
  });

  it('erases personal data, ends every session, keeps posts under an anonymous name', async () => {
    const identity = { ...newIdentity({ email: 'someone@example.org' }), foreignDocument: undefined, cpf: newCpf() };
    const login = (await socialLogin(t, identity)).json();
    const other = (await socialLogin(t, identity)).json();
    const userId: string = login.user.id;
    const headers = bearer(login.token);
    const territory = await newTerritory(t);
    await addMembership(t, { id: userId } as TestUser, territory, { role: 'RESIDENT' });
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: userId });
    const neighbour = await newUser(t);
    expect((await post('/api/v1/users/me/interests', { interestTag: 'surf' }, headers)).statusCode).toBeLessThan(300);
    await t.sql('insert into user_block (id, created_at_utc, blocker_user_id, blocked_user_id) values ($1, now(), $2, $3)', [newId(), neighbour.id, userId]);

    const res = await del(headers);
    expect(res.statusCode).toBe(204);

    const row = await userRow(userId);
    expect(row.display_name).toBe('Deleted user');
    expect(row.email).toBeNull();
    expect(row.deleted_at_utc).not.toBeNull();
    // Kept for the legal retention period: the same national id cannot register again meanwhile.
    expect(row.cpf).toBe(identity.cpf);
    for (const [table, where] of [
      ['territory_membership', 'user_id = $1'],
      ['user_interest', 'user_id = $1'],
      ['user_block', 'blocker_user_id = $1 or blocked_user_id = $1'],
      ['refresh_token', 'user_id = $1 and revoked_at_utc is null'],
    ] as const) {
      expect(await countRows(t, table, where, [userId]), table).toBe(0);
    }
    expect(await countRows(t, 'post', 'id = $1', [postId])).toBe(1);
    expect(await countRows(t, 'audit_entry', "action = 'user.deleted' and subject_id = $1", [userId])).toBe(1);
    // Every token of every session is refused, and no session renews.
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(other.token) })).statusCode).toBe(401);
    expect((await post('/api/v1/auth/refresh', { refreshToken: other.refreshToken })).statusCode).toBe(401);
    // Signing in again with the same identity does not reopen it.
    const again = await socialLogin(t, identity);
    expect(again.statusCode).toBe(401);
    expect(again.json().detail).toBe('This account has been deleted.');
    // Another provider identity with the same CPF is refused during the retention period...
    const sameCpf = await socialLogin(t, { ...newIdentity(), foreignDocument: undefined, cpf: identity.cpf });
    expect(sameCpf.statusCode).toBe(409);
    // ...and accepted once it has passed.
    const em = t.deps.orm.em.fork() as EntityManager;
    expect(await releaseDeletedAccounts(em, new Date(Date.now() + 181 * 86_400_000))).toBeGreaterThanOrEqual(1);
    expect(await releaseDeletedAccounts(em, new Date(Date.now() + 181 * 86_400_000))).toBe(0);
    expect((await userRow(userId)).cpf).toBeNull();
    const fresh = await socialLogin(t, identity);
    expect(fresh.statusCode).toBe(200);
    expect(fresh.json().user.id).not.toBe(userId);
  });

  it("a seller's stores stop selling and lose their contact details, their items are archived, their carts go; orders stay", async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const seller = await newResident(t, territory, { verified: true });
    const storeId = await openStore(t, seller, territory);
    const itemId = await listItem(t, seller, storeId);
    const buyer = await newUser(t);
    expect((await addToCart(t, buyer, { itemId, quantity: 1 })).statusCode).toBe(201);
    expect((await checkout(t, buyer, { territoryId: territory.id })).statusCode).toBe(201);
    // The seller's own cart, of another seller's item.
    const neighbour = await newResident(t, territory, { verified: true });
    const otherItem = await listItem(t, neighbour, await openStore(t, neighbour, territory));
    expect((await addToCart(t, seller, { itemId: otherItem, quantity: 1 })).statusCode).toBe(201);

    expect((await del(seller.headers)).statusCode).toBe(204);

    const store = await t.app.inject({ method: 'GET', url: `/api/v1/stores/${storeId}`, headers: buyer.headers });
    expect(store.statusCode).toBe(200);
    expect(store.json()).toMatchObject({ status: 'PAUSED', paymentsEnabled: false });
    expect(JSON.stringify(store.json())).not.toContain('b@example.org');
    expect(await t.sql('select contact_email, contact_phone from store where id = $1', [storeId])).toEqual([{ contact_email: null, contact_phone: null }]);
    expect(await t.sql('select status from item where id = $1', [itemId])).toEqual([{ status: 'ARCHIVED' }]);
    const again = await addToCart(t, await newUser(t), { itemId, quantity: 1 });
    expect(again.statusCode).toBe(409);
    expect(await countRows(t, 'cart', 'user_id = $1', [seller.id])).toBe(0);
    expect(await countRows(t, 'checkout', 'seller_user_id = $1', [seller.id])).toBe(1);
  });

  it('with 2FA on: 403 without a code, 400 with a wrong one, 204 with a current one', async () => {
    const login = (await socialLogin(t, newIdentity())).json();
    const headers = bearer(login.token);
    const setup = (await post('/api/v1/auth/2fa/setup', {}, headers)).json();
    const epoch = Math.floor(Date.now() / 1000);
    expect((await post('/api/v1/auth/2fa/confirm', { code: await generate({ secret: setup.secret, epoch: epoch - 30 }) }, headers)).statusCode).toBe(200);
    // Enabling 2FA kept the session that proved it.
    const without = await del(headers);
    expect(without.statusCode).toBe(403);
    expect(without.json().code).toBe('STEP_UP_REQUIRED');
    expect((await del(headers, '?code=000000')).statusCode).toBe(400);
    expect((await userRow(login.user.id)).deleted_at_utc).toBeNull();
    const res = await del(headers, `?code=${await generate({ secret: setup.secret, epoch })}`);
    expect(res.statusCode, res.body).toBe(204);
    expect((await userRow(login.user.id)).deleted_at_utc).not.toBeNull();
  });

  it('409 LAST_SYSTEM_ADMIN for the only administrator, who stays', async () => {
    await t.sql(`delete from user_permission where permission = 'SYSTEM_ADMIN'`);
    const admin = await newAdmin(t);
    const res = await del(admin.headers);
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('LAST_SYSTEM_ADMIN');
    expect((await userRow(admin.id)).deleted_at_utc).toBeNull();
    expect(await countRows(t, 'user_permission', 'user_id = $1', [admin.id])).toBe(1);
  });
});

describe("a write racing its user's account deletion (Migration20261128150000)", () => {
  /**
   * A deletion in progress, made deterministic: it holds the user's row `for update` (as deleteAccount does) and marks
   * the account deleted, uncommitted, while `write` runs; it commits once the write waits for the row.
   */
  const writeDuringDeletion = <R>(user: TestUser, write: () => PromiseLike<R>) =>
    commitDuring(
      t,
      {
        sql: `with locked as (select id from app_user where id = $1 for update)
              update app_user set deleted_at_utc = now() where id in (select id from locked)`,
        params: [user.id],
      },
      write,
    );

  it('409 ACCOUNT_DELETED and nothing written: interests, a join request, a block, a store with its contact details', async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED'] });
    const target = await newUser(t);
    const cases: Array<[table: string, where: string, write: (u: TestUser) => PromiseLike<{ statusCode: number; json(): unknown }>]> = [
      ['user_interest', 'user_id = $1', (u) => post('/api/v1/users/me/interests', { interestTag: 'gardening' }, u.headers)],
      ['join_request', 'requester_user_id = $1', (u) => post(`/api/v1/memberships/${territory.id}/become-resident`, {}, u.headers)],
      ['user_block', 'blocker_user_id = $1', (u) => post(`/api/v1/users/${target.id}/block`, {}, u.headers)],
      [
        'store',
        'owner_user_id = $1',
        (u) =>
          post(
            '/api/v1/stores',
            { territoryId: territory.id, displayName: 'Shop', contactVisibility: 'Public', contact: { email: 'me@example.org' } },
            u.headers,
          ),
      ],
    ];
    for (const [table, where, write] of cases) {
      const user = table === 'store' ? await newResident(t, territory, { verified: true }) : await newUser(t);
      if (table === 'join_request') await addMembership(t, user, territory, { role: 'VISITOR' });
      const res = await writeDuringDeletion(user, () => write(user));
      expect(res.statusCode, table).toBe(409);
      expect(res.json(), table).toMatchObject({ code: 'ACCOUNT_DELETED' });
      expect(await countRows(t, table, where, [user.id]), table).toBe(0);
    }
  });

  it('a write of a live account passes the same check (the trigger reads the row, it does not refuse it)', async () => {
    const user = await newUser(t);
    expect((await post('/api/v1/users/me/interests', { interestTag: 'birds' }, user.headers)).statusCode).toBe(201);
    expect(await countRows(t, 'user_interest', 'user_id = $1', [user.id])).toBe(1);
  });
});
