import { newId } from '../../src/platform/ids.js';
import { newEvent, newMapEntity, newPost } from '../factories/content.js';
import type { TestUser } from '../factories/index.js';
import type { TestApp } from '../setup/test-app.js';

/**
 * Rows of the tables the map reads, written directly: the map tests do not depend on the feed, events, alerts
 * and media services (their own tests cover how those rows are created).
 */
type Territory = { id: string };

let clockMs = Date.UTC(2030, 0, 1);
/** Strictly increasing creation times, so "newest first" orders are predictable. */
const nextTime = () => new Date((clockMs += 1000));

export function insertEntity(
  t: TestApp,
  territory: Territory,
  author: TestUser,
  opts: { name?: string; latitude?: number; longitude?: number; visibility?: string; status?: string } = {},
) {
  return newMapEntity(t, { ...opts, territoryId: territory.id, createdByUserId: author.id, createdAt: nextTime() });
}

export function insertPost(
  t: TestApp,
  territory: Territory,
  author: TestUser,
  opts: { title?: string; mapEntityId?: string | null; visibility?: string; status?: string; type?: string } = {},
) {
  return newPost(t, { ...opts, territoryId: territory.id, authorUserId: author.id, createdAt: nextTime() });
}

export function insertEvent(
  t: TestApp,
  territory: Territory,
  author: TestUser,
  opts: { title?: string; latitude?: number; longitude?: number; status?: string; startsAt?: Date } = {},
) {
  const createdAt = nextTime();
  return newEvent(t, { ...opts, territoryId: territory.id, createdByUserId: author.id, createdAt, startsAt: opts.startsAt ?? nextTime() });
}

export async function insertAlert(
  t: TestApp,
  territory: Territory,
  author: TestUser,
  opts: { title?: string; latitude?: number | null; longitude?: number | null; status?: string } = {},
) {
  const id = newId();
  await t.sql(
    `insert into alert (id, created_at_utc, territory_id, title, description, latitude, longitude, status, reported_by_user_id)
     values ($1, $2, $3, $4, 'description', $5, $6, $7, $8)`,
    [
      id,
      nextTime(),
      territory.id,
      opts.title ?? `Alert ${id.slice(-4)}`,
      opts.latitude === undefined ? -23.53 : opts.latitude,
      opts.longitude === undefined ? -46.63 : opts.longitude,
      opts.status ?? 'VALIDATED',
      author.id,
    ],
  );
  return id;
}

export async function insertAsset(
  t: TestApp,
  territory: Territory,
  author: TestUser,
  opts: { name?: string; type?: string; subtype?: string | null; status?: string; anchors?: { latitude: number; longitude: number }[] } = {},
) {
  const id = newId();
  const time = nextTime();
  await t.sql(
    `insert into territory_asset (id, created_at_utc, territory_id, created_by_user_id, type, subtype, name, geo_anchors, status, validation_count, updated_at_utc)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0, $2)`,
    [
      id,
      time,
      territory.id,
      author.id,
      opts.type ?? 'natural',
      opts.subtype === undefined ? 'river' : opts.subtype,
      opts.name ?? `Asset ${id.slice(-4)}`,
      JSON.stringify(opts.anchors ?? [{ latitude: -23.54, longitude: -46.64 }]),
      opts.status ?? 'Active',
    ],
  );
  return id;
}

/** A media asset attached to a post or an event. */
export async function insertMedia(
  t: TestApp,
  owner: { type: 'POST' | 'EVENT'; id: string },
  uploader: TestUser,
  opts: { title?: string | null; deleted?: boolean } = {},
) {
  const id = newId();
  const time = nextTime();
  await t.sql(
    `insert into media_asset (id, created_at_utc, uploaded_by_user_id, media_type, mime_type, size_bytes, storage_key, title, deleted_at_utc)
     values ($1, $2, $3, 'IMAGE', 'image/png', 68, $4, $5, $6)`,
    [id, time, uploader.id, `test/${id}`, opts.title ?? null, opts.deleted ? time : null],
  );
  await t.sql(`insert into media_attachment (id, created_at_utc, media_asset_id, owner_type, owner_id, display_order) values ($1, $2, $3, $4, $5, 0)`, [
    newId(),
    time,
    id,
    owner.type,
    owner.id,
  ]);
  return id;
}

export const block = (t: TestApp, blocker: TestUser, blocked: TestUser) =>
  t.sql(`insert into user_block (id, created_at_utc, blocker_user_id, blocked_user_id) values ($1, now(), $2, $3)`, [newId(), blocker.id, blocked.id]);
