import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMembership,
  countRows,
  newAdmin,
  newCurator,
  newModerator,
  newResident,
  newTerritory,
  newUser,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const url = (territoryId: string, userId: string, capability: string) => `/api/v1/territories/${territoryId}/capabilities/${userId}/${capability}`;
const put = (territoryId: string, userId: string, capability: string, caller?: TestUser) =>
  t.app.inject({ method: 'PUT', url: url(territoryId, userId, capability), headers: caller?.headers ?? {} });
const del = (territoryId: string, userId: string, capability: string, caller?: TestUser) =>
  t.app.inject({ method: 'DELETE', url: url(territoryId, userId, capability), headers: caller?.headers ?? {} });
const membershipOf = async (territoryId: string, userId: string) =>
  (
    await t.sql<{ role: string; capabilities: string[] }>('select role, capabilities from territory_membership where territory_id = $1 and user_id = $2', [
      territoryId,
      userId,
    ])
  )[0];

describe('PUT /api/v1/territories/{territoryId}/capabilities/{userId}/{capability}', () => {
  it('a SYSTEM_ADMIN grants CURATOR; a user without membership becomes a VISITOR holding it (audited, idempotent)', async () => {
    const admin = await newAdmin(t);
    const territory = await newTerritory(t);
    const user = await newUser(t);
    const res = await put(territory.id, user.id, 'CURATOR', admin);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      userId: user.id,
      role: 'VISITOR',
      residencyVerification: 'NONE',
      capabilities: ['CURATOR'],
      createdAtUtc: expect.stringMatching(/Z$/),
    });
    const again = await put(territory.id, user.id, 'curator', admin);
    expect(again.statusCode).toBe(200);
    expect(again.json().capabilities).toEqual(['CURATOR']);
    expect(again.json().id).toBe(res.json().id);
    expect(await membershipOf(territory.id, user.id)).toEqual({ role: 'VISITOR', capabilities: ['CURATOR'] });
    expect(await countRows(t, 'audit_entry', `action = 'capability.granted' and territory_id = $1`, [territory.id])).toBe(1);
  });

  it('keeps an existing membership: role and verification stay, the capability is added', async () => {
    const admin = await newAdmin(t);
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory, { verified: true });
    const res = await put(territory.id, resident.id, 'Moderator', admin);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ role: 'RESIDENT', residencyVerification: 'GEOVERIFIED', capabilities: ['MODERATOR'] });
    expect((await put(territory.id, resident.id, 'CURATOR', admin)).json().capabilities).toEqual(['MODERATOR', 'CURATOR']);
  });

  it('a CURATOR of the territory grants MODERATOR, not CURATOR; others are 403 and nothing is written', async () => {
    const territory = await newTerritory(t);
    const elsewhere = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const foreignCurator = await newCurator(t, elsewhere);
    const moderator = await newModerator(t, territory);
    const plain = await newUser(t);
    const target = await newUser(t);

    const before = await countRows(t, 'territory_membership');
    expect((await put(territory.id, target.id, 'CURATOR', curator)).statusCode).toBe(403);
    expect((await put(territory.id, target.id, 'MODERATOR', moderator)).statusCode).toBe(403);
    expect((await put(territory.id, target.id, 'MODERATOR', foreignCurator)).statusCode).toBe(403);
    const denied = await put(territory.id, target.id, 'MODERATOR', plain);
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('FORBIDDEN');
    expect(await countRows(t, 'territory_membership')).toBe(before);
    expect(await countRows(t, 'audit_entry', 'territory_id = $1', [territory.id])).toBe(0);

    const ok = await put(territory.id, target.id, 'MODERATOR', curator);
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ role: 'VISITOR', capabilities: ['MODERATOR'] });
  });

  it('401 without a token; 400 for an unknown capability or malformed ids; nothing written', async () => {
    const admin = await newAdmin(t);
    const territory = await newTerritory(t);
    const user = await newUser(t);
    const before = await countRows(t, 'territory_membership');
    expect((await put(territory.id, user.id, 'CURATOR')).statusCode).toBe(401);
    const unknown = await put(territory.id, user.id, 'OWNER', admin);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'capability' }] });
    expect((await put('nope', user.id, 'CURATOR', admin)).statusCode).toBe(400);
    expect((await put(territory.id, 'nope', 'CURATOR', admin)).statusCode).toBe(400);
    expect(await countRows(t, 'territory_membership')).toBe(before);
  });

  it('404 for an unknown territory or user', async () => {
    const admin = await newAdmin(t);
    const territory = await newTerritory(t);
    const user = await newUser(t);
    const missing = UNKNOWN_ID;
    const noTerritory = await put(missing, user.id, 'CURATOR', admin);
    expect(noTerritory.statusCode).toBe(404);
    expect(noTerritory.json().code).toBe('NOT_FOUND');
    expect((await put(territory.id, missing, 'CURATOR', admin)).statusCode).toBe(404);
    expect((await del(territory.id, missing, 'CURATOR', admin)).statusCode).toBe(404);
  });

  it('concurrent grants to a user without membership create one membership', async () => {
    const admin = await newAdmin(t);
    const territory = await newTerritory(t);
    const user = await newUser(t);
    const results = await Promise.all([
      put(territory.id, user.id, 'CURATOR', admin),
      put(territory.id, user.id, 'MODERATOR', admin),
      put(territory.id, user.id, 'CURATOR', admin),
    ]);
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(await countRows(t, 'territory_membership', 'territory_id = $1 and user_id = $2', [territory.id, user.id])).toBe(1);
    expect((await membershipOf(territory.id, user.id))?.capabilities.sort()).toEqual(['CURATOR', 'MODERATOR']);
  });
});

