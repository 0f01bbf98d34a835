import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { livePinsCountQuery, type MapViewer, type PinFilter, pinsCountQuery } from '../../src/routers/map/map.queries.js';
import { PIN_TYPES } from '../../src/routers/map/map.schemas.js';
import { toNumberedParams } from '../../src/db/sql.js';
import { newId } from '../../src/platform/ids.js';
import { newTerritory, newUser, type TestTerritory, type TestUser } from '../factories/index.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';
import { insertAlert, insertAsset, insertEntity, insertEvent, insertMedia, insertPost } from './seed.js';

/**
 * The stored map pin counts (map_pin_counter, kept by the map_pin_* triggers) against the pins counted from the
 * rows, after every kind of write that makes or unmakes a pin: the count the API answers must be the live one.
 */
let t: TestApp;
let territory: TestTerritory;
let other: TestTerritory;
let author: TestUser;
let writer: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  [territory, other, author, writer] = await Promise.all([newTerritory(t), newTerritory(t), newUser(t), newUser(t)]);
});
afterAll(() => t.close());

const FILTERS: PinFilter[] = [
  { types: PIN_TYPES },
  ...PIN_TYPES.map((type) => ({ types: [type] })),
  { types: ['asset'], assetTypes: ['natural'] },
  { types: ['post', 'media', 'asset'], assetSubtypes: ['river'] },
];

const viewersOf = (territoryId: string): MapViewer[] => [
  { territoryId, residentsOnlyVisible: false, blockedUserIds: [] },
  { territoryId, residentsOnlyVisible: true, blockedUserIds: [] },
  { territoryId, residentsOnlyVisible: false, blockedUserIds: [], userId: author.id },
  { territoryId, residentsOnlyVisible: true, blockedUserIds: [], userId: writer.id, seesAllHiddenPosts: true },
  // Who blocked someone: the stored counts less the blocked users' (by author), the hidden posts seen counted live.
  { territoryId, residentsOnlyVisible: true, blockedUserIds: [author.id] },
  { territoryId, residentsOnlyVisible: false, blockedUserIds: [author.id] },
  { territoryId, residentsOnlyVisible: true, blockedUserIds: [author.id, writer.id] },
  { territoryId, residentsOnlyVisible: false, blockedUserIds: [writer.id], userId: author.id },
  { territoryId, residentsOnlyVisible: true, blockedUserIds: [author.id], userId: writer.id, seesAllHiddenPosts: true },
];

async function total(query: { sql: string; params: unknown[] } | null) {
  if (!query) return 0;
  const [row] = await t.sql<{ total: number }>(toNumberedParams(query).sql, query.params);
  return row!.total;
}

/** Every viewer and filter: the stored count equals the live one. Answers the visitor's total of every type. */
async function expectExact(territories: TestTerritory[] = [territory, other]) {
  const mismatches: string[] = [];
  for (const { id } of territories) {
    for (const viewer of viewersOf(id)) {
      for (const filter of FILTERS) {
        const [stored, live] = await Promise.all([total(pinsCountQuery(viewer, filter)), total(livePinsCountQuery(viewer, filter))]);
        if (stored !== live) mismatches.push(`${JSON.stringify({ viewer, filter })}: stored ${stored}, live ${live}`);
      }
    }
  }
  expect(mismatches).toEqual([]);
  return total(pinsCountQuery(viewersOf(territory.id)[0]!, { types: PIN_TYPES }));
}

/** A placed post with an image, in `territory` unless told. */
async function placedPost(entityId: string, opts: { visibility?: string; status?: string; by?: TestUser; at?: TestTerritory } = {}) {
  const postId = await insertPost(t, opts.at ?? territory, opts.by ?? author, { mapEntityId: entityId, visibility: opts.visibility, status: opts.status });
  const mediaId = await insertMedia(t, { type: 'POST', id: postId }, opts.by ?? author);
  return { postId, mediaId };
}

