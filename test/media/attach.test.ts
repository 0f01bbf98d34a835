import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/problems.js';
import {
  assertAttachable,
  attachMedia,
  CHAT_VIDEO_REFUSED,
  deleteMediaOf,
  mediaUrlsOf,
  purgeDeletedMedia,
  type AttachTarget,
} from '../../src/routers/media/media.service.js';
import { countRows, newCurator, newTerritory, newUser, type TestTerritory, type TestUser, UNKNOWN_ID } from '../factories/index.js';
import {
  ELEVEN_MINUTE_MP4,
  padTo,
  SIX_MINUTE_MP4,
  TINY_JPEG_8X8,
  TINY_MP3,
  TINY_MP4,
  TINY_PNG,
  TINY_WEBM,
  wavFile,
  wavOfSize,
} from '../factories/media-files.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { storedFilesOf, uploadMedia } from './upload.js';

let t: TestApp;
let user: TestUser;
let territory: TestTerritory;
const MB = 1024 * 1024;
const POST_FLAGS = ['MEDIAIMAGESENABLED', 'MEDIAVIDEOSENABLED', 'MEDIAAUDIOENABLED'];
const CHAT_FLAGS = ['CHATMEDIAIMAGESENABLED', 'CHATMEDIAAUDIOENABLED'];

beforeAll(async () => {
  t = await createTestApp();
  user = await newUser(t);
  territory = await newTerritory(t, { flags: [...POST_FLAGS, ...CHAT_FLAGS] });
});
afterAll(() => t.close());

const em = () => t.deps.orm.em.fork() as EntityManager;
const upload = async (bytes: Buffer, name: string, by: TestUser = user) => (await uploadMedia(t, by, bytes, name)).id;
const images = (n: number) => Promise.all(Array.from({ length: n }, (_, i) => upload(TINY_PNG, `${i}.png`)));

/** Runs the check in a transaction, as content creation does. */
function check(target: AttachTarget, mediaIds: string[], opts: { coverMediaId?: string | null; territoryId?: string; by?: TestUser } = {}) {
  return em().transactional((tx) =>
    assertAttachable(tx, { userId: (opts.by ?? user).id, territoryId: opts.territoryId ?? territory.id, target, mediaIds, coverMediaId: opts.coverMediaId }),
  );
}

/** The 400 a refused check throws: its problem code, detail and field. */
async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  const appError = error as AppError;
  expect(appError.code).toBe('BAD_REQUEST');
  return { code: appError.problemCode, message: appError.message, field: appError.errors?.[0]?.field };
}

