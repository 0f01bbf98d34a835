import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMediaCleanup } from '../../src/routers/media/media-cleanup.job.js';
import { newPost } from '../factories/content.js';
import { countRows, newTerritory, newUser } from '../factories/index.js';
import { TINY_PNG } from '../factories/media-files.js';
import { storedFilesOf, uploadMedia } from '../media/upload.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { newId } from '../../src/platform/ids.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const ageBy = (id: string, hours: number) => t.sql(`update media_asset set created_at_utc = now() - ($2::int * interval '1 hour') where id = $1`, [id, hours]);

describe('uploads never attached do not hold storage forever (finding 10, in part)', () => {
  it('the cleanup job removes media attached to nothing after 24 h, and keeps fresh and attached ones', async () => {
    const user = await newUser(t);
    const territory = await newTerritory(t);
    const abandoned = await uploadMedia(t, user, TINY_PNG, 'abandoned.png');
    const fresh = await uploadMedia(t, user, TINY_PNG, 'fresh.png');
    const attached = await uploadMedia(t, user, TINY_PNG, 'attached.png');
    const postId = await newPost(t, { territoryId: territory.id, authorUserId: user.id });
    await t.sql(
      `insert into media_attachment (id, created_at_utc, media_asset_id, owner_type, owner_id, display_order) values ($1, now(), $2, 'POST', $3, 0)`,
      [newId(), attached.id, postId],
    );
    await ageBy(abandoned.id, 25);
    await ageBy(attached.id, 25);
    expect(storedFilesOf(t, user.id)).toHaveLength(3);

    await runMediaCleanup(t.deps.orm.em.fork(), t.deps.storage);
    expect(await countRows(t, 'media_asset', 'id = $1', [abandoned.id])).toBe(0);
    expect(await countRows(t, 'media_asset', 'id = any($1::uuid[])', [[fresh.id, attached.id]])).toBe(2);
    expect(storedFilesOf(t, user.id)).toHaveLength(2);
  });
});