describe('DELETE /api/v1/territories/{territoryId}/capabilities/{userId}/{capability}', () => {
  it('revokes (204, idempotent, audited); the membership stays', async () => {
    const admin = await newAdmin(t);
    const territory = await newTerritory(t);
    const user = await newUser(t);
    await addMembership(t, user, territory, { role: 'RESIDENT', capabilities: ['CURATOR', 'MODERATOR'] });
    const res = await del(territory.id, user.id, 'CURATOR', admin);
    expect(res.statusCode).toBe(204);
    expect((await del(territory.id, user.id, 'CURATOR', admin)).statusCode).toBe(204);
    expect(await membershipOf(territory.id, user.id)).toEqual({ role: 'RESIDENT', capabilities: ['MODERATOR'] });
    expect(await countRows(t, 'audit_entry', `action = 'capability.revoked' and territory_id = $1`, [territory.id])).toBe(1);
    const stranger = await newUser(t);
    expect((await del(territory.id, stranger.id, 'MODERATOR', admin)).statusCode).toBe(204);
    expect(await membershipOf(territory.id, stranger.id)).toBeUndefined();
  });

  it('a CURATOR revokes MODERATOR but not CURATOR; 401/403/400 change nothing', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const other = await newCurator(t, territory);
    const moderator = await newModerator(t, territory);
    expect((await del(territory.id, other.id, 'CURATOR', curator)).statusCode).toBe(403);
    expect((await del(territory.id, moderator.id, 'MODERATOR')).statusCode).toBe(401);
    expect((await del(territory.id, moderator.id, 'MODERATOR', moderator)).statusCode).toBe(403);
    expect((await del(territory.id, moderator.id, 'BOSS', curator)).statusCode).toBe(400);
    expect((await membershipOf(territory.id, other.id))?.capabilities).toEqual(['CURATOR']);
    expect((await membershipOf(territory.id, moderator.id))?.capabilities).toEqual(['MODERATOR']);
    expect((await del(territory.id, moderator.id, 'MODERATOR', curator)).statusCode).toBe(204);
    expect((await membershipOf(territory.id, moderator.id))?.capabilities).toEqual([]);
  });

  it('a revoked CURATOR loses the power at the next request', async () => {
    const admin = await newAdmin(t);
    const territory = await newTerritory(t);
    const user = await newUser(t);
    const target = await newUser(t);
    await put(territory.id, user.id, 'CURATOR', admin);
    expect((await put(territory.id, target.id, 'MODERATOR', user)).statusCode).toBe(200);
    await del(territory.id, user.id, 'CURATOR', admin);
    expect((await del(territory.id, target.id, 'MODERATOR', user)).statusCode).toBe(403);
  });
});
