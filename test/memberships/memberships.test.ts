import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMembership, countRows, newCurator, newResident, newTerritory, newUser, newVisitor, UNKNOWN_ID } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('POST /api/v1/territories/{territoryId}/enter', () => {
  it('creates the VISITOR membership, then returns the same one', async () => {
    const user = await newUser(t);
    const territory = await newTerritory(t);
    const first = await t.app.inject({ method: 'POST', url: `/api/v1/territories/${territory.id}/enter`, headers: user.headers });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      userId: user.id,
      role: 'VISITOR',
      residencyVerification: 'NONE',
      capabilities: [],
      createdAtUtc: expect.any(String),
    });
    const again = await t.app.inject({ method: 'POST', url: `/api/v1/territories/${territory.id}/enter`, headers: user.headers });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    expect(await countRows(t, 'territory_membership', 'user_id = $1', [user.id])).toBe(1);
  });

  it('returns an existing RESIDENT membership unchanged', async () => {
    const territory = await newTerritory(t);
    const resident = await newResident(t, territory, { verified: true });
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/territories/${territory.id}/enter`, headers: resident.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ role: 'RESIDENT', residencyVerification: 'GEOVERIFIED' });
  });

  it('is idempotent under concurrent calls', async () => {
    const user = await newUser(t);
    const territory = await newTerritory(t);
    const all = await Promise.all(
      Array.from({ length: 5 }, () => t.app.inject({ method: 'POST', url: `/api/v1/territories/${territory.id}/enter`, headers: user.headers })),
    );
    expect(all.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(all.map((r) => r.json().id)).size).toBe(1);
  });

  it('is 404 for an unknown or non-ACTIVE territory, 400 for a malformed id, 401 without a token', async () => {
    const user = await newUser(t);
    const pending = await newTerritory(t, { status: 'PENDING' });
    const before = await countRows(t, 'territory_membership');
    const unknown = await t.app.inject({ method: 'POST', url: `/api/v1/territories/${UNKNOWN_ID}/enter`, headers: user.headers });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'NOT_FOUND' });
    const inactive = await t.app.inject({ method: 'POST', url: `/api/v1/territories/${pending.id}/enter`, headers: user.headers });
    expect(inactive.statusCode).toBe(404);
    const malformed = await t.app.inject({ method: 'POST', url: `/api/v1/territories/nope/enter`, headers: user.headers });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    const anonymous = await t.app.inject({ method: 'POST', url: `/api/v1/territories/${pending.id}/enter` });
    expect(anonymous.statusCode).toBe(401);
    expect(await countRows(t, 'territory_membership')).toBe(before);
  });
});

describe('GET /api/v1/memberships/{territoryId}/me and /api/v1/memberships/me', () => {
  it('returns my membership, with capabilities and the strongest verification', async () => {
    const territory = await newTerritory(t);
    const other = await newTerritory(t);
    const user = await newUser(t);
    await addMembership(t, user, territory, { role: 'RESIDENT', capabilities: ['CURATOR'], geoVerified: true, documentVerified: true });
    await addMembership(t, user, other, { role: 'VISITOR' });
    const one = await t.app.inject({ method: 'GET', url: `/api/v1/memberships/${territory.id}/me`, headers: user.headers });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({
      territoryId: territory.id,
      userId: user.id,
      role: 'RESIDENT',
      residencyVerification: 'DOCUMENTVERIFIED',
      capabilities: ['CURATOR'],
    });
    const all = await t.app.inject({ method: 'GET', url: '/api/v1/memberships/me', headers: user.headers });
    expect(all.statusCode).toBe(200);
    expect((all.json() as { territoryId: string }[]).map((m) => m.territoryId).sort()).toEqual([territory.id, other.id].sort());
  });

  it('is 404 without a membership, 400 for a malformed id, 401 without a token', async () => {
    const user = await newUser(t);
    const territory = await newTerritory(t);
    const none = await t.app.inject({ method: 'GET', url: `/api/v1/memberships/${territory.id}/me`, headers: user.headers });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/memberships/x/me', headers: user.headers })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/memberships/${territory.id}/me` })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/memberships/me' })).statusCode).toBe(401);
    const empty = await t.app.inject({ method: 'GET', url: '/api/v1/memberships/me', headers: user.headers });
    expect(empty.json()).toEqual([]);
  });
});