describe('assertAttachable: posts', () => {
  it('accepts up to 10 media of the caller and answers them in the given order', async () => {
    const ids = await images(9);
    const audio = await upload(TINY_MP3, 'a.mp3');
    const rows = await check('posts', [audio, ...ids]);
    expect(rows.map((r) => r.id)).toEqual([audio, ...ids]);
    expect(rows[0]).toMatchObject({ mediaType: 'AUDIO', mimeType: 'audio/mpeg', url: `/api/v1/media/${audio}`, uploadedByUserId: user.id });
    expect(await check('posts', [])).toEqual([]);
  });

  it('refuses an 11th media, a duplicate, and a video together with an audio', async () => {
    const ids = await images(11);
    expect(await refusal(check('posts', ids))).toMatchObject({ code: 'MEDIA_COUNT_EXCEEDED', field: 'mediaIds' });
    expect(await refusal(check('posts', [ids[0]!, ids[0]!]))).toMatchObject({ code: 'MEDIA_DUPLICATE' });
    const video = await upload(TINY_MP4, 'v.mp4');
    const audio = await upload(TINY_MP3, 'a.mp3');
    expect(await refusal(check('posts', [video, audio]))).toMatchObject({
      code: 'MEDIA_COUNT_EXCEEDED',
      message: 'A post may carry one video or one audio, not both.',
    });
    const video2 = await upload(TINY_WEBM, 'v.webm');
    expect(await refusal(check('posts', [video, video2]))).toMatchObject({ code: 'MEDIA_COUNT_EXCEEDED', message: 'At most 1 video allowed in posts.' });
    const audio2 = await upload(wavFile(1), 'a.wav');
    expect(await refusal(check('posts', [audio, audio2]))).toMatchObject({ code: 'MEDIA_COUNT_EXCEEDED' });
  });

  it("refuses someone else's media, an unknown or deleted id and media already attached elsewhere", async () => {
    const stranger = await newUser(t);
    const theirs = await upload(TINY_PNG, 'x.png', stranger);
    expect(await refusal(check('posts', [theirs]))).toEqual({
      code: 'MEDIA_NOT_OWNED',
      message: 'All media attached must belong to the user creating the content.',
      field: 'mediaIds',
    });
    expect(await refusal(check('posts', [UNKNOWN_ID]))).toMatchObject({ code: 'MEDIA_NOT_FOUND' });
    expect(await refusal(check('posts', ['not-a-uuid']))).toMatchObject({ code: 'VALIDATION_FAILED' });

    const mine = await upload(TINY_PNG, 'y.png');
    const postId = '0190a4f6-0000-7000-8000-00000000a001';
    await em().transactional(async (tx) => {
      await assertAttachable(tx, { userId: user.id, territoryId: territory.id, target: 'posts', mediaIds: [mine] });
      attachMedia(tx, { ownerType: 'POST', ownerId: postId, mediaIds: [mine] });
    });
    expect(await refusal(check('posts', [mine]))).toMatchObject({ code: 'MEDIA_ALREADY_ATTACHED' });
  });

  it('follows the territory media flags for posts', async () => {
    const imagesOnly = await newTerritory(t, { flags: ['MEDIAIMAGESENABLED'] });
    const image = await upload(TINY_JPEG_8X8, 'a.jpg');
    const video = await upload(TINY_MP4, 'v.mp4');
    const audio = await upload(TINY_MP3, 'a.mp3');
    expect(await check('posts', [image], { territoryId: imagesOnly.id })).toHaveLength(1);
    expect(await refusal(check('posts', [video], { territoryId: imagesOnly.id }))).toMatchObject({
      code: 'MEDIA_TYPE_NOT_ALLOWED',
      message: 'Videos are not enabled for posts in this territory.',
    });
    expect(await refusal(check('posts', [audio], { territoryId: imagesOnly.id }))).toMatchObject({ code: 'MEDIA_TYPE_NOT_ALLOWED' });
    const noFlags = await newTerritory(t);
    expect(await refusal(check('posts', [image], { territoryId: noFlags.id }))).toMatchObject({ code: 'MEDIA_TYPE_NOT_ALLOWED' });
  });

  it('refuses a video over 5 minutes and an audio over 10 MB', async () => {
    const long = await upload(SIX_MINUTE_MP4, 'long.mp4');
    expect(await refusal(check('posts', [long]))).toMatchObject({ code: 'MEDIA_TOO_LONG', message: expect.stringContaining('5 minutes') });
    const big = await upload(wavOfSize(10 * MB + 1), 'big.wav');
    expect(await refusal(check('posts', [big]))).toMatchObject({ code: 'MEDIA_TOO_LARGE', message: expect.stringContaining('10 MB') });
    const fiveMinutes = await upload(wavFile(300), 'five.wav');
    expect(await check('posts', [fiveMinutes])).toHaveLength(1);
  });

  it('is 404 for an unknown territory', async () => {
    const image = await upload(TINY_PNG, 'a.png');
    const error = await check('posts', [image], { territoryId: UNKNOWN_ID }).catch((e: AppError) => e);
    expect((error as AppError).code).toBe('NOT_FOUND');
  });
});

