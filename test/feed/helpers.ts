import { newId } from '../../src/platform/ids.js';
import { newMapEntity, newPost } from '../factories/content.js';
import type { TestUser } from '../factories/index.js';
import { multipartBody } from '../factories/multipart.js';
import type { TestApp } from '../setup/test-app.js';

export interface FeedItem {
  id: string;
  territoryId: string;
  title: string;
  content: string;
  type: string;
  visibility: string;
  status: string;
  tags: string[];
  mapEntityId: string | null;
  assetIds: string[];
  likeCount: number;
  commentCount: number;
  shareCount: number;
  likedByMe: boolean;
  mediaUrls: string[];
  event: { id: string; title: string; startsAtUtc: string; status: string } | null;
  author: { id: string; displayName: string };
  createdAtUtc: string;
  updatedAtUtc: string;
}

export { UNKNOWN_ID } from '../factories/index.js';

/** POST /api/v1/feed as the user (territoryId in the body unless the body says otherwise). */
export function createPost(t: TestApp, user: TestUser, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'POST', url: '/api/v1/feed', headers: { ...user.headers, ...headers }, payload: body });
}

/** Creates a post that must succeed and returns it. */
export async function postOk(t: TestApp, user: TestUser, territoryId: string, body: Record<string, unknown> = {}): Promise<FeedItem> {
  const res = await createPost(t, user, { territoryId, title: 'A title', content: 'Some content', ...body });
  if (res.statusCode !== 201) throw new Error(`post creation failed: ${res.statusCode} ${res.body}`);
  return res.json() as FeedItem;
}

export async function feedIds(t: TestApp, user: TestUser, query: string): Promise<string[]> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/feed?${query}`, headers: user.headers });
  if (res.statusCode !== 200) throw new Error(`feed read failed: ${res.statusCode} ${res.body}`);
  return (res.json() as FeedItem[]).map((p) => p.id);
}

/** Uploads a media file through the real endpoint; returns its id. */
export async function uploadMedia(t: TestApp, user: TestUser, fileName: string, bytes: Buffer): Promise<{ id: string; url: string }> {
  const body = multipartBody([{ field: 'file', fileName, bytes }]);
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/media/upload', headers: { ...user.headers, ...body.headers }, payload: body.payload });
  if (res.statusCode !== 201) throw new Error(`upload failed: ${res.statusCode} ${res.body}`);
  return res.json() as { id: string; url: string };
}

/** A post row written directly (statuses clients cannot produce, bulk data). */
export function insertPost(
  t: TestApp,
  opts: { territoryId: string; authorUserId: string; status?: string; visibility?: string; title?: string; createdAt?: Date },
): Promise<string> {
  return newPost(t, { ...opts, title: opts.title ?? 'Inserted' });
}

export async function addModerationRule(t: TestApp, territoryId: string, ruleType: string, name: string, config: unknown, isActive = true) {
  await t.sql(
    `insert into territory_moderation_rule (id, created_at_utc, updated_at_utc, territory_id, rule_type, name, config, is_active)
     values ($1, now(), now(), $2, $3, $4, $5, $6)`,
    [newId(), territoryId, ruleType, name, JSON.stringify(config), isActive],
  );
}

/** A map entity row of the territory (the map domain's table), for posts that reference one. */
export function insertMapEntity(t: TestApp, territoryId: string, createdByUserId: string, status = 'VALIDATED'): Promise<string> {
  return newMapEntity(t, { territoryId, createdByUserId, name: 'Square', category: 'public space', latitude: -23.55, longitude: -46.63, status });
}

/** A territory asset row (the assets domain's table), for posts that reference one. */
export async function insertAsset(t: TestApp, territoryId: string, createdByUserId: string, status = 'Active'): Promise<string> {
  const id = newId();
  await t.sql(
    `insert into territory_asset (id, created_at_utc, updated_at_utc, territory_id, created_by_user_id, type, name, geo_anchors, status)
     values ($1, now(), now(), $2, $3, 'natural', 'River', $4, $5)`,
    [id, territoryId, createdByUserId, JSON.stringify([{ latitude: -23.55, longitude: -46.63 }]), status],
  );
  return id;
}