describe('POST /api/v1/memberships/{territoryId}/verify-residency/geo', () => {
  // Centre (-23.55, -46.63), radius 5 km; 0.01 degree of latitude is about 1.1 km.
  it('makes a RESIDENT GEOVERIFIED inside the radius', async () => {
    const territory = await newTerritory(t, { latitude: -23.55, longitude: -46.63, radiusKm: 5 });
    const resident = await newResident(t, territory);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/memberships/${territory.id}/verify-residency/geo`,
      headers: resident.headers,
      payload: { latitude: -23.56, longitude: -46.63 },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ role: 'RESIDENT', residencyVerification: 'GEOVERIFIED' });
    const rows = await t.sql<{ geo_verified_at_utc: Date | null }>('select geo_verified_at_utc from territory_membership where user_id = $1', [resident.id]);
    expect(rows[0]?.geo_verified_at_utc).not.toBeNull();
    expect(await countRows(t, 'audit_entry', "action = 'membership.geoVerified' and actor_user_id = $1", [resident.id])).toBe(1);
  });

  it('is 400 outside the radius, stating the distance and the allowed radius; nothing changes', async () => {
    const territory = await newTerritory(t, { latitude: -23.55, longitude: -46.63, radiusKm: 5 });
    const resident = await newResident(t, territory);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/memberships/${territory.id}/verify-residency/geo`,
      headers: resident.headers,
      payload: { latitude: -23.65, longitude: -46.63 },
    });
    expect(res.statusCode).toBe(400);
    const body = res.json() as { detail: string; code: string };
    expect(body.code).toBe('OUTSIDE_TERRITORY_RADIUS');
    expect(body.detail).toMatch(/11\.1\d km/);
    expect(body.detail).toContain('allowed radius is 5 km');
    const rows = await t.sql<{ geo_verified_at_utc: Date | null }>('select geo_verified_at_utc from territory_membership where user_id = $1', [resident.id]);
    expect(rows[0]?.geo_verified_at_utc).toBeNull();
  });

  it('is 403 for a VISITOR or a non-member, 404 for an unknown territory, 400 for bad coordinates, 401 without a token', async () => {
    const territory = await newTerritory(t);
    const visitor = await newVisitor(t, territory);
    const stranger = await newUser(t);
    const url = `/api/v1/memberships/${territory.id}/verify-residency/geo`;
    const payload = { latitude: -23.55, longitude: -46.63 };
    const asVisitor = await t.app.inject({ method: 'POST', url, headers: visitor.headers, payload });
    expect(asVisitor.statusCode).toBe(403);
    expect(asVisitor.json()).toMatchObject({ code: 'NOT_RESIDENT' });
    expect((await t.app.inject({ method: 'POST', url, headers: stranger.headers, payload })).statusCode).toBe(403);
    expect(
      (await t.app.inject({ method: 'POST', url: `/api/v1/memberships/${UNKNOWN_ID}/verify-residency/geo`, headers: visitor.headers, payload })).statusCode,
    ).toBe(404);
    const resident = await newResident(t, territory);
    const bad = await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { latitude: 91, longitude: 0 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'latitude' }] });
    expect((await t.app.inject({ method: 'POST', url, payload })).statusCode).toBe(401);
    expect(await countRows(t, 'territory_membership', 'territory_id = $1 and geo_verified_at_utc is not null', [territory.id])).toBe(0);
  });
});

