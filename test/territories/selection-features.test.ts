import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasFlag, normalizeFeatureFlag } from '../../src/entities/territory.entity.js';
import { AppError } from '../../src/platform/problems.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireTerritory } from '../../src/policy/territory-access.js';
import { addMembership, countRows, newAdmin, newCurator, newModerator, newResident, newTerritory, newUser, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const select = (headers: Record<string, string>, payload: unknown) =>
  t.app.inject({ method: 'POST', url: '/api/v1/territories/selection', headers, payload: payload as object });
const selection = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/api/v1/territories/selection', headers });

describe('territory selection per session (X-Session-Id)', () => {
  it('selects an ACTIVE territory, replaces it per session and keeps sessions apart', async () => {
    const user = await newUser(t);
    const a = await newTerritory(t, { tags: ['arts'] });
    const b = await newTerritory(t);
    const s1 = { ...user.headers, 'x-session-id': 'phone-1' };
    const s2 = { ...user.headers, 'x-session-id': 'laptop-2' };

    const res = await select(s1, { territoryId: a.id });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ sessionId: 'phone-1', territoryId: a.id, territory: { id: a.id, tags: ['arts'], status: 'ACTIVE' } });
    expect((await select(s2, { territoryId: a.id })).statusCode).toBe(200);
    expect((await select(s1, { territoryId: b.id })).statusCode).toBe(200);

    expect((await selection(s1)).json()).toMatchObject({ sessionId: 'phone-1', territoryId: b.id });
    expect((await selection(s2)).json()).toMatchObject({ sessionId: 'laptop-2', territoryId: a.id });
    expect(await countRows(t, 'territory_selection', 'user_id = $1', [user.id])).toBe(2);

    // Another user's session of the same name is separate.
    const other = await newUser(t);
    expect((await selection({ ...other.headers, 'x-session-id': 'phone-1' })).statusCode).toBe(404);
  });

  it('answers 404 "No territory selected" when the session has none', async () => {
    const user = await newUser(t);
    const res = await selection({ ...user.headers, 'x-session-id': 'fresh' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: 404, code: 'NO_TERRITORY_SELECTED', detail: 'No territory selected.' });
  });

  it('answers 400 without the X-Session-Id header, writing nothing', async () => {
    const user = await newUser(t);
    const territory = await newTerritory(t);
    const before = await countRows(t, 'territory_selection');
    const post = await select(user.headers, { territoryId: territory.id });
    expect(post.statusCode).toBe(400);
    expect(post.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'X-Session-Id' }] });
    expect((await select({ ...user.headers, 'x-session-id': '   ' }, { territoryId: territory.id })).statusCode).toBe(400);
    expect((await selection(user.headers)).statusCode).toBe(400);
    expect(await countRows(t, 'territory_selection')).toBe(before);
  });

  it('answers 404 for unknown or non-ACTIVE territories and 400 for malformed ids, writing nothing', async () => {
    const user = await newUser(t);
    const headers = { ...user.headers, 'x-session-id': 's' };
    const pending = await newTerritory(t, { status: 'PENDING' });
    const before = await countRows(t, 'territory_selection');
    expect((await select(headers, { territoryId: UNKNOWN_ID })).statusCode).toBe(404);
    expect((await select(headers, { territoryId: pending.id })).statusCode).toBe(404);
    expect((await select(headers, { territoryId: 'nope' })).statusCode).toBe(400);
    expect((await select(headers, {})).statusCode).toBe(400);
    expect(await countRows(t, 'territory_selection')).toBe(before);
  });

  it('needs a token', async () => {
    const territory = await newTerritory(t);
    expect((await select({ 'x-session-id': 's' }, { territoryId: territory.id })).statusCode).toBe(401);
    expect((await selection({ 'x-session-id': 's' })).statusCode).toBe(401);
  });

  it('resolveTerritoryId: explicit id wins, else the session selection, else 404', async () => {
    const user = await newUser(t);
    const selected = await newTerritory(t);
    const explicit = await newTerritory(t);
    await select({ ...user.headers, 'x-session-id': 'tab' }, { territoryId: selected.id });
    const em = t.deps.orm.em.fork();
    expect(await resolveTerritoryId(em, user.id, 'tab', explicit.id)).toBe(explicit.id);
    expect(await resolveTerritoryId(em, user.id, 'tab')).toBe(selected.id);
    expect(await resolveTerritoryId(em, user.id, 'tab', null)).toBe(selected.id);
    for (const session of ['other-tab', null, undefined]) {
      await expect(resolveTerritoryId(em, user.id, session)).rejects.toSatisfy(
        (e) => e instanceof AppError && e.code === 'NOT_FOUND' && e.message === 'No territory selected.',
      );
    }
  });
});

/** The territory an operation resolves to (explicit id, else the session's selection): requireTerritory's first step. */
const resolveTerritoryId = async (em: EntityManager, userId: string, sessionId: string | null | undefined, explicit?: string | null) =>
  (
    await requireTerritory(
      { em, user: { id: userId, displayName: '', identityVerificationStatus: 'Unverified', permissions: [] }, sessionId: sessionId ?? null },
      explicit,
    )
  ).territoryId;

