import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTIFICATION_TYPES } from '../../src/entities/notification.entity.js';
import { notificationPreferencesOf } from '../../src/routers/preferences/preferences.queries.js';
import { countRows, newUser, type TestUser } from '../factories/index.js';
import { countForks } from '../setup/forks.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let forks: ReturnType<typeof countForks>;
beforeAll(async () => {
  t = await createTestApp();
  forks = countForks(t);
});
afterAll(() => t.close());

const allOn = Object.fromEntries(NOTIFICATION_TYPES.map((type) => [type, true]));
const prefsOf = (user: TestUser) => t.app.inject({ method: 'GET', url: '/api/v1/users/me/preferences', headers: user.headers });
const rowsOf = (table: string, user: TestUser) => countRows(t, table, 'user_id = $1', [user.id]);

describe('GET /api/v1/users/me/preferences', () => {
  it('needs a token', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/users/me/preferences' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('creates the defaults on first read, once', async () => {
    const user = await newUser(t);
    expect(await rowsOf('user_preferences', user)).toBe(0);
    const res = await prefsOf(user);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      userId: user.id,
      profileVisibility: 'Public',
      contactVisibility: 'ResidentsOnly',
      shareLocation: false,
      showMemberships: true,
      notifications: allOn,
      updatedAtUtc: expect.stringMatching(/Z$/),
    });
    expect((await prefsOf(user)).json()).toEqual(res.json());
    expect(await rowsOf('user_preferences', user)).toBe(1);
  });

  it('is race-safe: concurrent first reads all succeed with one row', async () => {
    const user = await newUser(t);
    const results = await Promise.all(Array.from({ length: 8 }, () => prefsOf(user)));
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(await rowsOf('user_preferences', user)).toBe(1);
  });

  it('reads an existing row on the pool: no fork (the first read, which creates it, writes through one)', async () => {
    const user = await newUser(t);
    const created = await prefsOf(user);
    expect(created.statusCode).toBe(200);
    await forks.expectReadsWithoutFork(user, [['/api/v1/users/me/preferences', (b) => expect(b).toEqual(created.json())]]);
  });
});

describe('PUT /api/v1/users/me/preferences/privacy', () => {
  const url = '/api/v1/users/me/preferences/privacy';
  const body = { profileVisibility: 'Private', contactVisibility: 'Public', shareLocation: true, showMemberships: false };

  it('needs a token', async () => {
    expect((await t.app.inject({ method: 'PUT', url, payload: body })).statusCode).toBe(401);
  });

  it('replaces the four fields and answers the whole preferences object', async () => {
    const user = await newUser(t);
    const res = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: body });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ userId: user.id, ...body, notifications: allOn, updatedAtUtc: expect.any(String) });
    expect((await prefsOf(user)).json()).toMatchObject(body);
  });

  it('accepts other spellings of the enum values and answers the canonical one', async () => {
    const user = await newUser(t);
    const res = await t.app.inject({
      method: 'PUT',
      url,
      headers: user.headers,
      payload: { ...body, profileVisibility: 'RESIDENTS_ONLY', contactVisibility: 'private' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ profileVisibility: 'ResidentsOnly', contactVisibility: 'Private' });
  });

  it('is 400 for an unknown value or a missing field, writing nothing', async () => {
    const user = await newUser(t);
    const bad = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { ...body, profileVisibility: 'Friends' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'profileVisibility' }] });
    const { showMemberships: _omitted, ...partial } = body;
    const missing = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: partial });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ errors: [{ field: 'showMemberships' }] });
    const notBool = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { ...body, shareLocation: 'yes' } });
    expect(notBool.statusCode).toBe(400);
    expect(await rowsOf('user_preferences', user)).toBe(0);
  });
});

describe('PUT /api/v1/users/me/preferences/notifications', () => {
  const url = '/api/v1/users/me/preferences/notifications';

  it('needs a token', async () => {
    expect((await t.app.inject({ method: 'PUT', url, payload: { POST_CREATED: false } })).statusCode).toBe(401);
  });

  it('merges a partial object of flags and answers the whole preferences object', async () => {
    const user = await newUser(t);
    const first = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { POST_CREATED: false } });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ profileVisibility: 'Public', notifications: { ...allOn, POST_CREATED: false } });
    const second = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { REPORT_CREATED: false, EVENT_CREATED: true } });
    expect(second.json().notifications).toEqual({ ...allOn, POST_CREATED: false, REPORT_CREATED: false });
    const back = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { POST_CREATED: true } });
    expect(back.json().notifications).toEqual({ ...allOn, REPORT_CREATED: false });
    expect((await prefsOf(user)).json().notifications).toEqual({ ...allOn, REPORT_CREATED: false });
  });

  it('keeps privacy settings when flags change and the reverse', async () => {
    const user = await newUser(t);
    await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { JOIN_REQUEST_RECEIVED: false } });
    const privacy = { profileVisibility: 'Private', contactVisibility: 'Private', shareLocation: true, showMemberships: true };
    const res = await t.app.inject({ method: 'PUT', url: '/api/v1/users/me/preferences/privacy', headers: user.headers, payload: privacy });
    expect(res.json()).toMatchObject({ ...privacy, notifications: { JOIN_REQUEST_RECEIVED: false } });
    const again = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { ALERT_VALIDATED: false } });
    expect(again.json()).toMatchObject({ ...privacy, notifications: { JOIN_REQUEST_RECEIVED: false, ALERT_VALIDATED: false } });
  });

  it('is 400 for an unknown type or a non-boolean, changing nothing', async () => {
    const user = await newUser(t);
    const unknown = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { POST_CREATED: false, NEWSLETTER: false } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    const notBool = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { POST_CREATED: 'off' } });
    expect(notBool.statusCode).toBe(400);
    expect(notBool.json()).toMatchObject({ errors: [{ field: 'POST_CREATED' }] });
    expect(await rowsOf('user_preferences', user)).toBe(0);
  });

  it('security alerts cannot be switched off (400 naming the field, nothing written; they are always delivered); true is accepted', async () => {
    const user = await newUser(t);
    const off = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { SECURITY_ALERT: false } });
    expect(off.statusCode).toBe(400);
    expect(off.json()).toMatchObject({ errors: [{ field: 'SECURITY_ALERT', message: 'cannot be switched off: it is always delivered' }] });
    expect(await rowsOf('user_preferences', user)).toBe(0);
    const on = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { SECURITY_ALERT: true, POST_CREATED: false } });
    expect(on.statusCode).toBe(200);
    expect(on.json().notifications).toEqual({ ...allOn, POST_CREATED: false });
    // A flag stored off by an earlier version still reads as on.
    await t.sql(`update user_preferences set notifications = notifications || '{"SECURITY_ALERT": false}' where user_id = $1`, [user.id]);
    expect((await prefsOf(user)).json().notifications.SECURITY_ALERT).toBe(true);
  });
});