describe('geolocation verification racing a residency transfer', () => {
  it('never leaves a geo verification on the membership a concurrent transfer approval made VISITOR', async () => {
    for (let round = 0; round < 6; round++) {
      const from = await newTerritory(t, { latitude: -23.55, longitude: -46.63, radiusKm: 5 });
      const to = await newTerritory(t);
      const curator = await newCurator(t, to);
      const user = await newUser(t);
      await addMembership(t, user, from, { role: 'RESIDENT' });
      const request = await t.app.inject({
        method: 'POST',
        url: '/api/v1/memberships/transfer-residency',
        headers: user.headers,
        payload: { toTerritoryId: to.id },
      });
      expect(request.statusCode).toBe(201);
      const [geo, approve] = await Promise.all([
        t.app.inject({
          method: 'POST',
          url: `/api/v1/memberships/${from.id}/verify-residency/geo`,
          headers: user.headers,
          payload: { latitude: -23.551, longitude: -46.63 },
        }),
        t.app.inject({ method: 'POST', url: `/api/v1/join-requests/${request.json().id}/approve`, headers: curator.headers }),
      ]);
      expect(approve.statusCode).toBe(200);
      expect([200, 403]).toContain(geo.statusCode);
      if (geo.statusCode === 403) expect(geo.json()).toMatchObject({ code: 'NOT_RESIDENT' });
      const [old] = await t.sql<{ role: string; geo_verified_at_utc: Date | null }>(
        'select role, geo_verified_at_utc from territory_membership where user_id = $1 and territory_id = $2',
        [user.id, from.id],
      );
      expect(old).toEqual({ role: 'VISITOR', geo_verified_at_utc: null });
      const audits = await countRows(t, 'audit_entry', "action = 'membership.geoVerified' and actor_user_id = $1", [user.id]);
      expect(audits).toBe(geo.statusCode === 200 ? 1 : 0);
    }
  });

  it('is 403 NOT_RESIDENT once the transfer has made the membership VISITOR', async () => {
    const from = await newTerritory(t, { latitude: -23.55, longitude: -46.63, radiusKm: 5 });
    const to = await newTerritory(t);
    const curator = await newCurator(t, to);
    const user = await newUser(t);
    await addMembership(t, user, from, { role: 'RESIDENT' });
    const request = await t.app.inject({
      method: 'POST',
      url: '/api/v1/memberships/transfer-residency',
      headers: user.headers,
      payload: { toTerritoryId: to.id },
    });
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/join-requests/${request.json().id}/approve`, headers: curator.headers })).statusCode).toBe(200);
    const geo = await t.app.inject({
      method: 'POST',
      url: `/api/v1/memberships/${from.id}/verify-residency/geo`,
      headers: user.headers,
      payload: { latitude: -23.551, longitude: -46.63 },
    });
    expect(geo.statusCode).toBe(403);
    expect(geo.json()).toMatchObject({ code: 'NOT_RESIDENT' });
    expect(await countRows(t, 'territory_membership', 'user_id = $1 and geo_verified_at_utc is not null', [user.id])).toBe(0);
  });
});

describe('POST /api/v1/memberships/{territoryId}/become-resident', () => {
  it('answers 201 with Location and the PENDING join request, then 200 with the same one', async () => {
    const territory = await newTerritory(t);
    const curator = await newCurator(t, territory);
    const visitor = await newVisitor(t, territory);
    const url = `/api/v1/memberships/${territory.id}/become-resident`;
    const first = await t.app.inject({ method: 'POST', url, headers: visitor.headers, payload: { message: 'I live at <b>number 5</b>' } });
    expect(first.statusCode).toBe(201);
    const body = first.json();
    expect(body).toEqual({
      id: expect.any(String),
      territoryId: territory.id,
      requesterUserId: visitor.id,
      // The requester is not shown whom the request went to (finding 11).
      recipientUserIds: [],
      message: 'I live at number 5',
      status: 'PENDING',
      createdAtUtc: expect.any(String),
      decidedAtUtc: null,
      decidedByUserId: null,
    });
    expect(first.headers.location).toBe(`/api/v1/join-requests/${body.id}`);
    expect(await countRows(t, 'join_request_recipient', 'join_request_id = $1 and recipient_user_id = $2', [body.id, curator.id])).toBe(1);
    const again = await t.app.inject({ method: 'POST', url, headers: visitor.headers, payload: {} });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(body.id);
    expect(await countRows(t, 'join_request', 'requester_user_id = $1', [visitor.id])).toBe(1);
  });

  it('works without a body and without a prior membership', async () => {
    const territory = await newTerritory(t);
    await newCurator(t, territory);
    const user = await newUser(t);
    const res = await t.app.inject({ method: 'POST', url: `/api/v1/memberships/${territory.id}/become-resident`, headers: user.headers });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ status: 'PENDING', message: null });
  });

  it('is 409 for a RESIDENT here, and 409 pointing at transfer for a RESIDENT elsewhere; nothing written', async () => {
    const home = await newTerritory(t);
    const elsewhere = await newTerritory(t);
    const resident = await newResident(t, home);
    const before = await countRows(t, 'join_request');
    const here = await t.app.inject({ method: 'POST', url: `/api/v1/memberships/${home.id}/become-resident`, headers: resident.headers });
    expect(here.statusCode).toBe(409);
    expect(here.json()).toMatchObject({ code: 'ALREADY_RESIDENT' });
    const other = await t.app.inject({ method: 'POST', url: `/api/v1/memberships/${elsewhere.id}/become-resident`, headers: resident.headers });
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe('RESIDENT_ELSEWHERE');
    expect(other.json().detail).toMatch(/transfer/i);
    expect(await countRows(t, 'join_request')).toBe(before);
  });

  it('is 400 with more than 3 recipients or a malformed one, 404 for an unknown territory, 401 without a token', async () => {
    const territory = await newTerritory(t);
    const user = await newUser(t);
    const before = await countRows(t, 'join_request');
    const url = `/api/v1/memberships/${territory.id}/become-resident`;
    const ids = await Promise.all([1, 2, 3, 4].map(async () => (await newUser(t)).id));
    const tooMany = await t.app.inject({ method: 'POST', url, headers: user.headers, payload: { recipientUserIds: ids } });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'recipientUserIds' }] });
    const malformed = await t.app.inject({ method: 'POST', url, headers: user.headers, payload: { recipientUserIds: ['x'] } });
    expect(malformed.statusCode).toBe(400);
    const unknown = await t.app.inject({ method: 'POST', url: `/api/v1/memberships/${UNKNOWN_ID}/become-resident`, headers: user.headers });
    expect(unknown.statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url })).statusCode).toBe(401);
    expect(await countRows(t, 'join_request')).toBe(before);
  });
});

describe('POST /api/v1/memberships/transfer-residency', () => {
  it('opens a transfer request in the target; its approval moves the residency atomically', async () => {
    const from = await newTerritory(t);
    const to = await newTerritory(t);
    const curator = await newCurator(t, to);
    const user = await newUser(t);
    await addMembership(t, user, from, { role: 'RESIDENT', geoVerified: true, documentVerified: true });

    const res = await t.app.inject({ method: 'POST', url: '/api/v1/memberships/transfer-residency', headers: user.headers, payload: { toTerritoryId: to.id } });
    expect(res.statusCode).toBe(201);
    const request = res.json();
    expect(request).toMatchObject({ territoryId: to.id, requesterUserId: user.id, status: 'PENDING', recipientUserIds: [] });
    expect(await countRows(t, 'join_request_recipient', 'join_request_id = $1 and recipient_user_id = $2', [request.id, curator.id])).toBe(1);
    expect(res.headers.location).toBe(`/api/v1/join-requests/${request.id}`);
    // Still RESIDENT at home until the approval.
    const home = await t.app.inject({ method: 'GET', url: `/api/v1/memberships/${from.id}/me`, headers: user.headers });
    expect(home.json()).toMatchObject({ role: 'RESIDENT', residencyVerification: 'DOCUMENTVERIFIED' });

    const again = await t.app.inject({
      method: 'POST',
      url: '/api/v1/memberships/transfer-residency',
      headers: user.headers,
      payload: { toTerritoryId: to.id },
    });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(request.id);

    const approved = await t.app.inject({ method: 'POST', url: `/api/v1/join-requests/${request.id}/approve`, headers: curator.headers });
    expect(approved.statusCode).toBe(200);
    const mine = (await t.app.inject({ method: 'GET', url: '/api/v1/memberships/me', headers: user.headers })).json() as {
      territoryId: string;
      role: string;
      residencyVerification: string;
    }[];
    expect(mine.find((m) => m.territoryId === from.id)).toMatchObject({ role: 'VISITOR', residencyVerification: 'NONE' });
    expect(mine.find((m) => m.territoryId === to.id)).toMatchObject({ role: 'RESIDENT', residencyVerification: 'NONE' });
    expect(await countRows(t, 'territory_membership', "user_id = $1 and role = 'RESIDENT'", [user.id])).toBe(1);
  });

  it('is 409 without a residency to transfer or to the territory I already live in; 404 unknown; 400 malformed; 401', async () => {
    const home = await newTerritory(t);
    const resident = await newResident(t, home);
    const visitor = await newUser(t);
    const before = await countRows(t, 'join_request');
    const url = '/api/v1/memberships/transfer-residency';
    const nothing = await t.app.inject({ method: 'POST', url, headers: visitor.headers, payload: { toTerritoryId: home.id } });
    expect(nothing.statusCode).toBe(409);
    expect(nothing.json()).toMatchObject({ code: 'NOT_RESIDENT' });
    const same = await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { toTerritoryId: home.id } });
    expect(same.statusCode).toBe(409);
    expect((await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { toTerritoryId: UNKNOWN_ID } })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: { toTerritoryId: 'x' } })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'POST', url, headers: resident.headers, payload: {} })).statusCode).toBe(400);
    expect((await t.app.inject({ method: 'POST', url, payload: { toTerritoryId: home.id } })).statusCode).toBe(401);
    expect(await countRows(t, 'join_request')).toBe(before);
  });

  it('a plain request approved after the requester became RESIDENT elsewhere is 409 and changes nothing', async () => {
    const first = await newTerritory(t);
    const second = await newTerritory(t);
    const curatorA = await newCurator(t, first);
    const curatorB = await newCurator(t, second);
    const user = await newUser(t);
    const a = (await t.app.inject({ method: 'POST', url: `/api/v1/memberships/${first.id}/become-resident`, headers: user.headers })).json();
    const b = (await t.app.inject({ method: 'POST', url: `/api/v1/memberships/${second.id}/become-resident`, headers: user.headers })).json();
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/join-requests/${a.id}/approve`, headers: curatorA.headers })).statusCode).toBe(200);
    const late = await t.app.inject({ method: 'POST', url: `/api/v1/join-requests/${b.id}/approve`, headers: curatorB.headers });
    expect(late.statusCode).toBe(409);
    expect(late.json()).toMatchObject({ code: 'RESIDENT_ELSEWHERE' });
    const rows = await t.sql<{ status: string }>('select status from join_request where id = $1', [b.id]);
    expect(rows[0]?.status).toBe('PENDING');
    expect(await countRows(t, 'territory_membership', "user_id = $1 and role = 'RESIDENT'", [user.id])).toBe(1);
  });
});

describe('over tRPC', () => {
  it('the same procedures answer at /trpc (enter, then my membership)', async () => {
    const user = await newUser(t);
    const territory = await newTerritory(t);
    const entered = await t.app.inject({ method: 'POST', url: '/trpc/memberships.enter', headers: user.headers, payload: { territoryId: territory.id } });
    expect(entered.statusCode).toBe(200);
    expect(entered.json().result.data).toMatchObject({ territoryId: territory.id, userId: user.id, role: 'VISITOR' });
    const input = encodeURIComponent(JSON.stringify({ territoryId: territory.id }));
    const me = await t.app.inject({ method: 'GET', url: `/trpc/memberships.me?input=${input}`, headers: user.headers });
    expect(me.statusCode).toBe(200);
    expect(me.json().result.data.id).toBe(entered.json().result.data.id);
    const anonymous = await t.app.inject({ method: 'POST', url: '/trpc/memberships.enter', payload: { territoryId: territory.id } });
    expect(anonymous.statusCode).toBe(401);
  });
});