describe('feature flags', () => {
  it('normalizes names and checks flags', () => {
    expect(normalizeFeatureFlag('AlertPosts')).toBe('ALERTPOSTS');
    expect(normalizeFeatureFlag('alert_posts')).toBe('ALERTPOSTS');
    expect(normalizeFeatureFlag('MARKETPLACE_ENABLED')).toBe('MARKETPLACEENABLED');
    expect(normalizeFeatureFlag('Marketplace')).toBeNull();
    expect(hasFlag({ enabledFlags: ['CHATENABLED'] }, 'CHATENABLED')).toBe(true);
    expect(hasFlag({ enabledFlags: ['CHATENABLED'] }, 'CHATGROUPS')).toBe(false);
  });

  it('GET lists the enabled flags in canonical spelling to any signed-in user', async () => {
    const territory = await newTerritory(t, { flags: ['MARKETPLACEENABLED', 'ALERTPOSTS'] });
    const user = await newUser(t);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/territories/${territory.id}/features`, headers: user.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ territoryId: territory.id, enabledFlags: ['ALERTPOSTS', 'MARKETPLACEENABLED'] });
  });

  it('GET: 401 without token, 404 unknown or hidden, 400 malformed', async () => {
    const user = await newUser(t);
    const territory = await newTerritory(t);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/territories/${territory.id}/features` })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/territories/${UNKNOWN_ID}/features`, headers: user.headers })).statusCode).toBe(404);
    const pending = await newTerritory(t, { status: 'PENDING' });
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/territories/${pending.id}/features`, headers: user.headers })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/territories/bad/features`, headers: user.headers })).statusCode).toBe(400);
  });

  const put = (id: string, headers: Record<string, string>, payload: unknown) =>
    t.app.inject({ method: 'PUT', url: `/api/v1/territories/${id}/features`, headers, payload: payload as object });
  const flagsOf = async (id: string) => (await t.sql<{ enabled_flags: string[] }>('select enabled_flags from territory where id = $1', [id]))[0]?.enabled_flags;

  it('PUT by a CURATOR replaces the set, accepting any spelling; audited', async () => {
    const territory = await newTerritory(t, { flags: ['CHATENABLED', 'CHATGROUPS'] });
    const curator = await newCurator(t, territory);
    const res = await put(territory.id, curator.headers, { enabledFlags: ['MarketplaceEnabled', 'alert_posts', 'ALERTPOSTS', 'mediaImagesEnabled'] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ territoryId: territory.id, enabledFlags: ['ALERTPOSTS', 'MARKETPLACEENABLED', 'MEDIAIMAGESENABLED'] });
    expect(await flagsOf(territory.id)).toEqual(['ALERTPOSTS', 'MARKETPLACEENABLED', 'MEDIAIMAGESENABLED']);
    const [audit] = await t.sql<{ actor_user_id: string; data: unknown }>(
      `select actor_user_id, data from audit_entry where action = 'territory.features.updated' and subject_id = $1`,
      [territory.id],
    );
    expect(audit).toEqual({
      actor_user_id: curator.id,
      data: { before: ['CHATENABLED', 'CHATGROUPS'], after: ['ALERTPOSTS', 'MARKETPLACEENABLED', 'MEDIAIMAGESENABLED'] },
    });
    const cleared = await put(territory.id, curator.headers, { enabledFlags: [] });
    expect(cleared.json()).toEqual({ territoryId: territory.id, enabledFlags: [] });
  });

  it('PUT by a SYSTEM_ADMIN works in any territory', async () => {
    const territory = await newTerritory(t);
    const admin = await newAdmin(t);
    const res = await put(territory.id, admin.headers, { enabledFlags: ['CHATENABLED'] });
    expect(res.statusCode).toBe(200);
    expect(await flagsOf(territory.id)).toEqual(['CHATENABLED']);
  });

  it('PUT is 403 for residents, moderators and curators of another territory, changing nothing', async () => {
    const territory = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const elsewhere = await newTerritory(t);
    const outsider = await newCurator(t, elsewhere);
    const resident = await newResident(t, territory);
    const moderator = await newModerator(t, territory);
    const visitor = await newUser(t);
    await addMembership(t, visitor, territory);
    for (const who of [resident, moderator, outsider, visitor]) {
      const res = await put(territory.id, who.headers, { enabledFlags: ['CHATENABLED'] });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'FORBIDDEN' });
    }
    expect(await flagsOf(territory.id)).toEqual(['ALERTPOSTS']);
    expect(await countRows(t, 'audit_entry', `action = 'territory.features.updated' and subject_id = $1`, [territory.id])).toBe(0);
  });

  it('PUT: 400 on unknown flags or a bad body, 401 without token, 404 unknown territory; nothing changed', async () => {
    const territory = await newTerritory(t, { flags: ['ALERTPOSTS'] });
    const curator = await newCurator(t, territory);
    const unknown = await put(territory.id, curator.headers, { enabledFlags: ['ALERTPOSTS', 'TELEPORTATION'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'enabledFlags.1' }] });
    expect((await put(territory.id, curator.headers, {})).statusCode).toBe(400);
    expect((await put(territory.id, curator.headers, { enabledFlags: 'ALERTPOSTS' })).statusCode).toBe(400);
    expect((await put(territory.id, curator.headers, { enabledFlags: [1] })).statusCode).toBe(400);
    expect((await put(territory.id, {}, { enabledFlags: [] })).statusCode).toBe(401);
    const admin = await newAdmin(t);
    expect((await put(UNKNOWN_ID, admin.headers, { enabledFlags: [] })).statusCode).toBe(404);
    expect((await put(UNKNOWN_ID, curator.headers, { enabledFlags: [] })).statusCode).toBe(404);
    expect((await put('bad', admin.headers, { enabledFlags: [] })).statusCode).toBe(400);
    expect(await flagsOf(territory.id)).toEqual(['ALERTPOSTS']);
  });
});