describe('stored map pin counts equal the live count', () => {
  it('after inserts of every pin type, in both audiences', async () => {
    const before = await expectExact();
    const publicEntity = await insertEntity(t, territory, author);
    const residentsEntity = await insertEntity(t, territory, author, { visibility: 'RESIDENTS_ONLY' });
    await insertEntity(t, territory, author, { status: 'REJECTED' });
    await placedPost(publicEntity);
    await placedPost(publicEntity, { visibility: 'RESIDENTS_ONLY' });
    await placedPost(residentsEntity);
    await placedPost(publicEntity, { status: 'HIDDEN' });
    await placedPost(residentsEntity, { status: 'HIDDEN', by: writer });
    await insertPost(t, territory, author); // not placed: no pin, its media neither
    const eventId = await insertEvent(t, territory, author);
    await insertMedia(t, { type: 'EVENT', id: eventId }, author);
    await insertEvent(t, territory, author, { status: 'CANCELLED' });
    await insertAsset(t, territory, author, {
      anchors: [
        { latitude: 1, longitude: 2 },
        { latitude: 3, longitude: 4 },
      ],
    });
    await insertAsset(t, territory, author, { type: 'cultural', subtype: null });
    await insertAsset(t, territory, author, { status: 'Suggested' });
    await insertAlert(t, territory, author);
    await insertAlert(t, territory, author, { latitude: null, longitude: null });
    await insertAlert(t, territory, author, { status: 'PENDING' });
    // entity, post + its image, event + its image, 3 anchors, alert
    expect(await expectExact()).toBe(before + 1 + 2 + 2 + 3 + 1);
  });

  it('after status and visibility changes of entities, posts, events, assets, alerts and media', async () => {
    const entity = await insertEntity(t, territory, author);
    const { postId, mediaId } = await placedPost(entity);
    const eventId = await insertEvent(t, territory, author);
    const eventMedia = await insertMedia(t, { type: 'EVENT', id: eventId }, author);
    const assetId = await insertAsset(t, territory, author);
    const alertId = await insertAlert(t, territory, author);
    const before = await expectExact();

    // The entity's rejection takes its post and the post's image with it; its validation brings them back.
    await t.sql(`update map_entity set status = 'REJECTED' where id = $1`, [entity]);
    expect(await expectExact()).toBe(before - 3);
    await t.sql(`update map_entity set status = 'VALIDATED' where id = $1`, [entity]);
    expect(await expectExact()).toBe(before);
    await t.sql(`update map_entity set visibility = 'RESIDENTS_ONLY' where id = $1`, [entity]);
    expect(await expectExact()).toBe(before - 3);
    await t.sql(`update map_entity set visibility = 'PUBLIC', confirmation_count = confirmation_count + 1 where id = $1`, [entity]);
    expect(await expectExact()).toBe(before);

    await t.sql(`update post set status = 'HIDDEN' where id = $1`, [postId]);
    expect(await expectExact()).toBe(before - 2);
    await t.sql(`update post set status = 'PUBLISHED', visibility = 'RESIDENTS_ONLY' where id = $1`, [postId]);
    expect(await expectExact()).toBe(before - 2);
    await t.sql(`update post set visibility = 'PUBLIC', title = title || '.' where id = $1`, [postId]);
    expect(await expectExact()).toBe(before);

    await t.sql(`update media_asset set deleted_at_utc = now() where id = any($1::uuid[])`, [[mediaId, eventMedia]]);
    expect(await expectExact()).toBe(before - 2);
    await t.sql(`update media_asset set deleted_at_utc = null where id = $1`, [mediaId]);
    expect(await expectExact()).toBe(before - 1);

    await t.sql(`update event set status = 'CANCELLED' where id = $1`, [eventId]);
    expect(await expectExact()).toBe(before - 2);
    await t.sql(`update territory_asset set geo_anchors = $2 where id = $1`, [
      assetId,
      JSON.stringify([
        { latitude: 1, longitude: 1 },
        { latitude: 2, longitude: 2 },
      ]),
    ]);
    expect(await expectExact()).toBe(before - 1);
    await t.sql(`update territory_asset set status = 'Suggested' where id = $1`, [assetId]);
    expect(await expectExact()).toBe(before - 3);
    await t.sql(`update alert set latitude = null where id = $1`, [alertId]);
    expect(await expectExact()).toBe(before - 4);
    await t.sql(`update alert set latitude = 1, status = 'VALIDATED' where id = $1`, [alertId]);
    expect(await expectExact()).toBe(before - 3);
  });

  it('after moves: a post to another entity, an entity and a post to another territory, media to another owner', async () => {
    const here = await insertEntity(t, territory, author);
    const hidden = await insertEntity(t, territory, author, { visibility: 'RESIDENTS_ONLY' });
    const { postId, mediaId } = await placedPost(here);
    const second = await placedPost(here);
    const before = await expectExact();
    await t.sql(`update post set map_entity_id = $2 where id = $1`, [postId, hidden]);
    expect(await expectExact()).toBe(before - 2);
    await t.sql(`update post set map_entity_id = null where id = $1`, [postId]);
    await expectExact();
    // The entity moves away: its post stays in this territory and is no pin anywhere (entity and post must share it).
    await t.sql(`update map_entity set territory_id = $2 where id = $1`, [here, other.id]);
    await expectExact();
    await t.sql(`update post set territory_id = $2 where id = $1`, [second.postId, other.id]);
    await expectExact();
    // An image moves from one post to another, and to an event.
    await t.sql(`update media_attachment set owner_id = $2 where media_asset_id = $1`, [mediaId, second.postId]);
    await expectExact();
    const eventId = await insertEvent(t, territory, author);
    await t.sql(`update media_attachment set owner_type = 'EVENT', owner_id = $2 where media_asset_id = $1`, [mediaId, eventId]);
    await expectExact();
  });

  it('after deletes, cascades included: attachments, media assets, posts, entities, a user, a territory', async () => {
    const doomed = await newUser(t);
    const entity = await insertEntity(t, territory, doomed);
    const byOthers = await placedPost(entity); // another author's post at the doomed user's entity
    const own = await placedPost(entity, { by: doomed });
    const otherEntity = await insertEntity(t, territory, author);
    await placedPost(otherEntity, { by: doomed });
    await insertAsset(t, territory, doomed);
    await insertAlert(t, territory, doomed);
    const eventId = await insertEvent(t, territory, doomed);
    await insertMedia(t, { type: 'EVENT', id: eventId }, author);
    await expectExact();

    await t.sql(`delete from media_attachment where media_asset_id = $1`, [byOthers.mediaId]);
    await expectExact();
    // The asset row goes with its attachment (a cascade).
    await t.sql(`delete from media_asset where id = $1`, [own.mediaId]);
    await expectExact();
    await t.sql(`delete from post where id = $1`, [byOthers.postId]);
    await expectExact();
    // One statement removes the user's entities, posts, events, assets, alerts and media.
    await t.sql(`delete from app_user where id = $1`, [doomed.id]);
    await expectExact();
    await t.sql(`delete from map_entity where id = $1`, [otherEntity]);
    await expectExact();

    const gone = await newTerritory(t);
    const e = await insertEntity(t, gone, author);
    await placedPost(e, { at: gone });
    await insertAlert(t, gone, author);
    await expectExact([gone]);
    await t.sql(`delete from territory where id = $1`, [gone.id]);
    expect(await t.sql(`select * from map_pin_counter where territory_id = $1`, [gone.id])).toEqual([]);
    expect(await t.sql(`select * from map_pin_owner where territory_id = $1`, [gone.id])).toEqual([]);
    await expectExact();
  });

  it('in bulk: many rows per statement, and an update that changes nothing the pins read', async () => {
    const entities = await Promise.all(
      Array.from({ length: 5 }, (_, i) => insertEntity(t, territory, author, { visibility: i % 2 ? 'PUBLIC' : 'RESIDENTS_ONLY' })),
    );
    await t.sql(
      `insert into post (id, created_at_utc, updated_at_utc, territory_id, author_user_id, title, content, type, visibility, status, map_entity_id)
       select gen_random_uuid(), now(), now(), $1, $2, 'Bulk ' || i, 'c', 'POST', case when i % 3 = 0 then 'RESIDENTS_ONLY' else 'PUBLIC' end,
              case when i % 7 = 0 then 'HIDDEN' else 'PUBLISHED' end, ($3::uuid[])[1 + i % 5]
         from generate_series(1, 200) as i`,
      [territory.id, author.id, entities],
    );
    await expectExact();
    await t.sql(`update map_entity set status = case when status = 'REJECTED' then 'SUGGESTED' else 'REJECTED' end where id = any($1::uuid[])`, [entities]);
    await expectExact();
    const writes = await t.sql<{ n: number }>(`select count(*)::int as n from map_pin_owner`);
    await t.sql(`update post set title = title || '.' where territory_id = $1`, [territory.id]);
    expect(await t.sql<{ n: number }>(`select count(*)::int as n from map_pin_owner`)).toEqual(writes);
    await t.sql(`update post set status = 'HIDDEN' where territory_id = $1 and title like 'Bulk %'`, [territory.id]);
    await expectExact();
  });

  it('in bulk across more territories than a statement locks one by one (one lock on the whole map)', async () => {
    const many = await Promise.all(Array.from({ length: 70 }, () => newTerritory(t)));
    await t.sql(
      `insert into event (id, created_at_utc, territory_id, title, starts_at_utc, latitude, longitude, status, created_by_user_id, created_by_membership)
       select gen_random_uuid(), now(), id, 'Bulk event', now(), 1, 2, 'SCHEDULED', $2, 'RESIDENT' from unnest($1::uuid[]) as u(id)`,
      [many.map((x) => x.id), author.id],
    );
    await expectExact([many[0]!, many[69]!]);
    await t.sql(`update event set status = 'CANCELLED' where territory_id = any($1::uuid[])`, [many.map((x) => x.id)]);
    await expectExact([many[0]!, many[69]!]);
  });
});

