import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOBAL_MEDIA_CONFIG } from '../../src/routers/media-config/media-config.defaults.js';
import {
  countRows,
  newAdmin,
  newCurator,
  newModerator,
  newResident,
  newTerritory,
  newUser,
  type TestTerritory,
  type TestUser,
  UNKNOWN_ID,
} from '../factories/index.js';
import { countForks } from '../setup/forks.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let forks: ReturnType<typeof countForks>;
beforeAll(async () => {
  t = await createTestApp();
  forks = countForks(t);
});
afterAll(() => t.close());

const MB = 1024 * 1024;
const url = (territoryId: string) => `/api/v1/territories/${territoryId}/media-config`;
const get = (territoryId: string, user: TestUser | null) => t.app.inject({ method: 'GET', url: url(territoryId), headers: user?.headers ?? {} });
const put = (territoryId: string, user: TestUser | null, payload: unknown) =>
  t.app.inject({ method: 'PUT', url: url(territoryId), headers: user?.headers ?? {}, payload: payload as object });

const ALL_IMAGES = ['image/jpeg', 'image/png', 'image/webp'];
const ALL_VIDEOS = ['video/mp4', 'video/webm', 'video/quicktime'];
const ALL_AUDIO = ['audio/mpeg', 'audio/wav', 'audio/ogg'];

describe('GET /api/v1/territories/{territoryId}/media-config', () => {
  it("answers the spec's global limits for a territory that configured nothing, to any signed-in user", async () => {
    const territory = await newTerritory(t);
    const stranger = await newUser(t);
    const res = await get(territory.id, stranger);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      territoryId: territory.id,
      posts: {
        imagesEnabled: true,
        videosEnabled: true,
        audioEnabled: true,
        maxMediaCount: 10,
        maxVideoCount: 1,
        maxAudioCount: 1,
        maxImageSizeBytes: 10 * MB,
        maxVideoSizeBytes: 50 * MB,
        maxAudioSizeBytes: 10 * MB,
        allowedImageMimeTypes: ALL_IMAGES,
        allowedVideoMimeTypes: ALL_VIDEOS,
        allowedAudioMimeTypes: ALL_AUDIO,
      },
      events: expect.objectContaining({ maxMediaCount: 6, maxVideoCount: 1, maxAudioCount: 1, maxVideoSizeBytes: 100 * MB, maxAudioSizeBytes: 20 * MB }),
      marketplace: expect.objectContaining({ maxMediaCount: 10, maxVideoSizeBytes: 30 * MB, maxAudioSizeBytes: 5 * MB, allowedVideoMimeTypes: ['video/mp4'] }),
      chat: {
        imagesEnabled: true,
        videosEnabled: false,
        audioEnabled: true,
        maxMediaCount: 1,
        maxVideoCount: 0,
        maxAudioCount: 1,
        maxImageSizeBytes: 5 * MB,
        maxVideoSizeBytes: 0,
        maxAudioSizeBytes: 2 * MB,
        allowedImageMimeTypes: ALL_IMAGES,
        allowedVideoMimeTypes: [],
        allowedAudioMimeTypes: ALL_AUDIO,
      },
      updatedAtUtc: null,
    });
  });

  it('reads on the pool, configured or not: no fork', async () => {
    const plain = await newTerritory(t);
    const configured = await newTerritory(t);
    const saved = await put(configured.id, await newCurator(t, configured), { events: { maxMediaCount: 3 }, chat: { audioEnabled: false } });
    expect(saved.statusCode).toBe(200);
    await forks.expectReadsWithoutFork(await newUser(t), [
      [url(plain.id), (b) => expect(b).toEqual({ territoryId: plain.id, ...GLOBAL_MEDIA_CONFIG, updatedAtUtc: null })],
      [url(configured.id), (b) => expect(b).toEqual(saved.json())],
    ]);
  });

  it('is 401 without a token, 404 for an unknown territory, 400 for a malformed id', async () => {
    const territory = await newTerritory(t);
    const user = await newUser(t);
    expect((await get(territory.id, null)).statusCode).toBe(401);
    const missing = await get(UNKNOWN_ID, user);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'NOT_FOUND' });
    const malformed = await get('nope', user);
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'territoryId' }] });
  });
});

