import { afterAll, beforeAll, expect, it } from 'vitest';
import { runMediaCleanup } from '../../src/routers/media/media-cleanup.job.js';
import { countRows, newUser } from '../factories/index.js';
import { TINY_PNG } from '../factories/media-files.js';
import { storedFilesOf, uploadMedia } from '../media/upload.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

it('purges the bytes and rows of media marked deleted, and a second run finds nothing', async () => {
  const user = await newUser(t);
  const kept = await uploadMedia(t, user, TINY_PNG, 'kept.png');
  const gone = await uploadMedia(t, user, TINY_PNG, 'gone.png');
  expect(storedFilesOf(t, user.id)).toHaveLength(2);
  // What deleting a post does to its media inside the post's transaction.
  await t.sql('update media_asset set deleted_at_utc = now() where id = $1', [gone.id]);

  await runMediaCleanup(t.deps.orm.em.fork(), t.deps.storage);
  expect(storedFilesOf(t, user.id)).toHaveLength(1);
  expect(await countRows(t, 'media_asset', 'id = $1', [gone.id])).toBe(0);
  expect(await countRows(t, 'media_asset', 'id = $1', [kept.id])).toBe(1);

  await runMediaCleanup(t.deps.orm.em.fork(), t.deps.storage);
  expect(storedFilesOf(t, user.id)).toHaveLength(1);
});
