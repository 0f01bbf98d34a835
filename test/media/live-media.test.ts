import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPreparedOnPool } from '../../src/db/sql.js';
import { MEDIA_OWNER_TYPES, type MediaOwnerType } from '../../src/entities/media.entity.js';
import { type LiveMediaRow, liveMediaQuery } from '../../src/routers/media/media-attach.js';
import { newUser } from '../factories/index.js';
import { genericPlanOf, planSummary } from '../factories/query-plan.js';
import { createTestApp, type TestApp } from '../setup/test-app.js';

let t: TestApp;
let uploaderId: string;

/** Owners of the type with media, those with a deleted one and the others in turn, then owners without any (new ids). */
const ownersOf = async (ownerType: MediaOwnerType, limit = 20) => {
  const rows = await t.sql<{ owner_id: string }>(
    `select a.owner_id from media_attachment a join media_asset m on m.id = a.media_asset_id where a.owner_type = $1
      group by a.owner_id order by row_number() over (partition by count(m.deleted_at_utc) order by a.owner_id), a.owner_id limit $2`,
    [ownerType, limit],
  );
  return [...rows.map((r) => r.owner_id), ...Array.from({ length: limit - rows.length }, () => randomUUID())];
};

/**
 * `owners` new owners of the type, each with three images attached in reverse order of their creation; for one owner
 * in ten the first one attached is deleted (its attachment kept, as a guard that the lookup leaves deleted media out).
 */
async function attachImages(ownerType: MediaOwnerType, owners: number) {
  await t.sql(
    `with owners as (select gen_random_uuid() as id, n from generate_series(1, $2::int) as n),
          assets as (
            insert into media_asset (id, created_at_utc, uploaded_by_user_id, media_type, mime_type, size_bytes, duration_seconds, storage_key, deleted_at_utc)
            select gen_random_uuid(), now(), $3, 'IMAGE', 'image/png', 68, null, 'test/' || o.id || '/' || k, case when k = 0 and o.n % 10 = 0 then now() end
              from owners o cross join generate_series(0, 2) as k
            returning id, storage_key)
     insert into media_attachment (id, created_at_utc, media_asset_id, owner_type, owner_id, display_order)
     select gen_random_uuid(), now(), a.id, $1, split_part(a.storage_key, '/', 2)::uuid, 2 - split_part(a.storage_key, '/', 3)::int from assets a`,
    [ownerType, owners, uploaderId],
  );
  await t.sql('vacuum analyze media_asset, media_attachment');
}

beforeAll(async () => {
  t = await createTestApp();
  uploaderId = (await newUser(t)).id;
  // As on the bench: posts with media all over the map, and no item, event or chat message with any yet.
  await attachImages('POST', 6000);
});
afterAll(() => t.close());

describe("an owner page's live media (liveMediaQuery: mediaUrlsOf, the journeys' media)", () => {
  it('a named statement per owner type that keeps a generic plan (planned once per connection, not per call)', async () => {
    // One connection, so each statement's plan cache is one: PostgreSQL tries five custom plans, then keeps the
    // generic one only if it costs no more. With the owner type as a parameter it never did here (0 of 50 on the
    // bench's data): its generic plan was costed for the posts' attachments, the only type there, and an item page's
    // custom plans for none.
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      // Item, event and chat pages first, as when a process's first calls are an item search's.
      for (const ownerType of [...MEDIA_OWNER_TYPES].reverse()) {
        const owners = await ownersOf(ownerType);
        for (let i = 0; i < 10; i++) await runPreparedOnPool(pool, liveMediaQuery(ownerType, owners));
      }
      const { rows } = await pool.query<{ generic_plans: string; custom_plans: string }>(
        `select generic_plans, custom_plans from pg_prepared_statements where statement like '%media_attachment%'`,
      );
      expect(rows.map((r) => [Number(r.custom_plans), Number(r.generic_plans)])).toEqual(MEDIA_OWNER_TYPES.map(() => [5, 5]));
    } finally {
      await pool.end();
    }
    // That plan reads the owners' keys in the (owner type, owner) index.
    for (const ownerType of MEDIA_OWNER_TYPES) {
      const nodes = await genericPlanOf(t, liveMediaQuery(ownerType, await ownersOf(ownerType)));
      expect(
        nodes.some((n) => n['Index Name'] === 'media_attachment_owner_type_owner_id_display_order_index'),
        planSummary(nodes),
      ).toBe(true);
      expect(
        nodes.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']),
        planSummary(nodes),
      ).toEqual([]);
    }
  });

  it("answers each owner's live media of that type in display order, deleted ones left out", async () => {
    await attachImages('ITEM', 3);
    await attachImages('EVENT', 40);
    await attachImages('CHAT_MESSAGE', 40);
    const pool = new pg.Pool({ connectionString: t.databaseUrl, max: 1 });
    try {
      for (const ownerType of MEDIA_OWNER_TYPES) {
        const owners = await ownersOf(ownerType, 30);
        const rows = await runPreparedOnPool<LiveMediaRow>(pool, liveMediaQuery(ownerType, [...owners, owners[0]!]));
        const expected = await t.sql<LiveMediaRow>(
          `select a.owner_id, m.id, m.media_type from media_attachment a join media_asset m on m.id = a.media_asset_id
            where a.owner_type = $1 and a.owner_id = any($2::uuid[]) and m.deleted_at_utc is null order by a.owner_id, a.display_order`,
          [ownerType, owners],
        );
        expect(rows).toEqual(expected);
        // Every owner with media is answered; those that lost one of their three keep two.
        const perOwner = Object.values(Object.groupBy(rows, (r) => r.owner_id)).map((r) => r!.length);
        expect(perOwner).toHaveLength(ownerType === 'ITEM' ? 3 : 30);
        expect(new Set(perOwner)).toEqual(new Set(ownerType === 'ITEM' ? [3] : [2, 3]));
      }
    } finally {
      await pool.end();
    }
  });
});