describe('stored map pin counts under concurrent writes', () => {
  let clients: pg.Client[] = [];
  beforeAll(async () => {
    clients = Array.from({ length: 6 }, () => new pg.Client({ connectionString: t.databaseUrl }));
    await Promise.all(clients.map((c) => c.connect()));
  });
  afterAll(() => Promise.all(clients.map((c) => c.end())));

  const postAt = (entityId: string) =>
    `insert into post (id, created_at_utc, updated_at_utc, territory_id, author_user_id, title, content, type, visibility, status, map_entity_id)
     values ('${newId()}', now(), now(), '${territory.id}', '${author.id}', 'Concurrent', 'c', 'POST', 'PUBLIC', 'PUBLISHED', '${entityId}')`;

  it('an entity rejected while a post is placed at it, in both orders of commit', async () => {
    const [a, b] = clients as [pg.Client, pg.Client];
    for (const rejectFirst of [true, false]) {
      const entity = await insertEntity(t, territory, author);
      await a.query('begin');
      await b.query('begin');
      const [first, second] = rejectFirst ? [a, b] : [b, a];
      const firstSql = rejectFirst ? `update map_entity set status = 'REJECTED' where id = '${entity}'` : postAt(entity);
      const secondSql = rejectFirst ? postAt(entity) : `update map_entity set status = 'REJECTED' where id = '${entity}'`;
      await first.query(firstSql);
      // Waits for the first transaction's counters (its lock on the territory) before reading the entity.
      const pending = second.query(secondSql);
      await first.query('commit');
      await pending;
      await second.query('commit');
      await expectExact([territory]);
    }
  });

  it('a media asset marked deleted while it is attached to a post, in both orders', async () => {
    const [a, b] = clients as [pg.Client, pg.Client];
    const entity = await insertEntity(t, territory, author);
    for (const deleteFirst of [true, false]) {
      const postId = await insertPost(t, territory, author, { mapEntityId: entity });
      const mediaId = newId();
      await t.sql(
        `insert into media_asset (id, created_at_utc, uploaded_by_user_id, media_type, mime_type, size_bytes, storage_key) values ($1::uuid, now(), $2, 'IMAGE', 'image/png', 68, $1::text)`,
        [mediaId, author.id],
      );
      const attach = `insert into media_attachment (id, created_at_utc, media_asset_id, owner_type, owner_id, display_order) values ('${newId()}', now(), '${mediaId}', 'POST', '${postId}', 0)`;
      const mark = `update media_asset set deleted_at_utc = now() where id = '${mediaId}'`;
      await a.query('begin');
      await b.query('begin');
      await a.query(deleteFirst ? mark : attach);
      const pending = b.query(deleteFirst ? attach : mark);
      await a.query('commit');
      await pending;
      await b.query('commit');
      await expectExact([territory]);
    }
  });

  it('many transactions placing, moving, hiding and rejecting at once', async () => {
    const entities = await Promise.all(Array.from({ length: 3 }, () => insertEntity(t, territory, author)));
    const posts = await Promise.all(Array.from({ length: 6 }, (_, i) => placedPost(entities[i % 3]!)));
    const work = (c: pg.Client, i: number) => async () => {
      const e = entities[i % 3]!;
      const p = posts[i % 6]!;
      await c.query('begin');
      try {
        await c.query(postAt(e));
        await c.query(`update map_entity set status = $2 where id = $1`, [entities[(i + 1) % 3], i % 2 ? 'REJECTED' : 'VALIDATED']);
        await c.query(`update post set status = $2, map_entity_id = $3 where id = $1`, [p.postId, i % 3 ? 'PUBLISHED' : 'HIDDEN', entities[(i + 2) % 3]]);
        await c.query(`update media_asset set deleted_at_utc = ${i % 2 ? 'now()' : 'null'} where id = $1`, [posts[(i + 3) % 6]!.mediaId]);
        await c.query('commit');
      } catch (error) {
        // Overlapping writes in opposite orders may deadlock: PostgreSQL aborts one, which is rolled back whole.
        await c.query('rollback');
        if ((error as { code?: string }).code !== '40P01') throw error;
      }
    };
    for (let round = 0; round < 4; round++) {
      await Promise.all(clients.map((c, i) => work(c, i + round)()));
      await expectExact([territory]);
    }
  });
});
