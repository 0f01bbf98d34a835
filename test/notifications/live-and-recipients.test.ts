import type { EntityManager } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import { enqueueNotification } from '../../src/routers/notifications/outbox.js';
import { newCurator, newResident, newTerritory, newUser, type TestUser } from '../factories/index.js';
import { postOk } from '../feed/helpers.js';
import { listenLocally, readEvents } from '../factories/sse.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

/**
 * The live notification stream over Server-Sent Events (its end at a revocation, its catch-up), and who a
 * notification goes to (not a resident who blocked the author, not the person a report is about).
 */
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp();
  base = await listenLocally(t);
});
afterAll(() => t.close());

async function notify(user: TestUser, title: string) {
  const postId = newId();
  await (t.deps.orm.em.fork() as EntityManager).transactional(async (tx) => {
    enqueueNotification(tx, { type: 'POST_CREATED', recipientUserIds: [user.id], title, body: title, data: { postId }, sourceKey: `post:${postId}:created` });
  });
}

const eventIds = (text: string) => [...text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]!);

async function insertNotifications(user: TestUser, count: number) {
  const ids = Array.from({ length: count }, () => newId()).sort();
  await t.sql(
    `insert into notification (id, created_at_utc, user_id, type, title, body, data, source_key, read_at_utc)
     select i, clock_timestamp(), $1::uuid, 'POST_CREATED', 'n', 'n', '{}'::jsonb, 'test:' || i::text, null from unnest($2::uuid[]) as i`,
    [user.id, ids],
  );
  return ids;
}

describe('notifications.onNew over Server-Sent Events', () => {
  it('ends when the user signs out everywhere: nothing is delivered after it', async () => {
    const user = await newUser(t);
    const { text, ended } = await readEvents(
      `${base}/trpc/notifications.onNew`,
      user.headers,
      (read) => read.includes('after sign-out'),
      async () => {
        expect((await t.app.inject({ method: 'POST', url: '/api/v1/auth/sign-out-everywhere', headers: user.headers })).statusCode).toBe(204);
        await notify(user, 'after sign-out');
      },
    );
    expect(ended).toBe(true);
    expect(text).not.toContain('after sign-out');
  });

  it('resuming after 150 missed notifications replays all of them, past the first page of 100, with no gap', async () => {
    const user = await newUser(t);
    const ids = await insertNotifications(user, 151);
    const input = encodeURIComponent(JSON.stringify({ lastEventId: ids[0] }));
    const { text } = await readEvents(`${base}/trpc/notifications.onNew?input=${input}`, user.headers, (read) => eventIds(read).length >= 150);
    expect(eventIds(text)).toEqual(ids.slice(1));
  });
});

describe('recipients', () => {
  it("a resident who blocked the author gets no POST_CREATED about the author's post; the other residents do", async () => {
    const territory = await newTerritory(t);
    const author = await newResident(t, territory, { verified: true });
    const blocker = await newResident(t, territory, { verified: true });
    const other = await newResident(t, territory, { verified: true });
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/users/${author.id}/block`, headers: blocker.headers })).statusCode).toBe(204);
    await postOk(t, author, territory.id, { title: 'From the blocked author' });
    await expect.poll(async () => (await t.sql('select 1 from notification where user_id = $1', [other.id])).length).toBe(1);
    expect(await t.sql('select 1 from notification where user_id = $1', [blocker.id])).toEqual([]);
  });

  it('a report about a curator goes to the other curators, not to them (nor to the reporter)', async () => {
    const territory = await newTerritory(t);
    const accused = await newCurator(t, territory);
    const otherCurator = await newCurator(t, territory);
    const reporter = await newResident(t, territory, { verified: true });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/v1/reports/users/${accused.id}`,
      headers: reporter.headers,
      payload: { reason: 'Threats', territoryId: territory.id },
    });
    expect(res.statusCode).toBe(201);
    await expect.poll(async () => (await t.sql('select 1 from notification where user_id = $1', [otherCurator.id])).length).toBe(1);
    expect(await t.sql('select 1 from notification where user_id = any($1::uuid[])', [[accused.id, reporter.id]])).toEqual([]);
  });
});