describe('assertAttachable: events', () => {
  it('takes a cover plus up to 5 additional, cover first, one video and one audio in total', async () => {
    const cover = await upload(TINY_MP4, 'cover.mp4');
    const audio = await upload(TINY_MP3, 'a.mp3');
    const more = await images(4);
    const rows = await check('events', [audio, ...more], { coverMediaId: cover });
    expect(rows.map((r) => r.id)).toEqual([cover, audio, ...more]);

    const six = await images(6);
    expect(await refusal(check('events', six, { coverMediaId: cover }))).toMatchObject({
      code: 'MEDIA_COUNT_EXCEEDED',
      field: 'additionalMediaIds',
      message: 'An event takes a cover plus at most 5 additional media.',
    });
    const video2 = await upload(TINY_WEBM, 'v.webm');
    expect(await refusal(check('events', [video2], { coverMediaId: cover }))).toMatchObject({ code: 'MEDIA_COUNT_EXCEEDED' });
    expect(await refusal(check('events', [cover], { coverMediaId: cover }))).toMatchObject({ code: 'MEDIA_DUPLICATE' });
  });

  it('allows videos up to 10 minutes (a 6-minute one) and refuses longer ones', async () => {
    const six = await upload(SIX_MINUTE_MP4, 'six.mp4');
    expect(await check('events', [], { coverMediaId: six })).toHaveLength(1);
    const eleven = await upload(ELEVEN_MINUTE_MP4, 'eleven.mp4');
    expect(await refusal(check('events', [], { coverMediaId: eleven }))).toMatchObject({ code: 'MEDIA_TOO_LONG', field: 'coverMediaId' });
  });
});

describe('assertAttachable: marketplace items', () => {
  it('accepts MP4 video only and audio up to 2 minutes', async () => {
    const mp4 = await upload(TINY_MP4, 'v.mp4');
    expect(await check('marketplace', [mp4])).toHaveLength(1);
    const webm = await upload(TINY_WEBM, 'v.webm');
    expect(await refusal(check('marketplace', [webm]))).toMatchObject({
      code: 'MEDIA_TYPE_NOT_ALLOWED',
      message: 'video/webm is not allowed for items in this territory.',
    });
    const long = await upload(wavFile(121), 'long.wav');
    expect(await refusal(check('marketplace', [long]))).toMatchObject({ code: 'MEDIA_TOO_LONG' });
  });
});

describe('assertAttachable: chat messages', () => {
  it('refuses video with the exact text of the spec', async () => {
    const video = await upload(TINY_MP4, 'v.mp4');
    expect(await refusal(check('chat', [video]))).toEqual({ code: 'MEDIA_TYPE_NOT_ALLOWED', message: CHAT_VIDEO_REFUSED, field: 'mediaId' });
    expect(CHAT_VIDEO_REFUSED).toBe('Only images and audios are allowed in chat messages');
  });

  it('takes one image (5 MB) or one audio (2 MB, 60 s), as the chat media flags allow', async () => {
    const image = await upload(TINY_PNG, 'a.png');
    const audio = await upload(wavFile(60), 'a.wav');
    expect(await check('chat', [image])).toHaveLength(1);
    expect(await check('chat', [audio])).toHaveLength(1);
    expect(await refusal(check('chat', [image, audio]))).toMatchObject({
      code: 'MEDIA_COUNT_EXCEEDED',
      message: 'A chat message takes one image or one audio.',
    });
    const long = await upload(wavFile(61), 'long.wav');
    expect(await refusal(check('chat', [long]))).toMatchObject({ code: 'MEDIA_TOO_LONG' });
    const bigAudio = await upload(wavOfSize(2 * MB + 1), 'big.wav');
    expect(await refusal(check('chat', [bigAudio]))).toMatchObject({ code: 'MEDIA_TOO_LARGE', message: expect.stringContaining('2 MB') });
    const bigImage = await upload(padTo(TINY_PNG, 5 * MB + 1), 'big.png');
    expect(await refusal(check('chat', [bigImage]))).toMatchObject({ code: 'MEDIA_TOO_LARGE' });

    const noChatMedia = await newTerritory(t, { flags: ['CHATMEDIAAUDIOENABLED'] });
    expect(await refusal(check('chat', [image], { territoryId: noChatMedia.id }))).toMatchObject({
      code: 'MEDIA_TYPE_NOT_ALLOWED',
      message: 'Images are not enabled for chat messages in this territory.',
    });
    expect(await check('chat', [audio], { territoryId: noChatMedia.id })).toHaveLength(1);
  });
});

