import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/problems.js';
import type { AuthUser } from '../../src/platform/service-context.js';
import { requireTerritory, type RequireTerritoryOptions } from '../../src/policy/territory-access.js';
import {
  addMembership,
  newAdmin,
  newCurator,
  newModerator,
  newResident,
  newTerritory,
  newUser,
  newVisitor,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const callerOf = (user: TestUser, permissions: AuthUser['permissions'] = []): AuthUser => ({
  id: user.id,
  displayName: user.displayName,
  identityVerificationStatus: 'Unverified',
  permissions,
});

function check(user: AuthUser | null, territoryId: string | null, opts: RequireTerritoryOptions = {}, sessionId: string | null = null) {
  return requireTerritory({ em: t.deps.orm.em.fork() as EntityManager, user, sessionId }, territoryId, opts);
}

/** The refusal of a check, as status code and problem code. */
async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  return { code: error.code, problemCode: error.problemCode, message: error.message };
}

describe('requireTerritory', () => {
  it('answers what the caller is in the territory, in one call', async () => {
    const territory = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const resident = await newResident(t, territory, { verified: true });
    const access = await check(callerOf(resident), territory.id);
    expect(access.territoryId).toBe(territory.id);
    expect(access.territory).toMatchObject({ name: territory.name, status: 'ACTIVE', enabledFlags: ['ALERTPOSTS'], radiusKm: 5 });
    expect(access.role).toBe('RESIDENT');
    expect([access.isMember, access.isResident, access.isVerifiedResident, access.seesResidentsOnly]).toEqual([true, true, true, true]);
    expect(access.holds('CURATOR')).toBe(false);
    expect(access.hasFlag('ALERTPOSTS')).toBe(true);

    const stranger = await check(callerOf(await newUser(t)), territory.id);
    expect([stranger.role, stranger.isMember, stranger.seesResidentsOnly]).toEqual([null, false, false]);
    const anonymous = await check(null, territory.id);
    expect(anonymous.membership).toBeNull();
  });

  it('404 for an unknown territory, and for one that is not ACTIVE unless status ANY', async () => {
    const user = callerOf(await newUser(t));
    expect(await refusal(check(user, UNKNOWN_ID))).toMatchObject({ code: 'NOT_FOUND', problemCode: 'NOT_FOUND' });
    const pending = await newTerritory(t, { status: 'PENDING' });
    expect(await refusal(check(user, pending.id))).toMatchObject({ code: 'NOT_FOUND', problemCode: 'NOT_FOUND' });
    expect((await check(user, pending.id, { status: 'ANY' })).territory.status).toBe('PENDING');
  });

  it('without an id, uses the territory selected for the session; nothing selected is 404 NO_TERRITORY_SELECTED', async () => {
    const territory = await newTerritory(t);
    const user = await newUser(t);
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/territories/selection',
      headers: { ...user.headers, 'x-session-id': 'tab-1' },
      payload: { territoryId: territory.id },
    });
    expect((await check(callerOf(user), null, {}, 'tab-1')).territoryId).toBe(territory.id);
    expect(await refusal(check(callerOf(user), null, {}, 'tab-2'))).toMatchObject({ problemCode: 'NO_TERRITORY_SELECTED' });
    expect(await refusal(check(callerOf(user), null))).toMatchObject({ problemCode: 'NO_TERRITORY_SELECTED' });
  });

  it('as: member, resident, verifiedResident and capabilities, each with its 403', async () => {
    const territory = await newTerritory(t);
    const visitor = callerOf(await newVisitor(t, territory));
    const resident = callerOf(await newResident(t, territory));
    const verified = callerOf(await newResident(t, territory, { verified: true }));
    const curator = callerOf(await newCurator(t, territory));
    const moderator = callerOf(await newModerator(t, territory));
    const stranger = callerOf(await newUser(t));

    expect(await refusal(check(stranger, territory.id, { as: 'member' }))).toMatchObject({ code: 'FORBIDDEN', problemCode: 'NOT_MEMBER' });
    await check(visitor, territory.id, { as: 'member' });
    expect(await refusal(check(visitor, territory.id, { as: 'resident' }))).toMatchObject({ problemCode: 'NOT_RESIDENT' });
    await check(resident, territory.id, { as: 'resident' });
    expect(await refusal(check(resident, territory.id, { as: 'verifiedResident' }))).toMatchObject({ problemCode: 'NOT_VERIFIED_RESIDENT' });
    await check(verified, territory.id, { as: 'verifiedResident' });
    expect(await refusal(check(moderator, territory.id, { as: 'CURATOR' }))).toMatchObject({
      problemCode: 'FORBIDDEN',
      message: 'This operation requires CURATOR in this territory.',
    });
    await check(curator, territory.id, { as: 'CURATOR' });
    await check(moderator, territory.id, { as: ['CURATOR', 'MODERATOR'] });
    // Any one of the roles is enough.
    await check(curator, territory.id, { as: ['verifiedResident', 'CURATOR'] });
  });

  it('SYSTEM_ADMIN holds every capability but is no member without a membership', async () => {
    const territory = await newTerritory(t);
    const admin = callerOf(await newAdmin(t), ['SYSTEM_ADMIN']);
    const access = await check(admin, territory.id, { as: ['CURATOR'] });
    expect([access.holds('CURATOR'), access.holds('MODERATOR'), access.isSystemAdmin, access.seesResidentsOnly]).toEqual([true, true, true, true]);
    expect(await refusal(check(admin, territory.id, { as: 'member' }))).toMatchObject({ problemCode: 'NOT_MEMBER' });
  });

  it('an operation may word its own 403', async () => {
    const territory = await newTerritory(t);
    const user = callerOf(await newUser(t));
    expect(await refusal(check(user, territory.id, { as: 'resident', denied: { message: 'Only residents post here.', code: 'NOT_RESIDENT' } }))).toEqual({
      code: 'FORBIDDEN',
      problemCode: 'NOT_RESIDENT',
      message: 'Only residents post here.',
    });
  });

  it('flag: a domain behind a disabled flag answers as if it did not exist there', async () => {
    const off = await newTerritory(t);
    const on = await newTerritory(t, { flags: ['MARKETPLACEENABLED', 'CHATENABLED', 'CHATDMENABLED'] });
    const user = await newUser(t);
    await addMembership(t, user, off);
    await addMembership(t, user, on);
    const caller = callerOf(user);
    expect(await refusal(check(caller, off.id, { flag: 'MARKETPLACEENABLED' }))).toMatchObject({ code: 'NOT_FOUND', problemCode: 'MARKETPLACE_DISABLED' });
    expect(await refusal(check(caller, off.id, { flag: 'CHATENABLED' }))).toMatchObject({ code: 'NOT_FOUND', problemCode: 'CHAT_DISABLED' });
    expect(await refusal(check(caller, off.id, { flag: 'CHATDMENABLED' }))).toMatchObject({ code: 'NOT_FOUND', problemCode: 'CHAT_DISABLED' });
    await check(caller, on.id, { flag: 'MARKETPLACEENABLED' });
    await check(caller, on.id, { flag: 'CHATDMENABLED' });
    // The flag is checked before the role: a switched-off domain does not exist there, for anyone.
    const stranger = callerOf(await newUser(t));
    expect(await refusal(check(stranger, off.id, { as: 'member', flag: 'MARKETPLACEENABLED' }))).toMatchObject({ problemCode: 'MARKETPLACE_DISABLED' });
    expect(await refusal(check(stranger, on.id, { as: 'member', flag: 'MARKETPLACEENABLED' }))).toMatchObject({ problemCode: 'NOT_MEMBER' });
  });
});