describe('PUT /api/v1/territories/{territoryId}/media-config', () => {
  let territory: TestTerritory;
  let curator: TestUser;
  beforeAll(async () => {
    territory = await newTerritory(t);
    curator = await newCurator(t, territory);
  });

  it('lets a curator tighten limits; a partial PUT merges, null returns a field to the global value; audited', async () => {
    const first = await put(territory.id, curator, { posts: { maxMediaCount: 4, videosEnabled: false, allowedImageMimeTypes: ['image/png', 'IMAGE/PNG'] } });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({
      territoryId: territory.id,
      posts: { maxMediaCount: 4, videosEnabled: false, imagesEnabled: true, maxVideoCount: 1, allowedImageMimeTypes: ['image/png'] },
      events: GLOBAL_MEDIA_CONFIG.events,
      updatedAtUtc: expect.stringMatching(/Z$/),
    });

    const second = await put(territory.id, curator, { chat: { maxAudioSizeBytes: MB }, posts: { videosEnabled: null } });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({
      posts: { maxMediaCount: 4, videosEnabled: true, allowedImageMimeTypes: ['image/png'] },
      chat: { maxAudioSizeBytes: MB, maxImageSizeBytes: 5 * MB },
    });

    const read = await get(territory.id, await newUser(t));
    expect(read.json()).toEqual(second.json());
    const [row] = await t.sql<{ posts: object; chat: object }>('select posts, chat from territory_media_config where territory_id = $1', [territory.id]);
    expect(row).toEqual({ posts: { maxMediaCount: 4, allowedImageMimeTypes: ['image/png'] }, chat: { maxAudioSizeBytes: MB } });
    expect(
      await countRows(t, 'audit_entry', "action = 'territory.media_config.updated' and subject_id = $1 and actor_user_id = $2", [territory.id, curator.id]),
    ).toBe(2);

    const admin = await newAdmin(t);
    const byAdmin = await put(territory.id, admin, { posts: { maxMediaCount: null } });
    expect(byAdmin.statusCode).toBe(200);
    expect(byAdmin.json().posts.maxMediaCount).toBe(10);
  });

  it('is 400 for any value above the global limits, naming each field, and writes nothing', async () => {
    const fresh = await newTerritory(t);
    const freshCurator = await newCurator(t, fresh);
    const res = await put(fresh.id, freshCurator, {
      posts: { maxMediaCount: 11, maxVideoSizeBytes: 50 * MB + 1 },
      chat: { videosEnabled: true },
      marketplace: { allowedVideoMimeTypes: ['video/webm'] },
      events: { maxImageSizeBytes: 10 * MB },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      detail: 'Territorial media limits may not exceed the global limits.',
      errors: [
        { field: 'posts.maxMediaCount', message: 'must not exceed the global limit of 10' },
        { field: 'posts.maxVideoSizeBytes' },
        { field: 'marketplace.allowedVideoMimeTypes' },
        { field: 'chat.videosEnabled' },
      ],
    });
    expect(await countRows(t, 'territory_media_config', 'territory_id = $1', [fresh.id])).toBe(0);
    expect(await countRows(t, 'audit_entry', "action = 'territory.media_config.updated' and subject_id = $1", [fresh.id])).toBe(0);
  });

  it('is 400 for malformed bodies (unknown section or field, negative or fractional numbers, wrong types)', async () => {
    const fresh = await newTerritory(t);
    const freshCurator = await newCurator(t, fresh);
    for (const body of [
      { items: { maxMediaCount: 1 } },
      { posts: { maxDuration: 1 } },
      { posts: { maxMediaCount: -1 } },
      { posts: { maxImageSizeBytes: 1.5 } },
      { posts: { imagesEnabled: 'yes' } },
      { posts: { allowedImageMimeTypes: 'image/png' } },
    ]) {
      const res = await put(fresh.id, freshCurator, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(await countRows(t, 'territory_media_config', 'territory_id = $1', [fresh.id])).toBe(0);
  });

  it('is 403 for residents, moderators and curators of another territory; 401 without a token; 404 unknown territory', async () => {
    const resident = await newResident(t, territory, { verified: true });
    const moderator = await newModerator(t, territory);
    const otherCurator = await newCurator(t, await newTerritory(t));
    for (const user of [resident, moderator, otherCurator]) {
      const res = await put(territory.id, user, { posts: { maxMediaCount: 1 } });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'FORBIDDEN' });
    }
    expect((await put(territory.id, null, { posts: { maxMediaCount: 1 } })).statusCode).toBe(401);
    expect((await put(UNKNOWN_ID, curator, { posts: { maxMediaCount: 1 } })).statusCode).toBe(404);
    expect((await get(territory.id, curator)).json().posts.maxMediaCount).not.toBe(1);
  });
});