describe('notificationPreferencesOf', () => {
  it("answers each user's flags, all on for users without a row, and writes nothing", async () => {
    const quiet = await newUser(t);
    const fresh = await newUser(t);
    await t.app.inject({
      method: 'PUT',
      url: '/api/v1/users/me/preferences/notifications',
      headers: quiet.headers,
      payload: { INQUIRY_RECEIVED: false, JOIN_REQUEST_DECIDED: false },
    });
    const map = await notificationPreferencesOf(t.deps.orm.em.fork(), [quiet.id, fresh.id, quiet.id]);
    expect(map.size).toBe(2);
    expect(map.get(quiet.id)).toEqual({ ...allOn, INQUIRY_RECEIVED: false, JOIN_REQUEST_DECIDED: false });
    expect(map.get(fresh.id)).toEqual(allOn);
    expect(await rowsOf('user_preferences', fresh)).toBe(0);
    expect((await notificationPreferencesOf(t.deps.orm.em.fork(), [])).size).toBe(0);
  });
});

describe('GET|PUT /api/v1/user/media-preferences', () => {
  const url = '/api/v1/user/media-preferences';
  const defaults = { showImages: true, showVideos: true, showAudio: true, autoPlayVideos: false, autoPlayAudio: false };

  it('needs a token', async () => {
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'PUT', url, payload: { showImages: false } })).statusCode).toBe(401);
  });

  it('answers the defaults without writing', async () => {
    const user = await newUser(t);
    const res = await t.app.inject({ method: 'GET', url, headers: user.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ userId: user.id, ...defaults, updatedAtUtc: null });
    expect(await rowsOf('user_media_preferences', user)).toBe(0);
  });

  it('merges partial updates', async () => {
    const user = await newUser(t);
    const first = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { autoPlayVideos: true } });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ userId: user.id, ...defaults, autoPlayVideos: true, updatedAtUtc: expect.stringMatching(/Z$/) });
    const second = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { showImages: false, autoPlayAudio: true } });
    expect(second.json()).toMatchObject({ ...defaults, autoPlayVideos: true, showImages: false, autoPlayAudio: true });
    const read = await t.app.inject({ method: 'GET', url, headers: user.headers });
    expect(read.json()).toMatchObject({ ...defaults, autoPlayVideos: true, showImages: false, autoPlayAudio: true });
    expect(await rowsOf('user_media_preferences', user)).toBe(1);
  });

  it('reads on the pool, the defaults and a saved row: no fork', async () => {
    const fresh = await newUser(t);
    await forks.expectReadsWithoutFork(fresh, [[url, (b) => expect(b).toEqual({ userId: fresh.id, ...defaults, updatedAtUtc: null })]]);
    const saved = await newUser(t);
    const put = await t.app.inject({ method: 'PUT', url, headers: saved.headers, payload: { showAudio: false } });
    expect(put.statusCode).toBe(200);
    await forks.expectReadsWithoutFork(saved, [[url, (b) => expect(b).toEqual(put.json())]]);
  });

  it('applies concurrent partial updates of different fields', async () => {
    const user = await newUser(t);
    const [a, b] = await Promise.all([
      t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { showVideos: false } }),
      t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { showAudio: false } }),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    const read = await t.app.inject({ method: 'GET', url, headers: user.headers });
    expect(read.json()).toMatchObject({ showVideos: false, showAudio: false, showImages: true });
  });

  it('is 400 for unknown fields or non-booleans, writing nothing', async () => {
    const user = await newUser(t);
    const unknown = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { showGifs: false } });
    expect(unknown.statusCode).toBe(400);
    const notBool = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: { showImages: 'false' } });
    expect(notBool.statusCode).toBe(400);
    expect(notBool.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'showImages' }] });
    const array = await t.app.inject({ method: 'PUT', url, headers: user.headers, payload: [true] });
    expect(array.statusCode).toBe(400);
    expect(await rowsOf('user_media_preferences', user)).toBe(0);
  });
});