describe('assertAttachable with a territorial media configuration', () => {
  it('applies the limits a curator set', async () => {
    const local = await newTerritory(t, { flags: POST_FLAGS });
    const curator = await newCurator(t, local);
    const put = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/territories/${local.id}/media-config`,
      headers: curator.headers,
      payload: { posts: { maxMediaCount: 2, maxImageSizeBytes: 100, allowedImageMimeTypes: ['image/png'] }, events: { audioEnabled: false } },
    });
    expect(put.statusCode, put.body).toBe(200);
    const png = await upload(TINY_PNG, 'a.png');
    const jpeg = await upload(TINY_JPEG_8X8, 'a.jpg');
    const bigPng = await upload(padTo(TINY_PNG, 101), 'b.png');
    expect(await check('posts', [png], { territoryId: local.id })).toHaveLength(1);
    expect(await refusal(check('posts', [jpeg], { territoryId: local.id }))).toMatchObject({ code: 'MEDIA_TYPE_NOT_ALLOWED' });
    expect(await refusal(check('posts', [bigPng], { territoryId: local.id }))).toMatchObject({
      code: 'MEDIA_TOO_LARGE',
      message: expect.stringContaining('100 bytes'),
    });
    const three = await images(3);
    expect(await refusal(check('posts', three, { territoryId: local.id }))).toMatchObject({
      code: 'MEDIA_COUNT_EXCEEDED',
      message: 'At most 2 media are allowed in posts in this territory.',
    });
    const audio = await upload(TINY_MP3, 'a.mp3');
    expect(await refusal(check('events', [], { coverMediaId: audio, territoryId: local.id }))).toMatchObject({
      code: 'MEDIA_TYPE_NOT_ALLOWED',
      field: 'coverMediaId',
    });
  });
});

describe('attachMedia, mediaUrlsOf, deleteMediaOf', () => {
  it('lists URLs per owner in display order, and deleting the content deletes its media', async () => {
    const [a, b, c] = await images(3);
    const post1 = '0190a4f6-0000-7000-8000-00000000b001';
    const post2 = '0190a4f6-0000-7000-8000-00000000b002';
    const empty = '0190a4f6-0000-7000-8000-00000000b003';
    await em().transactional(async (tx) => {
      attachMedia(tx, { ownerType: 'POST', ownerId: post1, mediaIds: [c!, a!] });
      attachMedia(tx, { ownerType: 'POST', ownerId: post2, mediaIds: [b!] });
    });
    const urls = await mediaUrlsOf(em(), 'POST', [post1, post2, empty]);
    expect(urls.get(post1)).toEqual([`/api/v1/media/${c}`, `/api/v1/media/${a}`]);
    expect(urls.get(post2)).toEqual([`/api/v1/media/${b}`]);
    expect(urls.get(empty)).toEqual([]);
    expect((await mediaUrlsOf(em(), 'EVENT', [post1])).get(post1)).toEqual([]);
    expect((await mediaUrlsOf(em(), 'POST', [])).size).toBe(0);

    const filesBefore = storedFilesOf(t, user.id).length;
    expect(await em().transactional((tx) => deleteMediaOf(tx, 'POST', post1))).toBe(2);
    expect(await countRows(t, 'media_attachment', 'owner_id = $1', [post1])).toBe(0);
    expect((await mediaUrlsOf(em(), 'POST', [post1])).get(post1)).toEqual([]);
    // Marked: no longer served nor attachable, then purged with their files.
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/media/${a}`, headers: user.headers })).statusCode).toBe(404);
    expect(await refusal(check('posts', [a!]))).toMatchObject({ code: 'MEDIA_NOT_FOUND' });
    expect(await purgeDeletedMedia(em(), t.deps.storage)).toBe(2);
    expect(await countRows(t, 'media_asset', 'id = any($1::uuid[])', [[a, c]])).toBe(0);
    expect(storedFilesOf(t, user.id).length).toBe(filesBefore - 2);
    expect((await mediaUrlsOf(em(), 'POST', [post2])).get(post2)).toHaveLength(1);
  });

  it('a rolled-back content deletion keeps the media', async () => {
    const [a] = await images(1);
    const post = '0190a4f6-0000-7000-8000-00000000c001';
    await em().transactional(async (tx) => attachMedia(tx, { ownerType: 'POST', ownerId: post, mediaIds: [a!] }));
    await expect(
      em().transactional(async (tx) => {
        await deleteMediaOf(tx, 'POST', post);
        throw new Error('content deletion failed');
      }),
    ).rejects.toThrow('content deletion failed');
    expect((await mediaUrlsOf(em(), 'POST', [post])).get(post)).toEqual([`/api/v1/media/${a}`]);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/media/${a}`, headers: user.headers })).statusCode).toBe(200);
  });
});
